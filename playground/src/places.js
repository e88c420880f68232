// Reading the editors' text, and placing a JSON Pointer or a syntax error in it. A pointer lands
// where the CLI places it (`mapper-service validate` prints file:line:column): sources/positions.ts
// is bundled into the page as it is. A JSON text stops being JSON where the service says it does
// (sources/json-syntax.ts); YAML syntax errors are the `yaml` package's own, as for the CLI.
import { isAlias, isMap, isScalar, isSeq, parseDocument } from 'yaml'
import { locator } from '../../sources/positions.ts'
import { jsonSyntaxProblem } from '../../sources/json-syntax.ts'
import { scalarText, treeUpTo } from './context.js'

/** `json` when the text starts as a JSON object or array does, else `yaml`. */
export const detectFormat = (text) => (/^\s*[[{]/.test(text) ? 'json' : 'yaml')

/**
 * A text as a JSON value, or the syntax problem that keeps it from being one:
 * `{ value }` or `{ problem: { message, from, to } }` (offsets into the text).
 */
export function parseText(text, format) {
  if (format === 'json') {
    try {
      return { value: JSON.parse(text) }
    } catch (error) {
      const problem = jsonSyntaxProblem(text)
      if (problem === undefined) return { problem: { message: error.message, from: 0, to: 0 } }
      const from = offsetOf(text, problem.line, problem.column)
      return { problem: { message: `not JSON: ${problem.description} (line ${problem.line}, column ${problem.column})`, from, to: Math.min(from + 1, text.length) } }
    }
  }
  const document = parseDocument(text, { uniqueKeys: true })
  if (document.errors.length > 0) {
    const [first] = document.errors
    const from = first.pos?.[0] ?? 0
    const line = first.linePos?.[0]
    const where = line === undefined ? '' : ` (line ${line.line}, column ${line.col})`
    const message = first.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')
    return { problem: { message: `not YAML: ${message}${where}`, from: Math.min(from, text.length), to: Math.min(Math.max(first.pos?.[1] ?? from, from + 1), text.length) } }
  }
  return { value: document.toJS({ maxAliasCount: 100 }) }
}

/** The document as far as it parses, for completion (a text being typed rarely parses whole). */
export function parseLoosely(text) {
  try {
    return JSON.parse(text)
  } catch {
    try {
      return parseDocument(text).toJS({ maxAliasCount: 100 })
    } catch {
      return undefined
    }
  }
}

function offsetOf(text, line, column) {
  let offset = 0
  for (let i = 1; i < line; i++) {
    const next = text.indexOf('\n', offset)
    if (next === -1) return text.length
    offset = next + 1
  }
  return Math.min(offset + column - 1, text.length)
}

const unescapeToken = (token) => token.replace(/~1/g, '/').replace(/~0/g, '~')

/** Whether the pointer names a member the value holds (not only the nearest one on its way). */
export function holds(value, pointer) {
  if (pointer === '') return true
  if (typeof pointer !== 'string' || !pointer.startsWith('/')) return false
  let node = value
  for (const token of pointer.slice(1).split('/').map(unescapeToken)) {
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < node.length) node = node[Number(token)]
    else if (node !== null && typeof node === 'object' && !Array.isArray(node) && Object.hasOwn(node, token)) node = node[token]
    else return false
  }
  return true
}

const MEMBER_NODES = new Set(['Pair', 'Property'])
const BLOCK_NODES = new Set(['BlockMapping', 'BlockSequence'])
const TOP_NODES = new Set(['Document', 'JsonText', 'Stream'])

/**
 * Where a pointer lands in an editor's text: `{ line, column, from, to }` or null. `from` is the
 * CLI's place (the value, or the object that lacks an absent member); `from`–`to` covers the member
 * (its key and value) when the place is a member's value, else the value, and stops at the end of
 * its first line, so a squiggle marks one line.
 */
export function place(state, pointer, places = locator(state.doc.toString())) {
  if (typeof pointer !== 'string') return null
  const position = places.at(pointer)
  if (position === undefined) return null
  const line = state.doc.line(Math.min(position.line, state.doc.lines))
  const at = Math.min(line.from + position.column - 1, line.to)
  const tree = treeUpTo(state, at)
  let node = tree.resolveInner(at, 1)
  // The value that starts here: the largest node starting here (a scalar, an object's braces, a
  // block map's first member), or the block map or list that holds it (whose node starts at the end
  // of its key's line)…
  while (node.parent !== null && node.parent.from === at && !TOP_NODES.has(node.parent.name)) node = node.parent
  if (node.parent !== null && BLOCK_NODES.has(node.parent.name) && state.sliceDoc(node.parent.from, at).trim() === '') node = node.parent
  let from = Math.min(node.from, at)
  let to = Math.max(node.to, at + 1)
  // …and its member, when it is a member's value: `as: integer`, `"as": "integer"`, `/c:`.
  const member = node.parent !== null && MEMBER_NODES.has(node.parent.name) ? node.parent : null
  if (member !== null && member.firstChild !== null && member.firstChild.from < at) {
    from = member.from
    to = Math.max(to, member.to)
  }
  if (pointer === '') {
    from = 0
    to = state.doc.lineAt(0).to
  }
  to = Math.min(to, state.doc.lineAt(from).to, state.doc.length)
  if (to <= from) to = Math.min(from + 1, state.doc.length)
  return { line: position.line, column: position.column, from, to }
}

/** The whole member a pointer names (key through value, every line), for a highlight. */
export function memberRange(state, pointer, places = locator(state.doc.toString())) {
  const found = place(state, pointer, places)
  if (found === null) return null
  if (pointer === '') return { from: 0, to: state.doc.length }
  const tree = treeUpTo(state, found.from)
  let node = tree.resolveInner(found.from, 1)
  while (node.parent !== null && !MEMBER_NODES.has(node.name) && node.from >= found.from) node = node.parent
  if (MEMBER_NODES.has(node.name)) return { from: node.from, to: trimEnd(state, node.to) }
  return { from: found.from, to: trimEnd(state, Math.max(found.to, node.to)) }
}

/** Where a value's text ends without the line breaks a YAML block carries after it. */
function trimEnd(state, to) {
  let end = Math.min(to, state.doc.length)
  while (end > 0 && /\s/.test(state.sliceDoc(end - 1, end))) end--
  return end
}

/** The key of the member starting at `from`, if one does (for messages). */
export function keyNameAt(state, from) {
  const tree = treeUpTo(state, from)
  const node = tree.resolveInner(from, 1)
  return node.name === 'Key' || node.name === 'PropertyName' ? scalarText(state, node) : undefined
}

/**
 * A YAML or JSON text from a value, keys in the order the value holds them. YAML is written in
 * block style (flow only for empty collections), strings plain where YAML reads them back as the
 * same string.
 */
export function textOf(value, format) {
  if (format === 'json') return `${JSON.stringify(value, null, 2)}\n`
  const document = parseDocument(JSON.stringify(value))
  blockStyle(document.contents)
  return document.toString({ lineWidth: 0 })
}

/** Every collection in block style, every string scalar in the plainest style that reads back the same. */
function blockStyle(node) {
  if (isMap(node) || isSeq(node)) {
    node.flow = node.items.length === 0
    for (const item of node.items) {
      if (isMap(node)) {
        if (isScalar(item.key)) item.key.type = undefined
        blockStyle(item.value)
      } else {
        blockStyle(item)
      }
    }
  } else if (isScalar(node) && typeof node.value === 'string') {
    node.type = undefined
  }
}

/** Converts a mapping text between JSON and YAML, keeping its keys' written order. */
export function convert(text, from, to) {
  if (from === to) return { text }
  const document = parseDocument(text, { uniqueKeys: true })
  if (document.errors.length > 0) return { problem: `The ${from.toUpperCase()} does not parse: ${document.errors[0].message.split('\n')[0]}` }
  if (to === 'json') return { text: `${jsonText(document.contents, document, '')}\n` }
  blockStyle(document.contents)
  // Comments do not survive JSON; YAML to YAML is not asked for.
  return { text: document.toString({ lineWidth: 0 }) }
}

/** JSON text of a YAML node, walking the parsed tree so that keys stay in written order. */
function jsonText(node, document, indent) {
  if (node === null || node === undefined) return 'null'
  if (isAlias(node)) return jsonText(node.resolve(document), document, indent)
  const inner = `${indent}  `
  if (isMap(node)) {
    if (node.items.length === 0) return '{}'
    const members = node.items.map((pair) => {
      const key = isScalar(pair.key) ? pair.key.value : pair.key
      return `${inner}${JSON.stringify(String(key))}: ${jsonText(pair.value, document, inner)}`
    })
    return `{\n${members.join(',\n')}\n${indent}}`
  }
  if (isSeq(node)) {
    if (node.items.length === 0) return '[]'
    return `[\n${node.items.map((item) => `${inner}${jsonText(item, document, inner)}`).join(',\n')}\n${indent}]`
  }
  const value = isScalar(node) ? node.toJSON() : node
  const text = JSON.stringify(value === undefined ? null : value)
  return text === undefined ? 'null' : text
}
