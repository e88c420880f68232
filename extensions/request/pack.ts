// A parsed body on its way back from a parse thread (parse-thread.ts) without holding the event
// loop. Cloning a value into the main thread costs about what parsing it did (a 7 MB JSON body:
// 170–270 ms of deserialization in one turn), so the worker does two things first:
//
// 1. narrows: when the call's options carry `pointer`, only the path to its target is kept (a
//    sparse envelope: the containers along the path, each with the one member the pointer reads,
//    and the target whole), so the engine's own narrowing of what the plugin returns reads the
//    same value, and nothing else crosses;
// 2. packs: what is left is cut into batches of bounded weight, each serialized into its own
//    buffer, and the buffers are transferred, not copied. The main thread deserializes one batch
//    per slice of time, yielding between slices, and assembles the value: containers too heavy
//    for one batch are opened empty and filled member by member, in order.
//
// Each container opened that way also carries its size, counted in the worker by the engine's own
// rules (`measure`), and the main thread notes it on the container it assembled (`noteSize`): the
// engine's output budgets then count a large body written by reference without walking it again.
import { deserialize, serialize } from 'node:v8'
import { measure, noteSize, parsePointer, weighUpTo, type Size } from '../../engine/index.js'
import { Slice } from '../../engine/slices.js'
import { setMember } from './record.js'

/** The estimated weight of one batch: about 128 KiB of serialized data, a few ms to deserialize. */
export const BATCH_WEIGHT = 128 * 1024

const OPEN_OBJECT = 1
const OPEN_ARRAY = 2
const VALUE = 0
/** An entry that carries the size (values, bytes, depth) of the container it names, once its members are placed. */
const SIZE = 3

/** The path a pointer took through the envelope: what the sparse envelope is made of. */
export interface Spine {
  /** For each container along the path, from the envelope down: whether it is an array. */
  readonly arrays: readonly boolean[]
  /** The token read from each container, as far as the path went. */
  readonly tokens: readonly string[]
  /** Whether the pointer reached a value (the packed target); else the last container is left empty. */
  readonly reached: boolean
}

/** What crosses back: the spine, and the batches of the target (transferred). */
export interface Packed {
  readonly spine: Spine
  readonly batches: readonly Uint8Array[]
}

/** The pointer's own member of a container, read as the engine reads (own members; canonical indices of arrays). */
function ownChild(container: object, token: string): unknown {
  if (Array.isArray(container)) return /^(?:0|[1-9][0-9]*)$/.test(token) ? container[Number(token)] : undefined
  return Object.hasOwn(container, token) ? (container as Record<string, unknown>)[token] : undefined
}

/** The tokens of a pointer the engine narrows with, or null when it reads the whole value (or does not parse: the engine reports it). */
function pointerTokens(pointer: unknown): readonly string[] | null {
  if (typeof pointer !== 'string' || pointer === '') return null
  try {
    const tokens = parsePointer(pointer)
    return tokens.length === 0 || tokens[0] === '' ? null : tokens
  } catch {
    return null
  }
}

/** The spine of `pointer` through `value` and the value it reaches (the whole value without a pointer). */
export function narrow(value: unknown, pointer: unknown): { spine: Spine; target: unknown } {
  const tokens = pointerTokens(pointer)
  const arrays: boolean[] = []
  const taken: string[] = []
  if (tokens === null) return { spine: { arrays, tokens: taken, reached: true }, target: value }
  let current = value
  for (const token of tokens) {
    // Past a value that is no container the engine reads nothing: the value itself stands in.
    if (current === null || typeof current !== 'object') break
    arrays.push(Array.isArray(current))
    const child = ownChild(current, token)
    if (child === undefined) return { spine: { arrays, tokens: taken, reached: false }, target: undefined }
    taken.push(token)
    current = child
  }
  return { spine: { arrays, tokens: taken, reached: true }, target: current }
}

/** The estimated weight of a value (about bytes to deserialize), counted only until it passes `limit`. */
const weigh = (value: unknown, limit: number): number => weighUpTo(value, limit, 16, 4)

