// JSON text of a large value printed a slice at a time. One JSON.stringify of a 10 MB envelope
// holds the event loop for 150–190 ms; this prints the same text, exactly, in turns of a few
// milliseconds with the loop free between them. Containers too heavy for one slice are walked here,
// member by member (an explicit stack, no recursion); runs of lighter members, strings and scalars
// are printed by JSON.stringify itself, which is fast and exact, so nothing of JSON's escaping or
// number printing is written again. Used for outputs the engine counted as large
// (engine/budget.ts LARGE_OUTPUT_BYTES); smaller ones are printed in one JSON.stringify as before.
import { MAX_OUTPUT_DEPTH, weighUpTo } from '../engine/index.js'
import { Slice } from '../engine/slices.js'

/** How long one slice prints before it yields to the event loop. */
export const PRINT_SLICE_MS = 4

/** The estimated weight (about characters of text) of a run of members printed by one JSON.stringify. */
export const RUN_WEIGHT = 16 * 1024

/**
 * The deepest nesting of containers walked here: past it the print fails as JSON.stringify does on
 * a value too deep for its stack (RangeError). The engine prints no output deeper than
 * MAX_OUTPUT_DEPTH (engine/budget.ts); the envelope and a margin are above it.
 */
const MAX_PRINT_DEPTH = MAX_OUTPUT_DEPTH + 8

/** A container being printed member by member. */
interface Frame {
  readonly holder: object
  /** The object's keys, in JSON.stringify's order; null for an array. */
  readonly keys: readonly string[] | null
  readonly length: number
  index: number
  /** No member printed yet (no comma before the next). */
  first: boolean
}

/** A member's value opened as a frame of its own (its opening bracket printed). */
const OPENED = Symbol('opened')

/** The estimated printed weight of a value (about characters), counted only until it passes `limit`. */
const weigh = (value: unknown, limit: number): number => weighUpTo(value, limit, 8, 1)

/** A primitive in an object's clothing: JSON.stringify prints its primitive, never its members. */
function boxed(value: object): boolean {
  return value instanceof Number || value instanceof String || value instanceof Boolean || value instanceof BigInt
}

/**
 * The JSON text of `value`, exactly as `JSON.stringify(value)` prints it (no replacer, no indent),
 * printed in slices of about `sliceMs` with a turn of the event loop between them. Throws what
 * JSON.stringify throws: a RangeError for a value too deep (here: containers too heavy for one
 * JSON.stringify nested deeper than MAX_PRINT_DEPTH) or text too long, a TypeError for a cycle or
 * a BigInt. `runWeight` is the weight of a run printed by one JSON.stringify (tests make it small).
 */
