// Where a JSON pointer into a document file lands in its text: the line and column an editor can
// jump to, for the diagnostics of a mapping file (JSON is read as YAML here: the `yaml` parser
// keeps the source range of every node, and JSON is a subset of the YAML it reads).
import { readFileSync, statSync } from 'node:fs'
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml'
import { escapeToken, parsePointer } from '../engine/index.js'
import { DOCUMENT_EXTENSIONS, extensionOf } from './files.js'

export interface Position {
  readonly line: number
  readonly column: number
}

/** The reference tokens of a diagnostic's pointer; none for one that does not parse. */
function tokensOf(pointer: string): readonly string[] | undefined {
  try {
    return parsePointer(pointer)
  } catch {
    return undefined
  }
}

/** A map key as the parsed document names it. */
const keyName = (key: unknown): string | undefined => (isScalar(key) ? String(key.value) : typeof key === 'string' ? key : undefined)

/**
 * A locator for one file's text: `at(pointer)` is the position of the node the pointer names, or
 * of the deepest node on its way that exists (a pointer to a member that is absent lands on the
 * object that lacks it); undefined when the text does not parse.
 */
export function locator(text: string): { at(pointer: string): Position | undefined; member(id: string): string } {
  const lineCounter = new LineCounter()
  const document = parseDocument(text, { lineCounter, uniqueKeys: false })
  const broken = document.errors.length > 0
  return {
    /** The pointer of the compound document's member with `$id` id (`/mappings/<key>`), or '' for a single document. */
    member(id: string): string {
      const mappings = isMap(document.contents) ? document.contents.get('mappings', true) : undefined
      if (!isMap(mappings)) return ''
      for (const item of mappings.items) {
        if (isMap(item.value) && item.value.get('$id') === id) {
          return `/mappings/${escapeToken(keyName(item.key) ?? '')}`
        }
      }
      return ''
    },
    at(pointer: string): Position | undefined {
      if (broken) return undefined
      let node: unknown = document.contents
      let found: Node | undefined = isScalar(node) || isMap(node) || isSeq(node) ? node : undefined
      for (const token of tokensOf(pointer) ?? []) {
        let next: unknown
        if (isMap(node)) {
          const pair = node.items.find((item) => isPair(item) && keyName(item.key) === token)
          // A member with no value (`key:` in YAML) lands on its key.
          next = pair === undefined ? undefined : (pair.value ?? pair.key)
        } else if (isSeq(node) && /^(0|[1-9]\d*)$/.test(token)) {
          next = node.items[Number(token)]
        }
        if (!(isScalar(next) || isMap(next) || isSeq(next))) break
        node = next
        found = next
      }
      const start = found?.range?.[0]
      if (start === undefined) return undefined
      const { line, col } = lineCounter.linePos(start)
      return { line, column: col }
    },
  }
}

/**
 * The largest file `placeInFile` reads again: a reload validates on the event loop, and parsing a
 * file with source ranges costs about what its first parse (in a thread) did.
 */
const PLACED_MAX_BYTES = 256 * 1024

/**
 * `file:line:column` of a diagnostic's pointer in the mapping `id` of a document file (a compound
 * file's member found by its `$id`); undefined when the source is not a document file that can be
 * read and parsed, or is larger than PLACED_MAX_BYTES. Read on the failure path only.
 */
export function placeInFile(file: string, id: string, pointer: string): string | undefined {
  if (!DOCUMENT_EXTENSIONS.has(extensionOf(file))) return undefined
  let text: string
  try {
    if (statSync(file).size > PLACED_MAX_BYTES) return undefined
    text = readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
  const positions = locator(text.startsWith('\uFEFF') ? text.slice(1) : text)
  const position = positions.at(positions.member(id) + pointer)
  return position === undefined ? undefined : `${file}:${position.line}:${position.column}`
}
