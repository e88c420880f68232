// Value helpers the language needs in several stages: truthiness, text conversion (the host's
// string conversion, made safe for any JSON value), copies that never recurse on the host stack.
import { STEPS_PER_YIELD, type Steps } from './steps.js'

/** The language's truthiness: undefined, null, false, 0, NaN and "" are falsy. */
export function truthy(value: unknown): boolean {
  return !!value
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

const ignore = (): void => {}

/**
 * A promise an initializer or transformer wrongly returned (EXT-2, EXT-6) is passed on unawaited
 * (§8.9), and a later keyword may drop it (`constant`, `as`): observed here, so that its rejection
 * can never go unhandled, while whatever settles it later still sees that rejection.
 */
export function observed(value: unknown): unknown {
  if (value instanceof Promise) value.catch(ignore)
  return value
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}

/** What building a value reports to (the evaluation's meter): bytes about to be built, elements scanned. */
export interface BuildMeter {
  build(bytes: number): void
  tick(steps: number): void
}

/** How much text a join collects before it reports it to the meter (and the meter may stop it). */
const REPORT_EVERY = 64 * 1024

/**
 * JavaScript string conversion of a value, without calling anything the value carries: arrays
 * join their members with commas (null and undefined members empty, nested arrays flattened),
 * other objects are `[object Object]`. `null` is `"null"` (decision 10). With a meter, the text of
 * an array is counted as it is collected, before it is joined: a join too large for the budget is
 * never made.
 */
export function toText(value: unknown, meter?: BuildMeter): string {
  if (typeof value === 'string') return value
  if (value === null) return 'null'
  if (Array.isArray(value)) return joinMembers(value, meter)
  if (typeof value === 'object') return isThenable(value) ? '[object Promise]' : '[object Object]'
  return String(value)
}

function joinMembers(list: unknown[], meter: BuildMeter | undefined): string {
  meter?.tick(list.length + 1)
  // A list of scalars (the common case) is joined by the host, which calls nothing on a scalar:
  // its strings are counted first, the few characters of other scalars once they are known.
  let counted = 0
  let flat = true
  for (let i = 0; i < list.length; i++) {
    const member = list[i]
    if (typeof member === 'string') counted += member.length + 1
    else if (member !== null && typeof member === 'object') {
      flat = false
      break
    } else counted += 1
  }
  if (flat) {
    if (meter === undefined) return list.join(',')
    meter.build(counted)
    const joined = list.join(',')
    if (joined.length > counted) meter.build(joined.length - counted)
    return joined
  }
  // Nested arrays, walked iteratively so deep nesting cannot exhaust the stack, into one flat list
  // of pieces, so a nested array's text is never built apart and copied again.
  const pieces: string[] = []
  let unreported = 0
  const stack: Array<{ list: unknown[]; index: number }> = [{ list, index: 0 }]
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!
    if (frame.index >= frame.list.length) {
      stack.pop()
      continue
    }
    if (frame.index > 0) {
      pieces.push(',')
      unreported++
    }
    const member = frame.list[frame.index++]
    if (Array.isArray(member)) {
      stack.push({ list: member, index: 0 })
      meter?.tick(member.length + 1)
    } else if (member !== null && member !== undefined) {
      const text = toText(member)
      pieces.push(text)
      unreported += text.length
    }
    if (unreported > REPORT_EVERY && meter !== undefined) {
      meter.build(unreported)
      unreported = 0
    }
  }
  meter?.build(unreported)
  return pieces.length === 1 ? pieces[0]! : pieces.join('')
}

/** Text of a value used as a property name (switch branch keys). */
export function toKey(value: unknown, meter?: BuildMeter): string {
  return toText(value, meter)
}

function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  } else {
    target[key] = value
  }
}

/** Containers still to fill: each source, its copy, and the copy's depth (a scalar root is depth 1). */
type CopyWork = Array<[from: object, to: object, depth: number]>

/**
 * What a copy holds where the source holds `member`: a scalar as it is, a container as a fresh
 * empty one of its kind, queued on `work` to be filled. The one step both copies below take.
 */