export async function printSliced(value: unknown, sliceMs = PRINT_SLICE_MS, runWeight = RUN_WEIGHT): Promise<string | undefined> {
  const chunks: string[] = []
  let parts: string[] = []
  const stack: Frame[] = []
  const open = new Set<object>()

  /** Open a container as a frame: its bracket is printed, its members follow. */
  const opening = (container: object): typeof OPENED => {
    if (open.has(container)) throw new TypeError('Converting circular structure to JSON')
    if (stack.length >= MAX_PRINT_DEPTH) throw new RangeError(`Maximum nesting of ${MAX_PRINT_DEPTH} levels exceeded`)
    open.add(container)
    const keys = Array.isArray(container) ? null : Object.keys(container)
    parts.push(keys === null ? '[' : '{')
    stack.push({ holder: container, keys, length: keys === null ? (container as unknown[]).length : keys.length, index: 0, first: true })
    return OPENED
  }

  /** One member, as JSON.stringify's SerializeJSONProperty: its text, undefined (left out), or OPENED. */
  const member = (raw: unknown, key: string): string | undefined | typeof OPENED => {
    let item = raw
    let converted = false
    if ((item !== null && typeof item === 'object') || typeof item === 'bigint') {
      const toJSON = (item as { toJSON?: unknown }).toJSON
      if (typeof toJSON === 'function') {
        item = (toJSON as (key: string) => unknown).call(item, key)
        converted = true
      }
    }
    if (item === null || typeof item !== 'object') return JSON.stringify(item)
    // What toJSON returned is printed by its members: its own toJSON is not called again.
    if (converted && typeof (item as { toJSON?: unknown }).toJSON === 'function' && !boxed(item)) return opening(item)
    if (boxed(item) || weigh(item, runWeight) <= runWeight) return JSON.stringify(item)
    return opening(item)
  }

  const top = member(value, '')
  if (top !== OPENED) return top
  const slice = new Slice(sliceMs)
  while (stack.length > 0) {
    if (slice.due()) {
      chunks.push(parts.join(''))
      parts = []
      await slice.next()
    }
    const frame = stack[stack.length - 1]!
    if (frame.index >= frame.length) {
      parts.push(frame.keys === null ? ']' : '}')
      open.delete(frame.holder)
      stack.pop()
      continue
    }
    if (frame.keys === null) arrayMembers(frame)
    else objectMembers(frame, frame.keys)
  }
  chunks.push(parts.join(''))
  if (chunks.length === 1) return chunks[0]
  // Joining is a copy of the whole text (10–20 ms for 10 MB): a turn of its own, apart from what
  // the caller does with the text next (encoding it onto a socket is about as long again).
  const text = chunks.join('')
  await slice.next()
  return text

  /** The next members of an array: a run of light ones in one JSON.stringify, or one heavy one. */
  function arrayMembers(frame: Frame): void {
    const array = frame.holder as unknown[]
    const start = frame.index
    let end = start
    let weight = 0
    while (end < frame.length && weight < runWeight) {
      const item = array[end]
      if (item !== null && typeof item === 'object') {
        // A member with toJSON is given its own index (JSON.stringify of a run would number it from 0).
        if (typeof (item as { toJSON?: unknown }).toJSON === 'function') break
        const heft = weigh(item, runWeight - weight)
        if (weight + heft > runWeight) break
        weight += heft
      } else {
        weight += typeof item === 'string' ? item.length + 3 : 8
      }
      end++
    }
    if (!frame.first) parts.push(',')
    frame.first = false
    if (end > start) {
      parts.push(JSON.stringify(array.slice(start, end)).slice(1, -1))
      frame.index = end
      return
    }
    frame.index = start + 1
    const text = member(array[start], String(start))
    if (text !== OPENED) parts.push(text ?? 'null')
  }

  /** The next members of an object: a run of light ones in one JSON.stringify, or one heavy one. */
  function objectMembers(frame: Frame, keys: readonly string[]): void {
    const holder = frame.holder as Record<string, unknown>
    const start = frame.index
    let end = start
    let weight = 0
    let run: Record<string, unknown> | undefined
    while (end < frame.length && weight < runWeight) {
      const key = keys[end]!
      const item = holder[key]
      if (typeof item === 'function' && key === 'toJSON') {
        // Left out of the text as any function is; in a run it would be the run's own toJSON.
        end++
        continue
      }
      let heft = key.length + 4
      if (item !== null && typeof item === 'object') heft += weigh(item, runWeight - weight - heft)
      else heft += typeof item === 'string' ? item.length + 3 : 8
      if (weight + heft > runWeight && end > start) break
      if (weight + heft > runWeight && item !== null && typeof item === 'object') break
      // A run is an object of no prototype: `__proto__` is an own key there, as in the holder.
      run ??= Object.create(null) as Record<string, unknown>
      run[key] = item
      weight += heft
      end++
    }
    if (run !== undefined) {
      // Keys keep their order: the holder's own order puts index-like keys first, ascending, as the run's does.
      const text = JSON.stringify(run).slice(1, -1)
      frame.index = end
      if (text === '') return
      if (!frame.first) parts.push(',')
      frame.first = false
      parts.push(text)
      return
    }
    const key = keys[start]!
    frame.index = start + 1
    const mark = parts.length
    if (!frame.first) parts.push(',')
    parts.push(JSON.stringify(key), ':')
    const text = member(holder[key], key)
    if (text === undefined) {
      parts.length = mark
      return
    }
    frame.first = false
    if (text !== OPENED) parts.push(text)
  }
}
