// Upstream bodies parsed where they can be stopped (README "Isolation", request-plugin.md §1). The
// HTML and XML parsers are libraries whose cost no check inside them bounds: a 2 MB page of one
// element with 200,000 attributes took 68 s in parse5, a 640 KB page of `<table><b>` 2.4 s, and an
// ordinary 10 MB page 5.6 s, each with the event loop blocked. On the main thread, such a body is
// parsed in a worker thread of a small pool instead, under the call's own deadline: when the
// deadline passes (or the evaluation gives up), the task is aborted and its worker terminated.
// Inside a worker thread (an isolated evaluation, say) the body is parsed in place: that thread is
// itself stopped from outside. JSON is parsed there too once it is larger than
// JSON_OFF_THREAD_BYTES: V8 parses it linearly, but a 10 MB body still held the loop for a second
// (and its depth scan with it). Text stays inline. What a thread parsed comes back narrowed to the
// call's pointer and packed into batches the main thread assembles a slice at a time (pack.ts).
import { availableParallelism } from 'node:os'
import { isMainThread } from 'node:worker_threads'
import type { Piscina } from 'piscina'
import { MissingPackageError } from '../../support/optional.js'
import type { Deadline } from './deadline.js'
import type { BodyBytes } from './body.js'
import { ResponseTooDeepError } from './depth.js'
import { bodyKind, mediaType, parseEnvelope } from './parse.js'
import type { CompiledScraper, PatternMeter } from './scraper.js'
import { sparse, unpack, type Spine } from './pack.js'

/** JSON bodies larger than this are parsed in a parse thread (from the main thread); smaller ones take well under a millisecond inline. */
export const JSON_OFF_THREAD_BYTES = 64 * 1024

/** A body to parse, as it crosses into the worker (plain data; the bytes are transferred). */
export interface ParseTask {
  readonly status: number
  readonly contentType: string | string[] | undefined
  /** The body in its segments (body.ts), joined in the worker. */
  readonly parts: readonly Uint8Array[]
  /** The scraper option as written (compiled again in the worker). */
  readonly scraper: unknown
  /** The call's `pointer` option: the worker keeps only the path to what it reads. */
  readonly pointer: unknown
  readonly url: string
}

/**
 * What the worker answers: the envelope narrowed to the pointer's path (its spine) and packed (the
 * batches are transferred), and the length of every pattern input, in order, to meter.
 */
export type ParseAnswer =
  | { readonly spine: Spine; readonly batches: readonly Uint8Array[]; readonly patternInputs: readonly number[] }
  | { readonly failure: ParseFailure; readonly patternInputs: readonly number[] }

/** A failed parse, as plain data: enough to make the plugin's own refusals again with their class. */
export interface ParseFailure {
  readonly name: string
  readonly message: string
  /** A ResponseTooDeepError's format. */
  readonly format?: string
  /** A MissingPackageError's package and feature (cheerio, not installed). */
  readonly missing?: { readonly packageName: string; readonly feature: string }
}

/** The heap a parse may use: a 10 MB page's tree takes a few hundred MiB. */
const PARSE_HEAP_MB = 1024

const WORKER = new URL(import.meta.url.endsWith('.ts') ? './parse-entry.ts' : './parse-entry.js', import.meta.url).href

/** The parse threads' pool options: here, or in the helper process (workers/helper-entry.ts). */
export function parsePoolOptions() {
  return {
    filename: WORKER,
    // Started on the first body that needs one; idle threads stop and never hold the process open.
    minThreads: 0,
    maxThreads: Math.max(1, availableParallelism()),
    idleTimeout: 30_000,
    resourceLimits: { maxOldGenerationSizeMb: PARSE_HEAP_MB },
  }
}

/** The parse threads in this process, when they are here. */
let pool: Piscina<ParseTask, ParseAnswer> | undefined

/** Where parse tasks run other than in threads of this process: the service's helper process. */
export interface ParseRunner {
  /** Whether it takes tasks now (else they run in threads of this process). */
  readonly available: boolean
  run(task: ParseTask, signal: AbortSignal): Promise<ParseAnswer>
  /** Stop its threads (started again by the next task). */
  close(): Promise<void>
}

/** Where parse tasks run instead of this process's own threads, when the service said (`parseElsewhere`). */
let elsewhere: ParseRunner | undefined

