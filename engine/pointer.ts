// The JSON Pointer profile of the language (language.md §3): parsing, reads, recovering writes and
// relative path arithmetic. Pointers are parsed once, when a document is compiled; the closures
// returned here do the per-run work.
import { DocumentError, DocumentSyntaxError, DocumentURIError } from './errors.js'

/** A pointer parsed into its reference tokens. */
export type Tokens = readonly string[]

/**
 * A host error the language raises for what a document meets in its input (writing through a
 * primitive the input supplied): a TypeError, as the language has it, that a host can tell apart
 * from an extension's failure.
 */
export class EvaluationError extends TypeError {
  readonly code = 'EvaluationError'
}

/** A fragment's percent-decoding; a malformed escape is the caller's document's error (its message kept). */
function decodeFragment(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch (error) {
    throw new DocumentURIError((error as Error).message)
  }
}

/** Parse a pointer expression (slash or `#` fragment form). Throws the host errors of §3.1 (typed: `DocumentError`, `DocumentSyntaxError`, `DocumentURIError`). */
export function parsePointer(expression: unknown): Tokens {
  if (typeof expression !== 'string') throw new DocumentError('JSON Pointer must be a string')
  let text = expression
  if (text.startsWith('#')) text = decodeFragment(text.slice(1))
  if (text === '') return []
  if (!text.startsWith('/')) throw new DocumentSyntaxError(`Invalid JSON Pointer ${expression}`)
  const tokens = text.slice(1).split('/')
  // Most pointers have no escape: no regular expression runs for them.
  if (text.includes('~')) for (let i = 0; i < tokens.length; i++) tokens[i] = tokens[i]!.replace(/~1/g, '/').replace(/~0/g, '~')
  return tokens
}

/** Escape one reference token for use in a pointer (`~` → `~0`, `/` → `~1`). */
export function escapeToken(token: string): string {
  // Most tokens need no escape: no regular expression runs for them.
  if (!token.includes('~') && !token.includes('/')) return token
  return token.replace(/~/g, '~0').replace(/\//g, '~1')
}

/** True when a slash-form pointer has a `..` segment (PTR-9). */
export function hasDotDotSegment(pointer: string): boolean {
  return pointer.includes('..') && pointer.split('/').includes('..')
}

const CANONICAL_INDEX = /^(?:0|[1-9][0-9]*)$/

/** A canonical non-negative array index: `0`, or a digit 1–9 followed by digits (`01` is not). */
export function isArrayIndex(token: string): boolean {
  return CANONICAL_INDEX.test(token)
}

// Names that a plain property access would find on a prototype rather than on the value itself.
// Reads of these tokens take the slow, own-property path; every other token is safe to read with
// a plain property access, because JSON objects and arrays carry no own member of another name.
// Function.prototype's names (`name`, `call`, ...) are not among them: a read walks objects and
// arrays only (a function is never traversed), whose prototypes do not have them, so `/name`, a
// common token, reads as any other.
const INHERITED = new Set<string>([...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Array.prototype)])

/** True when a plain property access could find `token` on a prototype (reads take readToken's own-property path). */
export function isInherited(token: string): boolean {
  return INHERITED.has(token)
}

/** Read one token from a value: own properties of objects, canonical indices of arrays, else undefined. */
export function readToken(current: unknown, token: string): unknown {
  if (current === null || typeof current !== 'object') return undefined
  if (!INHERITED.has(token)) return (current as Record<string, unknown>)[token]
  if (Array.isArray(current)) return isArrayIndex(token) ? current[Number(token)] : undefined
  return Object.hasOwn(current, token) ? (current as Record<string, unknown>)[token] : undefined
}

/** A compiled read: document → value at the pointer, or undefined when the location does not exist. */
export type Reader = (document: unknown) => unknown

const readWhole: Reader = (document) => document

/**
 * Compile READ-POINTER (§3.2). An empty pointer and every pointer whose first token is empty denote
 * the whole document. Falsy values and non-containers are never traversed (decision 11).
 */
export function compileReader(tokens: Tokens): Reader {
  if (tokens.length === 0 || tokens[0] === '') return readWhole
  if (tokens.length === 1) {
    const [a] = tokens as [string]
    if (INHERITED.has(a)) return (d) => readToken(d, a)
    return (d) => (d !== null && typeof d === 'object' ? (d as Record<string, unknown>)[a] : undefined)
  }
  if (tokens.length === 2 && !INHERITED.has(tokens[0]!) && !INHERITED.has(tokens[1]!)) {
    const [a, b] = tokens as [string, string]
    return (d) => {
      if (d === null || typeof d !== 'object') return undefined
      const v = (d as Record<string, unknown>)[a]
      return v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[b] : undefined
    }
  }
  return (d) => {
    let current = d
    for (const token of tokens) {
      current = readToken(current, token)
      if (current === undefined) return undefined
    }
    return current
  }
}

/** Parse and read in one step (for pointers that arrive at run time, such as a transformer's operand). */
export function readPointer(document: unknown, pointer: string): unknown {
  return compileReader(parsePointer(pointer))(document)
}

/**
 * Path arithmetic of relative references (§3.6): join the parts with `/`, drop empty and `.`
 * segments, let `..` remove the last kept segment, and return an absolute pointer.
 */
