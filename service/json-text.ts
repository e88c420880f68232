// Request bodies too large to parse on the event loop (README "Isolation"): building the objects of
// a JSON text, evaluating over them and printing the answer all grow with the text, and together
// take the main thread hundreds of milliseconds for a body of a mebibyte. A body with more values
// than LARGE_BODY_VALUES is checked here in one linear pass that allocates nothing (strict JSON
// syntax, depth, and where each top-level member lies); its scalar members are parsed, and each
// object or array member is kept as its text (`JsonText`), which crosses into a worker as a string
// (a string is copied, an object graph cloned) and is parsed there (`parseJsonText`).
import secureJson from 'secure-json-parse'
import { BadRequest, FIELD_MESSAGES } from './errors.js'

/**
 * The deepest body accepted: far beyond any mapping (documents nest at most 100 levels) or
 * sensible input, and far below what printing an output that copies the input could survive.
 */
export const MAX_BODY_DEPTH = 512

/** The 400 message of a body with a `__proto__` or `constructor.prototype` key. */
export const POISONED_BODY = 'Body must not contain __proto__ or constructor.prototype keys'

/**
 * A body with more values than this (as `JsonCount` counts them: its brackets and commas) is a large body: parsed
 * and evaluated in a worker thread where there is one. About 15 ms of the main thread's time to
 * parse, evaluate and print for the cheapest values (`{}`) on this project's 2-core reference
 * machine, and twice what a body of a few hundred records holds (100 KB of them: about 8,000).
 */
export const LARGE_BODY_VALUES = 16_384

/**
 * A body this long or shorter is parsed as it is, never scanned: at most about 20,000 values
 * (`{}` takes three characters with its comma), some 20 ms of the main thread's time.
 */
export const LARGE_BODY_CHARS = 64 * 1024

// Characters the scanner tells apart.
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const MINUS = 0x2d
const ZERO = 0x30
const NINE = 0x39

/**
 * Characters a scan or a count reads in one call of its loop; `run` makes as many calls as its
 * slice holds. Short enough that a first call finishes before V8 compiles the loop on the stack
 * (on-stack replacement): compiled from that call's feedback, the loop's exit, and what follows
 * it, is compiled too. Code compiled while the loop ran for the first time had no feedback for
 * them, and left the optimized code at every slice's end.
 */
const STRETCH_CHARS = 1024

/**
 * `run`'s loop, for the scan and the count: `read` a stretch at a time, from `position()`, until it
 * finds what the text is or reaches `stop`.
 */
function inStretches<T>(stop: number, position: () => number, read: (stop: number) => T | undefined): T | undefined {
  let found: T | undefined
  do found = read(Math.min(stop, position() + STRETCH_CHARS))
  while (found === undefined && position() < stop)
  return found
}

// What the scanner expects next.
const VALUE = 0
const VALUE_OR_CLOSE = 1
const KEY = 2
const KEY_OR_CLOSE = 3
const NAME_SEPARATOR = 4
const AFTER_VALUE = 5

/**
 * How many values a text holds, about (its opening brackets and its commas outside strings: an
 * estimate within a factor of two), in a quick pass that reads strings only for their end, and
 * resumable: `run` reads a bounded stretch per call. Whether the text is JSON at all is for
 * JSON.parse or `JsonScan` to say.
 */
export class JsonCount {
  readonly #text: string
  readonly #limit: number
  #i = 0
  #depth = 0
  #values = 0

  constructor(text: string, limit: number) {
    this.#text = text
    this.#limit = limit
  }

  /** Read about `chars` more characters: the count once the text is done (-1: it nests deeper than the limit), undefined before. */
  run(chars: number): number | undefined {
    return inStretches(Math.min(this.#text.length, this.#i + chars), () => this.#i, (stop) => this.#read(stop))
  }

  /** `run` up to `stop` (or past it, to a string's end): one stretch. */
  #read(stop: number): number | undefined {
    const text = this.#text
    const length = text.length
    const limit = this.#limit
    let values = this.#values
    let depth = this.#depth
    let i = this.#i
    for (; i < stop; i++) {
      const c = text.charCodeAt(i)
      if (c === QUOTE) {
        // The next quote not escaped (an odd run of backslashes before it), found by indexOf.
        let end = text.indexOf('"', i + 1)
        for (;;) {
          if (end === -1) return values
          let slashes = 0
          while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++
          if (slashes % 2 === 0) break
          end = text.indexOf('"', end + 1)
        }
        i = end
      } else if (c === COMMA) {
        values++
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        values++
        if (++depth > limit) return -1
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        depth--
      }
    }
    this.#i = i
    this.#values = values
    this.#depth = depth
    return i < length ? undefined : values
  }
}

/** A JSON value kept as its text: checked as JSON already, parsed where it is used (`parseJsonText`). */
export class JsonText {
  constructor(readonly text: string) {}