/** A serialized batch in a buffer of its own (transferable whole). */
function owned(entries: unknown[]): Uint8Array {
  const bytes = serialize(entries)
  return bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length ? bytes : new Uint8Array(bytes)
}

/**
 * Cut a value into batches (worker side). A batch is a flat list of entries `parent, key, kind,
 * value`: `parent` the number of an opened container (-1: the root), `kind` VALUE for a value
 * carried whole, OPEN_OBJECT or OPEN_ARRAY for a container opened empty (numbered in the order
 * opened) whose members follow.
 */
export function pack(value: unknown, batchWeight = BATCH_WEIGHT): Uint8Array[] {
  const batches: Uint8Array[] = []
  let entries: unknown[] = []
  let weight = 0
  let opened = 0
  const add = (parent: number, key: string | number, kind: number, carried: unknown, cost: number): void => {
    if (weight > 0 && weight + cost > batchWeight) {
      batches.push(owned(entries))
      entries = []
      weight = 0
    }
    entries.push(parent, key, kind, carried)
    weight += cost
  }
  // Depth-first, members in order: a container's members are all placed before its next sibling.
  const place = (parent: number, key: string | number, member: unknown): void => {
    const cost = weigh(member, batchWeight)
    if (cost <= batchWeight || member === null || typeof member !== 'object') {
      add(parent, key, VALUE, member, cost)
      return
    }
    const id = opened++
    if (Array.isArray(member)) {
      add(parent, key, OPEN_ARRAY, null, 16)
      for (let i = 0; i < member.length; i++) place(id, i, member[i])
    } else {
      add(parent, key, OPEN_OBJECT, null, 16)
      for (const name in member) {
        if (Object.hasOwn(member, name)) place(id, name, (member as Record<string, unknown>)[name])
      }
    }
    // Its opened members were noted as they closed: this walks only what it carries whole.
    const size = measure(member, Infinity, Infinity)
    noteSize(member, size)
    add(id, '', SIZE, [size.values, size.bytes, size.depth], 16)
  }
  place(-1, '', value)
  batches.push(owned(entries))
  return batches
}

/** Put a member into an assembled container (own members only, `__proto__` included). */
function attach(container: object, key: string | number, member: unknown): void {
  if (Array.isArray(container)) container.push(member)
  else setMember(container as Record<string, unknown>, key as string, member)
}

/**
 * Assemble what `pack` cut (main thread), one slice of time per turn: between slices, other
 * requests run. `check` is called at every yield (the call's deadline throws from it). The size a
 * container was packed with is noted on it (`noteSize`).
 */
export async function unpack(batches: readonly Uint8Array[], check: () => void): Promise<unknown> {
  const containers: object[] = []
  let root: unknown
  const slice = new Slice()
  for (const batch of batches) {
    if (slice.due()) {
      await slice.next()
      check()
    }
    const entries = deserialize(batch) as unknown[]
    for (let i = 0; i < entries.length; i += 4) {
      const parent = entries[i] as number
      const kind = entries[i + 2] as number
      if (kind === SIZE) {
        const [values, bytes, depth] = entries[i + 3] as number[]
        noteSize(containers[parent]!, { values, bytes, depth } as Size)
        continue
      }
      const member = kind === VALUE ? entries[i + 3] : kind === OPEN_ARRAY ? [] : {}
      if (kind !== VALUE) containers.push(member as object)
      if (parent === -1) root = member
      else attach(containers[parent]!, entries[i + 1] as string | number, member)
    }
  }
  return root
}

/** The sparse envelope of a spine around its target: what the engine's narrowing reads as the target. */
export function sparse(spine: Spine, target: unknown): unknown {
  if (spine.arrays.length === 0) return target
  const make = (array: boolean): object => (array ? [] : {})
  const root = make(spine.arrays[0]!)
  let container = root
  for (let i = 0; i < spine.tokens.length; i++) {
    const token = spine.tokens[i]!
    const last = i + 1 >= spine.arrays.length
    const member = last ? target : make(spine.arrays[i + 1]!)
    if (Array.isArray(container)) container[Number(token)] = member
    else setMember(container as Record<string, unknown>, token, member)
    if (last) break
    container = member as object
  }
  return root
}