export function resolvePath(...parts: string[]): string {
  const kept: string[] = []
  for (const segment of parts.join('/').replace(/\\/g, '/').split('/')) {
    if (segment === '' || segment === '.') continue
    if (segment === '..') kept.pop()
    else kept.push(segment)
  }
  return '/' + kept.join('/')
}

/**
 * Tells a write whether a container already in the target came from outside the engine (the
 * input, the document, an extension). Such a container is copied before anything is written
 * through it (decision 12: evaluation never mutates the input or the document).
 */
export interface WriteOwnership {
  isForeign(container: object): boolean
  adopt(copy: object): void
}

/**
 * Writes a value at a pointer. Returns undefined, or the message of a write the profile refuses
 * (PTR-6, decision 2), in which case nothing was written.
 */
export type Writer = (target: object, value: unknown, ownership: WriteOwnership | null) => string | undefined

export const ARRAY_INDEX_MESSAGE = 'array index must be a non-negative integer or -'

function setOwn(container: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(container, key, { value, writable: true, enumerable: true, configurable: true })
  } else {
    container[key] = value
  }
}

function describePrimitive(value: unknown): string {
  return `${typeof value} '${String(value)}'`
}

function shallowCopy(value: object): object {
  if (Array.isArray(value)) return value.slice()
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(value)) setOwn(copy, key, (value as Record<string, unknown>)[key])
  return copy
}

function ownChild(container: object, token: string): unknown {
  if (Array.isArray(container)) return isArrayIndex(token) ? container[Number(token)] : undefined
  return Object.hasOwn(container, token) ? (container as Record<string, unknown>)[token] : undefined
}

/**
 * Compile SET (§3.4): recovering writes that create missing containers (an array when the next
 * token is `-` or an index), splice insertion into arrays, `-` append and index clamping. Writing
 * undefined does nothing. Every property is written as an own data property, so no pointer can
 * reach a prototype.
 */
export function compileWriter(tokens: Tokens): Writer {
  if (tokens.length === 0) return () => undefined
  const last = tokens[tokens.length - 1]!
  const lastIsIndex = isArrayIndex(last)
  const lastIndex = lastIsIndex ? Number(last) : -1
  const intermediate = tokens.slice(0, -1)
  const nextIsArray = tokens.slice(1).map((t) => t === '-' || isArrayIndex(t))

  const writeLast = (container: object, value: unknown): string | undefined => {
    if (Array.isArray(container)) {
      if (last === '-') container.push(value)
      else if (!lastIsIndex) return ARRAY_INDEX_MESSAGE
      else if (lastIndex >= container.length) container.push(value)
      else container.splice(lastIndex, 0, value)
      return undefined
    }
    setOwn(container as Record<string, unknown>, last, value)
    return undefined
  }

  if (intermediate.length === 0 && last !== '__proto__') {
    // The common case: one token written into a level's own target object.
    return (target, value) => {
      if (value === undefined) return undefined
      if (Array.isArray(target)) return writeLast(target, value)
      ;(target as Record<string, unknown>)[last] = value
      return undefined
    }
  }

  const generic: Writer = (target, value, ownership) => {
    if (value === undefined) return undefined
    let current: object = target
    for (let i = 0; i < intermediate.length; i++) {
      const token = intermediate[i]!
      const isArray = Array.isArray(current)
      if (isArray && token !== '-' && !isArrayIndex(token)) return ARRAY_INDEX_MESSAGE
      const existing = isArray && token === '-' ? undefined : ownChild(current, token)
      if (existing !== null && typeof existing === 'object') {
        let next: object = existing
        if (ownership !== null && ownership.isForeign(existing)) {
          next = shallowCopy(existing)
          ownership.adopt(next)
          if (isArray) (current as unknown[])[Number(token)] = next
          else setOwn(current as Record<string, unknown>, token, next)
        }
        current = next
        continue
      }
      if (existing) {
        // A truthy primitive cannot hold properties (PTR-7, pinned by the write-through probe).
        throw new EvaluationError(`Cannot create property '${tokens[i + 1]}' on ${describePrimitive(existing)}`)
      }
      const created: object = nextIsArray[i] ? [] : {}
      if (isArray) {
        const list = current as unknown[]
        if (token === '-' || Number(token) >= list.length) list.push(created)
        else list[Number(token)] = created
      } else {
        setOwn(current as Record<string, unknown>, token, created)
      }
      current = created
    }
    return writeLast(current, value)
  }

  if (tokens.length === 2) {
    const [a, b] = tokens as [string, string]
    if (!INHERITED.has(a) && b !== '__proto__' && b !== '-' && !isArrayIndex(b)) {
      // Two object tokens (`/citation/title`): straight into an owned object, else the general path.
      return (target, value, ownership) => {
        if (value === undefined) return undefined
        if (Array.isArray(target)) return generic(target, value, ownership)
        const existing = (target as Record<string, unknown>)[a]
        if (existing === undefined) {
          const created: Record<string, unknown> = {}
          created[b] = value
          ;(target as Record<string, unknown>)[a] = created
          return undefined
        }
        if (
          existing !== null &&
          typeof existing === 'object' &&
          !Array.isArray(existing) &&
          (ownership === null || !ownership.isForeign(existing))
        ) {
          ;(existing as Record<string, unknown>)[b] = value
          return undefined
        }
        return generic(target, value, ownership)
      }
    }
  }
  return generic
}