  /** The value; BadRequest when it holds a poisoned key. */
  parse(): unknown {
    return parseJsonText(this.text)
  }
}

/**
 * Parse a JSON text that is known to be JSON, with the prototype-poisoning guard: a second, careful
 * pass only when a dangerous key could be present at all (spelled out, or hidden behind a \u escape
 * such as "\u005f_proto__"). BadRequest when there is one.
 */
export function parseJsonText(text: string): unknown {
  const parsed: unknown = JSON.parse(text)
  if (text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')) {
    try {
      return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
    } catch {
      throw new BadRequest(POISONED_BODY)
    }
  }
  return parsed
}

/**
 * A body's `mapping` kept as text, parsed: a mapping document is an object; anything else is refused
 * as the body's schema refuses it.
 */
export function documentOf(value: unknown): object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BadRequest(FIELD_MESSAGES.mapping!)
  return value
}

/** One member of a top-level object, as `scanJson` found it. */
export interface ScannedMember {
  /** The member's name as written (its quotes included): decode with JSON.parse when it has a backslash. */
  readonly name: string
  /** The member's value, as text. */
  readonly value: string
}

/** What `scanJson` found: not JSON, too deep, or JSON with its count of values and top-level members. */
export type Scanned =
  | { readonly kind: 'invalid'; readonly at: number }
  | { readonly kind: 'deep' }
  | { readonly kind: 'json'; readonly values: number; readonly members: readonly ScannedMember[] | undefined }

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE
}

function isHex(c: number): boolean {
  return (c >= ZERO && c <= NINE) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
}

/**
 * The index after the string that opens at `i`; when it is not a JSON string, -1 minus where it
 * stops being one (the character, the escape's letter, or the end of the text).
 */
function stringEnd(text: string, i: number): number {
  const length = text.length
  for (i++; i < length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) return i + 1
    if (c < 0x20) return -1 - i
    if (c === BACKSLASH) {
      const escaped = text.charCodeAt(++i)
      if (escaped === 0x75) {
        if (!(isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2)) && isHex(text.charCodeAt(i + 3)) && isHex(text.charCodeAt(i + 4)))) return -1 - i
        i += 4
      } else if (!(escaped === QUOTE || escaped === BACKSLASH || escaped === 0x2f || escaped === 0x62 || escaped === 0x66 || escaped === 0x6e || escaped === 0x72 || escaped === 0x74)) {
        return -1 - Math.min(i, length)
      }
    }
  }
  return -1 - length
}

/**
 * The index after the longest number that starts at `i` (what follows it, a `.` without digits
 * say, is then refused where it stands); -1 minus `i` when no number starts there.
 */
function numberEnd(text: string, i: number): number {
  const start = i
  if (text.charCodeAt(i) === MINUS) i++
  const c = text.charCodeAt(i)
  if (c === ZERO) i++
  else if (isDigit(c)) while (isDigit(text.charCodeAt(++i)));
  else return -1 - start
  if (text.charCodeAt(i) === 0x2e && isDigit(text.charCodeAt(i + 1))) {
    i++
    while (isDigit(text.charCodeAt(++i)));
  }
  const e = text.charCodeAt(i)
  if (e === 0x65 || e === 0x45) {
    const sign = text.charCodeAt(i + 1)
    const digits = sign === 0x2b || sign === MINUS ? i + 2 : i + 1
    if (isDigit(text.charCodeAt(digits))) {
      i = digits
      while (isDigit(text.charCodeAt(++i)));
    }
  }
  return i
}

/**
 * One strict pass over a JSON text (RFC 8259), resumable: whether it is JSON, whether it nests
 * deeper than `limit`, how many values it holds, and, when it is an object, each member's name and
 * value as text (in order; a repeated name appears twice). Linear, and allocates only the members'
 * slices; `run` reads a bounded stretch per call, so a long text is scanned over several turns.
 */
export class JsonScan {
  readonly #text: string
  readonly #limit: number
  /** The open containers, by depth: 1 for an object, 0 for an array. */
  readonly #objects: Uint8Array
  #depth = 0
  #values = 0
  #state = VALUE
  #members: ScannedMember[] | undefined
  // The top-level member being read: its name, where its value starts, and where the last finished value ended.
  #name = ''
  #valueStart = -1
  #valueEnd = -1
  #i = 0

  constructor(text: string, limit: number) {
    this.#text = text
    this.#limit = limit
    this.#objects = new Uint8Array(limit + 2)
  }

