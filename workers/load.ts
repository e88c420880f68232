// A MAPPINGS set read and parsed off the event loop (hot reload): a thread of its own reads the
// files and parses them (YAML parsing of megabytes takes seconds), and only the parsed documents
// come back. The service goes on answering meanwhile (README "Hot reload").
//
// They come back in parts (issue 30). Posted whole, a set is rebuilt from its serialized form on
// the main thread in one synchronous turn, whatever its size: a document of 100,000 pairings held
// the loop for about 0.4 s there. The thread sends the documents as a list of pieces (a value small
// enough to cross whole, a container opened, a container closed) in parts of about PART_NODES
// values, one part at a time: the main thread asks for the next once it has placed the last and its
// slice of the loop allows (engine/slices.ts), so no turn rebuilds more than one part.
import { Worker } from 'node:worker_threads'
import type { MappingEntry } from '../sources/mappings.js'
import { SourceError } from '../sources/files.js'
import { Slice } from '../engine/slices.js'
import { REMEMBERED_KEYS, rememberKeys } from '../engine/values.js'

export interface LoadRequest {
  readonly path: string
  readonly timeoutMs: number
  readonly maxBytes: number
}

/**
 * One piece of a value as it crosses: `[VALUE, key, value]` places a scalar or a small container
 * (sent whole) in the container open at `key` (null: the value itself); `[OPEN, key, array]` opens
 * a container there, which the pieces after it fill until its `[CLOSE]`.
 */
export type Piece = readonly [typeof VALUE, string | number | null, unknown] | readonly [typeof OPEN, string | number | null, boolean] | readonly [typeof CLOSE]

const VALUE = 0
const OPEN = 1
const CLOSE = 2

/** The values (scalars and containers, counted in a container sent whole too) one part carries at most, about. */
export const PART_NODES = 2000

/** What the loading thread posts: a part of the set (the main thread answers `next` for the one after), its end, or why it failed. */
export type LoadMessage =
  | { readonly part: readonly Piece[] }
  | { readonly end: true; readonly warnings: string[] }
  | { readonly error: string; readonly warnings: string[] }

/** What the main thread posts back: the next part, please. */
export const NEXT_PART = 'next'

/** The number of values of each container in `value`, itself included: what decides whether it crosses whole. */
function sizes(value: unknown): Map<object, number> {
  const size = new Map<object, number>()
  if (value === null || typeof value !== 'object') return size
  // Post-order without recursion: a container is counted once each of its members has been.
  const work: Array<[object, boolean]> = [[value, false]]
  while (work.length > 0) {
    const [container, counted] = work.pop()!
    const members = Object.values(container) as unknown[]
    if (counted) {
      let total = 1
      for (const member of members) total += member !== null && typeof member === 'object' ? size.get(member)! : 1
      size.set(container, total)
      continue
    }
    work.push([container, true])
    for (const member of members) if (member !== null && typeof member === 'object') work.push([member, false])
  }
  return size
}

/**
 * `value` as pieces, in parts of about PART_NODES values each: a container of more is opened and
 * its members sent one by one, any other value is sent whole. Keys go in `Object.keys` order, so
 * the value rebuilt lists them in the same order.
 */
export function * parts(value: unknown): Generator<Piece[]> {
  const size = sizes(value)
  let part: Piece[] = []
  let weight = 0
  const take = (piece: Piece, nodes: number): Piece[] | undefined => {
    part.push(piece)
    weight += nodes
    if (weight < PART_NODES) return undefined
    const full = part
    part = []
    weight = 0
    return full
  }
  // The containers being sent, with the keys of each still to send.
  const open: Array<{ readonly container: Record<string, unknown>; readonly keys: string[]; next: number; readonly array: boolean }> = []
  const place = (key: string | number | null, member: unknown): Piece[] | undefined => {
    if (member === null || typeof member !== 'object' || size.get(member)! <= PART_NODES) return take([VALUE, key, member], member !== null && typeof member === 'object' ? size.get(member)! : 1)
    const array = Array.isArray(member)
    open.push({ container: member as Record<string, unknown>, keys: Object.keys(member), next: 0, array })
    return take([OPEN, key, array], 1)
  }
  const first = place(null, value)
  if (first !== undefined) yield first
  while (open.length > 0) {
    const top = open[open.length - 1]!
    let full: Piece[] | undefined
    if (top.next === top.keys.length) {
      open.pop()
      full = take([CLOSE], 1)
    } else {
      const key = top.keys[top.next++]!
      full = place(top.array ? Number(key) : key, top.container[key])
    }
    if (full !== undefined) yield full
  }
  if (part.length > 0) yield part
}