function copySlot(member: unknown, work: CopyWork, depth: number): unknown {
  if (member === null || typeof member !== 'object') return member
  const child: object = Array.isArray(member) ? new Array(member.length) : {}
  work.push([member, child, depth])
  return child
}

/**
 * A deep copy of a JSON-like value (own enumerable keys; `__proto__` kept as data). Iterative, so
 * a deeply nested value cannot exhaust the stack. `counted` is told how many containers it made.
 */
export function copyValue<T>(value: T, counted?: (containers: number) => void): T {
  if (value === null || typeof value !== 'object') return value
  const root: object = Array.isArray(value) ? new Array(value.length) : {}
  const work: CopyWork = [[value as object, root, 1]]
  let containers = 0
  while (work.length > 0) {
    const [from, to, depth] = work.pop()!
    containers++
    if (Array.isArray(from)) {
      const list = to as unknown[]
      for (let i = 0; i < from.length; i++) list[i] = copySlot(from[i], work, depth + 1)
    } else {
      for (const key of Object.keys(from)) defineOwn(to as Record<string, unknown>, key, copySlot((from as Record<string, unknown>)[key], work, depth + 1))
    }
  }
  counted?.(containers)
  return root as T
}

/** Containers of at least this many keys have their key list remembered once frozen (`keysOf`). */
export const REMEMBERED_KEYS = 1024

/**
 * The key lists of large frozen containers (a pairing map of a hundred thousand pairings): asking
 * V8 for them again costs as much as a walk's step for every key (tens of milliseconds for one
 * such map, in one synchronous call), and every walk of a registration asks (placing, compiling,
 * validating). A frozen object's keys can never change, so the list is kept for as long as it is.
 */
const keyLists = new WeakMap<object, readonly string[]>()

/** `Object.keys(value)`, remembered for large containers frozen with `rememberKeys`. */
export function keysOf(value: object): readonly string[] {
  return keyLists.get(value) ?? Object.keys(value)
}

/** The keys remembered for `value` (a large frozen container), or undefined. */
export function rememberedKeys(value: object): readonly string[] | undefined {
  return keyLists.get(value)
}

/** Remember the keys of `frozen` (it must be frozen: its keys are then its keys for good), when it is large. */
export function rememberKeys(frozen: object, keys: readonly string[]): void {
  if (keys.length >= REMEMBERED_KEYS && Object.isFrozen(frozen)) keyLists.set(frozen, keys)
}

/**
 * A deep copy whose containers are all frozen, step by step (engine/steps.ts), refusing a value nested deeper than
 * `maxDepth` (a scalar root is depth 1, as `nestingDepth` counts) with `tooDeep()`: what a
 * registration admits, copied in slices when it is large. A large container's keys are remembered.
 */
export function * frozenCopy<T>(value: T, maxDepth: number, tooDeep: () => Error): Steps<T> {
  if (value === null || typeof value !== 'object') return value
  const root: object = Array.isArray(value) ? new Array(value.length) : {}
  const work: CopyWork = [[value as object, root, 1]]
  const done: object[] = []
  const large: Array<[object, readonly string[]]> = []
  let steps = 0
  while (work.length > 0) {
    const [from, to, depth] = work.pop()!
    if (depth > maxDepth) throw tooDeep()
    done.push(to)
    if (Array.isArray(from)) {
      const list = to as unknown[]
      for (let i = 0; i < from.length; i++) {
        list[i] = copySlot(from[i], work, depth + 1)
        if (++steps % STEPS_PER_YIELD === 0) yield
      }
    } else {
      // A large frozen source (a set the loading thread handed over) may have its keys remembered.
      const keys = keysOf(from)
      for (const key of keys) {
        defineOwn(to as Record<string, unknown>, key, copySlot((from as Record<string, unknown>)[key], work, depth + 1))
        if (++steps % STEPS_PER_YIELD === 0) yield
      }
      if (keys.length >= REMEMBERED_KEYS) large.push([to, keys])
    }
  }
  for (const container of done) {
    Object.freeze(container)
    if (++steps % STEPS_PER_YIELD === 0) yield
  }
  for (const [container, keys] of large) rememberKeys(container, keys)
  return root as T
}