  /** Read about `chars` more characters (a string or number under way is finished): what was found once the text is done, undefined before. */
  run(chars: number): Scanned | undefined {
    return inStretches(Math.min(this.#text.length, this.#i + chars), () => this.#i, (stop) => this.#read(stop))
  }

  /** `run` up to `stop` (or past it, to the end of a string or number): one stretch. */
  #read(stop: number): Scanned | undefined {
    const text = this.#text
    const length = text.length
    const limit = this.#limit
    const objects = this.#objects
    let depth = this.#depth
    let values = this.#values
    let state = this.#state
    let members = this.#members
    let name = this.#name
    let valueStart = this.#valueStart
    let valueEnd = this.#valueEnd
    let i = this.#i
    while (i < stop) {
      const c = text.charCodeAt(i)
      if (c <= 0x20 && isSpace(c)) {
        i++
        continue
      }
      // Just inside a container: its close, or its first member.
      if (state === VALUE_OR_CLOSE || state === KEY_OR_CLOSE) {
        if (c === (state === VALUE_OR_CLOSE ? CLOSE_ARRAY : CLOSE_OBJECT)) {
          depth--
          i++
          valueEnd = i
          state = AFTER_VALUE
          continue
        }
        state = state === VALUE_OR_CLOSE ? VALUE : KEY
      }
      switch (state) {
        case VALUE:
          values++
          if (depth === 1 && members !== undefined) valueStart = i
          if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
            if (++depth > limit) return { kind: 'deep' }
            objects[depth] = c === OPEN_OBJECT ? 1 : 0
            if (depth === 1 && c === OPEN_OBJECT) members = []
            i++
            state = c === OPEN_OBJECT ? KEY_OR_CLOSE : VALUE_OR_CLOSE
            break
          }
          if (c === QUOTE) i = stringEnd(text, i)
          else if (c === MINUS || isDigit(c)) i = numberEnd(text, i)
          else if (c === 0x74 && text.startsWith('true', i)) i += 4
          else if (c === 0x66 && text.startsWith('false', i)) i += 5
          else if (c === 0x6e && text.startsWith('null', i)) i += 4
          else return invalid(i)
          if (i < 0) return invalid(-1 - i)
          valueEnd = i
          state = AFTER_VALUE
          break
        case KEY: {
          if (c !== QUOTE) return invalid(i)
          const end = stringEnd(text, i)
          if (end < 0) return invalid(-1 - end)
          if (depth === 1) name = text.slice(i, end)
          i = end
          state = NAME_SEPARATOR
          break
        }
        case NAME_SEPARATOR:
          if (c !== COLON) return invalid(i)
          i++
          state = VALUE
          break
        default: {
          // AFTER_VALUE: a separator, a close, or (at the top) nothing more.
          if (depth === 0) return invalid(i)
          const object = objects[depth] === 1
          if (c !== COMMA && c !== (object ? CLOSE_OBJECT : CLOSE_ARRAY)) return invalid(i)
          if (depth === 1 && object) members!.push({ name, value: text.slice(valueStart, valueEnd) })
          i++
          if (c === COMMA) {
            state = object ? KEY : VALUE
          } else {
            depth--
            valueEnd = i
          }
        }
      }
    }
    this.#depth = depth
    this.#values = values
    this.#state = state
    this.#members = members
    this.#name = name
    this.#valueStart = valueStart
    this.#valueEnd = valueEnd
    this.#i = i
    if (i < length) return undefined
    if (depth !== 0 || state !== AFTER_VALUE) return invalid(length)
    return { kind: 'json', values, members }
  }
}

function invalid(at: number): Scanned {
  return { kind: 'invalid', at }
}

/** `JsonScan` in one call. */
export function scanJson(text: string, limit: number): Scanned {
  return new JsonScan(text, limit).run(text.length)!
}

/**
 * Where a text stops being JSON, at `at` (a `JsonScan` finding), as a message's tail in the form
 * sources/json-syntax.ts gives: ` (line 3, column 7): unexpected "}"`.
 */
export function whereJsonStops(text: string, at: number): string {
  // Counted in place: a refused body may be a megabyte of short lines.
  let line = 1
  let lineStart = 0
  for (let newline = text.indexOf('\n'); newline !== -1 && newline < at; newline = text.indexOf('\n', newline + 1)) {
    line++
    lineStart = newline + 1
  }
  const found = text.codePointAt(at)
  return ` (line ${line}, column ${at - lineStart + 1}): ${found === undefined ? 'unexpected end of input' : `unexpected ${JSON.stringify(String.fromCodePoint(found))}`}`
}

/** What a large body with these top-level members (`JsonScan`) is as a request body: scalars parsed, objects and arrays kept as text. */
export function largeBody(members: readonly ScannedMember[] | undefined): unknown {
  // A large top-level array: no route takes an array body, and each refuses this one by its shape, as it would the array.
  if (members === undefined) return NOT_AN_OBJECT
  const body: Record<string, unknown> = {}
  for (const { name, value } of members) {
    const key = name.includes('\\') ? (JSON.parse(name) as string) : name.slice(1, -1)
    // Any other name is an own member of a plain object, harmless; the body schemas refuse names they do not have.
    if (key === '__proto__') throw new BadRequest(POISONED_BODY)
    const first = value.charCodeAt(0)
    body[key] = first === OPEN_OBJECT || first === OPEN_ARRAY ? new JsonText(value) : parseJsonText(value)
  }
  return body
}

const NOT_AN_OBJECT: readonly unknown[] = Object.freeze([])