async function parsePool(): Promise<Piscina<ParseTask, ParseAnswer>> {
  if (pool !== undefined) return pool
  const { Piscina } = await import('piscina')
  pool ??= new Piscina<ParseTask, ParseAnswer>(parsePoolOptions())
  // A thread that dies outside a task must not end the process (an 'error' nobody hears would).
  pool.on('error', () => {})
  return pool
}

/**
 * From now on this process parses upstream HTML and XML bodies with `runner` (the service's helper
 * process, workers/helper-process.ts, options.helperProcess) instead of threads of its own: the
 * service's choice, made as it starts; process-wide, as the parse threads are.
 */
export function parseElsewhere(runner: ParseRunner): void {
  elsewhere = runner
}

/**
 * Where a body is parsed: in the service's helper process (`parseElsewhere`) when it is HTML or
 * XML, whose parsers' cost grows faster than the bytes (and the collecting of their trees with
 * it); in a thread of this process when it is JSON, which V8 parses linearly, so that its bytes
 * move to the thread instead of being copied through a pipe twice (twelve 10 MB bodies at once
 * cost the main thread twice its CPU through the helper process, and a 100 ms turn).
 * Undefined: parsed inline.
 */
function offThread(contentType: string | string[] | undefined, size: number): 'elsewhere' | 'thread' | undefined {
  if (!isMainThread) return undefined
  const kind = bodyKind(mediaType(contentType).essence)
  if (kind === 'html' || kind === 'xml') return elsewhere?.available === true ? 'elsewhere' : 'thread'
  return kind === 'json' && size > JSON_OFF_THREAD_BYTES ? 'thread' : undefined
}

/** What the parse of one call needs of its options. */
export interface ParseOptions {
  /** The scraper option as written, and compiled. */
  readonly scraperSpec: unknown
  readonly scraper: CompiledScraper | undefined
  readonly pointer: unknown
}

const ERRORS: Record<string, new (message: string) => Error> = { SyntaxError, TypeError, RangeError }

/** The error the worker's failure was, made again here (the plugin's own refusals keep their class). */
function failureError(failure: ParseFailure, url: string): Error {
  if (failure.name === 'ResponseTooDeepError') return new ResponseTooDeepError(url, failure.format ?? 'HTML')
  if (failure.missing !== undefined) return new MissingPackageError(failure.missing.packageName, failure.missing.feature)
  return new (Object.hasOwn(ERRORS, failure.name) ? ERRORS[failure.name]! : Error)(failure.message)
}

/**
 * The parse envelope of a response (parse.ts), HTML, XML and large JSON bodies parsed in a worker
 * thread when this is the main thread: then what comes back is the envelope narrowed to the path
 * of `pointer` (the engine's narrowing reads the same value from it). The deadline bounds the
 * parse and the assembly as it bounds the exchange; pattern inputs the scraper matched are counted
 * against the evaluation's budget here, in the order it met them. `url` is printable (redacted).
 */
export async function readEnvelope(
  status: number,
  contentType: string | string[] | undefined,
  bytes: BodyBytes,
  options: ParseOptions,
  url: string,
  meter: PatternMeter,
  deadline: Deadline
): Promise<unknown> {
  const where = offThread(contentType, bytes.length)
  if (where === undefined) return parseEnvelope(status, contentType, bytes.whole(), options.scraper, url, meter)
  // The segments own their memory: moved to a thread here, not copied (copied to the helper process).
  const parts = bytes.parts()
  const task: ParseTask = { status, contentType, parts, scraper: options.scraperSpec, pointer: options.pointer, url }
  let answer: ParseAnswer
  try {
    answer = where === 'elsewhere' ? await elsewhere!.run(task, deadline.signal) : await (await parsePool()).run(task, { signal: deadline.signal, transferList: parts.map((part) => part.buffer as ArrayBuffer) })
  } catch (error) {
    deadline.check()
    if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      throw new Error(`Parsing the response of ${url} needed more than ${PARSE_HEAP_MB} MiB`, { cause: error })
    }
    throw new Error(`Parsing the response of ${url} failed: ${(error as Error).message}`, { cause: error })
  }
  for (const length of answer.patternInputs) meter.matchInput(length)
  if ('failure' in answer) throw failureError(answer.failure, url)
  return sparse(answer.spine, await unpack(answer.batches, () => deadline.check()))
}

/** Stop the parse threads (tests and embedders that want the process to end at once); started again on the next body. */
export async function closeParseThreads(): Promise<void> {
  const running = pool
  pool = undefined
  await Promise.all([running?.destroy(), elsewhere?.close()])
}
