// Where the cursor is in a JSON or YAML document, as the syntax tree of the editor says: the path
// of keys and indices from the document's root, and whether a key or a value is being typed
// there. Completion and hover docs ask the language's schema about that path (schema.js).
import { ensureSyntaxTree, syntaxTree } from '@codemirror/language'

const PAIRS = new Set(['Pair', 'Property'])
const KEYS = new Set(['Key', 'PropertyName'])
const SEQUENCE_PARTS = new Set(['FlowSequence', 'BlockSequence', 'Item'])
const VALUE_NODES = new Set(['Object', 'Array', 'String', 'Number', 'True', 'False', 'Null'])

/** The text of a key or scalar node as the document means it (quotes removed). */
export const scalarText = (state, node) => unquote(state.sliceDoc(node.from, node.to))

/** A key's text without its JSON or YAML quotes. */
function unquote(written) {
  const text = written.trim()
  if (text.startsWith('"')) {
    try {
      return JSON.parse(text)
    } catch {
      return text.slice(1, text.endsWith('"') && text.length > 1 ? -1 : undefined)
    }
  }
  if (text.startsWith("'")) return text.slice(1, text.endsWith("'") && text.length > 1 ? -1 : undefined).replace(/''/g, "'")
  return text
}

/** The syntax tree, parsed up to `pos` at least (a large document is parsed lazily). */
export function treeUpTo(state, pos) {
  return ensureSyntaxTree(state, Math.min(state.doc.length, pos + 1), 100) ?? syntaxTree(state)
}

/** A key and its colon, then nothing but spaces up to the cursor (group 1: what precedes the key). */
const EMPTY_VALUE = /(^\s*(?:-\s+)*|[{,]\s*)("(?:[^"\\]|\\.)*"|'[^']*'|[^\s:{},[\]#'"][^:{},[\]#]*?)\s*:\s*$/

/** The index of the element of a sequence (YAML) or an array (JSON) that holds `pos`. */
function elementIndex(sequence, pos) {
  let index = 0
  for (let child = sequence.firstChild; child !== null; child = child.nextSibling) {
    if (sequence.name === 'Array') {
      if (!VALUE_NODES.has(child.name) && child.name !== '⚠') continue
    } else if (child.name !== 'Item') {
      continue
    }
    if (child.to >= pos && child.from <= pos) return index
    if (child.from > pos) return index
    index++
  }
  return index
}

/**
 * The path of the place at `pos` and what is typed there:
 * - `key`: a member's name, in the object at `path`;
 * - `value`: the value at `path` (the member's key is the path's last element);
 * - `either`: a YAML word alone at the start of a line, which becomes a key when a colon follows
 *   and is a value until then: the value at `path`, or a key of an object there.
 */
export function placeAt(state, pos, format) {
  // Right after `key:` (nothing typed yet, as on Ctrl+Space): the value of that key.
  const line = state.doc.lineAt(pos)
  const empty = EMPTY_VALUE.exec(state.sliceDoc(line.from, pos))
  if (empty !== null) {
    const keyFrom = line.from + empty.index + empty[1].length
    const holder = placeAt(state, keyFrom + 1, format)
    return { path: [...holder.path, unquote(empty[2])], role: 'value' }
  }
  const tree = treeUpTo(state, pos)
  const path = []
  let role = 'value'
  let innermost = true
  for (let node = tree.resolveInner(pos, -1); node !== null; node = node.parent) {
    if (PAIRS.has(node.name)) {
      const key = node.firstChild !== null && KEYS.has(node.firstChild.name) ? node.firstChild : null
      const colon = node.getChild(':')
      if (key !== null && (colon === null || pos <= key.to)) {
        // A word without its colon in a YAML list (`[up`) is an element, or the key of a one-pair map.
        // (An implicit one-pair map, without braces, starts where its pair does.)
        const holder = node.parent?.name === 'FlowMapping' && node.parent.from === node.from ? node.parent.parent : node.parent
        if (innermost) role = colon === null && SEQUENCE_PARTS.has(holder?.name) ? 'either' : 'key'
      } else if (key !== null) {
        path.push(scalarText(state, key))
      }
      innermost = false
    } else if (node.name === 'BlockSequence' || node.name === 'FlowSequence' || node.name === 'Array') {
      path.push(elementIndex(node, pos))
      innermost = false
    } else if (node.name === 'Object' || node.name === 'BlockMapping' || node.name === 'FlowMapping') {
      // Inside an object but in no member yet (after `{` or `,` in JSON, a word in a block map).
      if (innermost) role = 'key'
      innermost = false
    }
  }
  path.reverse()
  if (role !== 'key' && format === 'yaml') {
    // YAML: a word alone on its line (after the indentation and any `- `) is a key being typed.
    if (/^\s*(-\s+)*[^\s:{}[\],"'#-][^:{}[\],#]*$/.test(state.sliceDoc(line.from, pos))) role = 'either'
  }
  return { path, role }
}

/** The key node at `pos` (a YAML Key, a JSON PropertyName) and the path of the object holding it. */
export function keyAt(state, pos, format) {
  const tree = treeUpTo(state, pos)
  let node = tree.resolveInner(pos, 1)
  while (node !== null && !KEYS.has(node.name)) node = node.parent
  if (node === null || node.parent === null) return null
  const { path } = placeAt(state, node.from, format)
  return { node, key: scalarText(state, node), path }
}