/** The value `parts` sent, rebuilt part by part; a large object is frozen with its keys remembered (engine/values.ts `keysOf`), which registering it then reads. */
export class Assembly {
  #root: unknown = undefined
  readonly #open: Array<{ readonly container: Record<string, unknown> | unknown[]; readonly keys: string[] | undefined }> = []

  add(part: readonly Piece[]): void {
    for (const piece of part) {
      if (piece[0] === CLOSE) {
        const { container, keys } = this.#open.pop()!
        if (keys !== undefined && keys.length >= REMEMBERED_KEYS) rememberKeys(Object.freeze(container), keys)
      } else if (piece[0] === OPEN) {
        const array = piece[2]
        const container = array ? [] : {}
        this.#place(piece[1], container)
        this.#open.push({ container, keys: array ? undefined : [] })
      } else {
        this.#place(piece[1], piece[2])
      }
    }
  }

  #place(key: string | number | null, value: unknown): void {
    const top = this.#open[this.#open.length - 1]
    if (top === undefined) {
      this.#root = value
    } else if (top.keys === undefined) {
      ;(top.container as unknown[])[key as number] = value
    } else {
      // `__proto__` stays data, as JSON.parse keeps it.
      Object.defineProperty(top.container, key as string, { value, writable: true, enumerable: true, configurable: true })
      top.keys.push(key as string)
    }
  }

  /** The value, once every part is added. */
  get value(): unknown {
    if (this.#open.length > 0) throw new Error('the value is not whole yet')
    return this.#root
  }
}

const WORKER = new URL(import.meta.url.endsWith('.ts') ? './load-entry.ts' : './load-entry.js', import.meta.url)

/** `loadMappings(path)` in a worker thread; its failures are SourceErrors, its warnings passed on. */
export function loadOffThread(request: LoadRequest, warn: (message: string) => void): Promise<MappingEntry[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: request })
    let answered = false
    const assembly = new Assembly()
    const slice = new Slice()
    // A set that takes longer than the load timeout to read and parse (a YAML map of a hundred
    // thousand keys takes minutes) is refused, and its thread stopped. Once its parts come, it has
    // loaded: handing them over goes at the main thread's pace.
    const timer = setTimeout(() => {
      answered = true
      reject(new SourceError(`${request.path} did not finish loading within ${request.timeoutMs} ms (options.server.loadTimeout)`))
      void worker.terminate()
    }, request.timeoutMs)
    worker.once('exit', () => clearTimeout(timer))
    const fail = (message: string): void => {
      if (answered) return
      answered = true
      reject(new SourceError(message))
      void worker.terminate()
    }
    worker.on('message', (message: LoadMessage) => {
      if (answered) return
      if ('part' in message) {
        clearTimeout(timer)
        slice.resume()
        try {
          assembly.add(message.part)
        } catch (error) {
          fail(`${request.path} could not be loaded: ${(error as Error).message}`)
          return
        }
        // The next part once this slice of the loop allows: one part placed per turn at most. The
        // wait for the thread to send it is not the slice's time.
        const ask = (): void => {
          if (answered) return
          slice.pause()
          worker.postMessage(NEXT_PART)
        }
        if (slice.due()) void slice.next().then(ask)
        else setImmediate(ask)
        return
      }
      answered = true
      for (const warning of message.warnings) warn(warning)
      if ('error' in message) {
        reject(new SourceError(message.error))
        return
      }
      try {
        resolve(assembly.value as MappingEntry[])
      } catch (error) {
        reject(new SourceError(`${request.path} could not be loaded: ${(error as Error).message}`))
      }
    })
    worker.once('error', (error) => fail(`${request.path} could not be loaded: ${error.message}`))
    worker.once('exit', (code) => fail(`${request.path} could not be loaded: the loading thread exited with code ${code}`))
  })
}