/** A document value handed out per use: a container is copied each time, so no output shares the document's. */
export function supplier(value: unknown): () => unknown {
  return value !== null && typeof value === 'object' ? () => copyValue(value) : () => value
}

/** Nesting depth of a value (objects and arrays; a scalar root is depth 1), computed iteratively. */
export function nestingDepth(value: unknown, stopAbove = Infinity): number {
  let deepest = 0
  const work: Array<[unknown, number]> = [[value, 1]]
  while (work.length > 0) {
    const [current, depth] = work.pop()!
    if (depth > deepest) deepest = depth
    if (deepest > stopAbove) return deepest
    if (current !== null && typeof current === 'object') {
      for (const member of Object.values(current)) {
        if (member !== null && typeof member === 'object') work.push([member, depth + 1])
      }
    }
  }
  return deepest
}

/** The index of the quote closing the string that opens at `open`: one not preceded by an odd run of backslashes; -1 if none. */
function closingQuote(text: string, open: number): number {
  let end = text.indexOf('"', open + 1)
  while (end !== -1) {
    let slashes = 0
    while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++
    if (slashes % 2 === 0) return end
    end = text.indexOf('"', end + 1)
  }
  return -1
}

/**
 * The text of member `name` of the JSON object `text` (already known to parse): the value exactly
 * as written, so that `JSON.parse` of it gives the parsed member. The last one when the name repeats
 * (as `JSON.parse` keeps the last); undefined when `text` is not an object or has no such member.
 * A name written with escapes (`"\u006dapping"`) is the name it decodes to.
 */
export function jsonMemberText(text: string, name: string): string | undefined {
  let i = 0
  while (i < text.length && isJsonSpace(text.charCodeAt(i))) i++
  if (text.charCodeAt(i) !== 0x7b) return undefined
  let found: string | undefined
  let depth = 0
  // At depth 1: the start of the current member's value (after its colon), and whether its name is `name`.
  let valueStart = -1
  let named = false
  let expectKey = true
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      const end = closingQuote(text, i)
      if (end === -1) return undefined
      if (depth === 1 && expectKey) {
        const key = text.slice(i + 1, end)
        named = key.includes('\\') ? JSON.parse(text.slice(i, end + 1)) === name : key === name
        expectKey = false
      }
      i = end
    } else if (c === 0x3a) {
      if (depth === 1) valueStart = i + 1
    } else if (c === 0x2c || c === 0x7d || c === 0x5d) {
      if (depth === 1 && c !== 0x5d) {
        if (named) found = text.slice(valueStart, i).trim()
        named = false
        expectKey = true
      }
      if (c !== 0x2c) depth--
      if (depth === 0) break
    } else if (c === 0x7b || c === 0x5b) {
      depth++
    }
  }
  return found
}

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

/** Whether `text` holds at most `limit` `{` and `[` characters, in strings or not. */
function fewOpenings(text: string, limit: number): boolean {
  let count = 0
  for (let at = text.indexOf('{'); at !== -1; at = text.indexOf('{', at + 1)) if (++count > limit) return false
  for (let at = text.indexOf('['); at !== -1; at = text.indexOf('[', at + 1)) if (++count > limit) return false
  return true
}

/**
 * True when JSON text opens more than `limit` arrays and objects inside one another, found by one
 * linear scan before any parser builds the structure (strings are skipped whole).
 */
export function jsonNestsDeeper(text: string, limit: number): boolean {
  // Every level takes two characters at least: a shorter text cannot be too deep. Nor can one with
  // at most `limit` brackets that open, counted first by indexOf (those inside strings too, which
  // only ever sends a text to the full scan): most texts have a few, and the count stops at
  // `limit + 1`, so a text with many costs that many searches more, never a second pass over it.
  if (text.length <= 2 * limit || fewOpenings(text, limit)) return false
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      const end = closingQuote(text, i)
      if (end === -1) return false
      i = end
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  return false
}
