// Newline-delimited JSON in, one answer per line out (README "Batches"): shared by POST /map/stream
// (http/routes/stream.ts) and the CLI's `map --ndjson` (bin/commands.ts). Memory stays bounded whatever
// the size of the stream: input is read a chunk at a time and only when the output side asks for
// more (the consumer pulls the generator, so a slow reader stops the reading), a line is held whole
// only up to its byte limit (a longer one is counted to its end, never buffered), and at most
// `concurrency` answers wait for an earlier one. The bytes are read exactly: a byte order mark is
// dropped at the start of the stream (never inside it), a line's limit counts its content without
// its `\n` or `\r\n`, and a line that is not UTF-8 is an error line, never decoded with
// replacement characters. The event loop is never held: lines are answered in slices bounded by
// time and count, with a turn of the loop (setImmediate) between two, and a malformed line costs
// no stack trace and no scan past a bounded prefix.
import { isUtf8 } from 'node:buffer'
import secureJson from 'secure-json-parse'
import { jsonSyntaxProblem } from '../sources/json-syntax.js'
import { jsonNestsDeeper } from '../engine/index.js'
import { Slice } from '../engine/slices.js'
import { BadRequest, MESSAGES, PayloadTooLarge } from './errors.js'
import { MAX_BODY_DEPTH } from './json-text.js'

/** Why a line has no text: over the byte limit, or not UTF-8. */
export type LineFault = 'size' | 'utf8'

/** One line of the input: its number (from 1, empty lines counted), its text, or null with its fault. */
export interface Line {
  readonly number: number
  readonly text: string | null
  /** The line's bytes, without its `\n` or `\r\n`. */
  readonly bytes: number
  /** Set when `text` is null. */
  readonly fault: LineFault | undefined
}

const NEWLINE = 10
const CR = 13
const BOM = [0xef, 0xbb, 0xbf] as const
const EMPTY = Buffer.alloc(0)

function line(number: number, text: string | null, bytes: number, fault: LineFault | undefined): Line {
  return { number, text, bytes, fault }
}

/**
 * Cuts a byte stream into lines (`\n`, a `\r\n` alike), each decoded as UTF-8 once it is whole (a
 * character split across chunks is never cut) and only when it is UTF-8. A line past `maxBytes`
 * (its content, without the terminator) is dropped as it arrives: its number and size are kept,
 * its bytes are not. A byte order mark at the very start of the stream is skipped.
 */
export class LineSplitter {
  #parts: Buffer[] = []
  #lineBytes = 0
  #lastByte = -1
  #over = false
  #number = 0
  /** The stream's first bytes while they may still be a byte order mark; null once decided. */
  #head: Buffer | null = EMPTY
  /** Bytes read so far. */
  bytes = 0

  constructor(readonly maxBytes: number) {}

  /** Append the complete lines of `chunk` to `lines`; what follows its last newline waits for the next. */
  push(chunk: Buffer, lines: Line[]): void {
    this.bytes += chunk.length
    if (this.#head !== null) {
      chunk = this.#skipMark(chunk)
      if (chunk.length === 0) return
    }
    this.#split(chunk, lines)
  }

  /** The last line, when the input does not end with a newline. */
  end(lines: Line[]): void {
    // A stream of one or two bytes that began like a byte order mark: they are its content.
    const head = this.#head
    this.#head = null
    if (head !== null && head.length > 0) this.#split(head, lines)
    if (this.#lineBytes > 0 || this.#over) lines.push(this.#finish())
  }

  /** The chunk without a byte order mark at the stream's start (held while it may still be one). */
  #skipMark(chunk: Buffer): Buffer {
    const seen = this.#head!.length === 0 ? chunk : Buffer.concat([this.#head!, chunk])
    let matched = 0
    while (matched < 3 && matched < seen.length && seen[matched] === BOM[matched]) matched++
    if (matched === 3) {
      this.#head = null
      return seen.subarray(3)
    }
    if (matched === seen.length) {
      this.#head = seen
      return EMPTY
    }
    this.#head = null
    return seen
  }

  #split(chunk: Buffer, lines: Line[]): void {
    const first = chunk.indexOf(NEWLINE)
    if (first === -1) {
      this.#hold(chunk, 0, chunk.length)
      return
    }
    // The lines wholly inside the chunk are checked as UTF-8 at once (a newline never falls inside
    // a character); the one that began before it is checked when it is whole.
    const last = chunk.lastIndexOf(NEWLINE)
    const insideValid = last === first || isUtf8(chunk.subarray(first + 1, last))
    const max = this.maxBytes
    let start = 0
    let end = first
    for (;;) {
      if (this.#lineBytes === 0 && !this.#over) {
        // The common case, a line within one chunk: decoded in place, no copy.
        const contentEnd = end > start && chunk[end - 1] === CR ? end - 1 : end
        const bytes = contentEnd - start
        const number = ++this.#number
        if (bytes > max) lines.push(line(number, null, bytes, 'size'))
        else if ((start === 0 || !insideValid) && !isUtf8(chunk.subarray(start, contentEnd))) lines.push(line(number, null, bytes, 'utf8'))
        else lines.push(line(number, chunk.toString('utf8', start, contentEnd), bytes, undefined))
      } else {
        this.#hold(chunk, start, end)
        lines.push(this.#finish())
      }
      start = end + 1
      if (start >= chunk.length) return
      end = chunk.indexOf(NEWLINE, start)
      if (end === -1) {
        this.#hold(chunk, start, chunk.length)
        return
      }
    }
  }

  #hold(chunk: Buffer, from: number, to: number): void {
    if (to === from) return
    this.#lineBytes += to - from
    this.#lastByte = chunk[to - 1]!
    if (this.#over) return
    // One byte more than the limit may be held: the `\r` of a `\r\n` is not the line's.
    if (this.#lineBytes > this.maxBytes + 1) {
      this.#over = true
      this.#parts = []
      return
    }
    this.#parts.push(chunk.subarray(from, to))
  }

  #finish(): Line {
    const number = ++this.#number
    const bytes = this.#lastByte === CR ? this.#lineBytes - 1 : this.#lineBytes
    let text: string | null = null
    let fault: LineFault | undefined = 'size'
    if (!this.#over && bytes <= this.maxBytes) {
      const whole = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#lineBytes)
      const content = whole.subarray(0, bytes)
      if (isUtf8(content)) {
        text = content.toString('utf8')
        fault = undefined
      } else fault = 'utf8'
    }
    this.#parts = []
    this.#lineBytes = 0
    this.#lastByte = -1
    this.#over = false
    return line(number, text, bytes, fault)
  }
}

/** The most bytes of one source chunk split at once: a larger chunk is taken a piece at a time. */
const PIECE_BYTES = 65536

/**
 * Reads a stream of chunks as batches of lines, one batch per chunk (or per PIECE_BYTES of one), a
 * chunk read only when the next batch is asked for. `first` takes the first non-empty line off the front (a stream's header).
 */
export class NdjsonReader {
  readonly #source: AsyncIterator<Buffer | string>
  readonly #splitter: LineSplitter
  #held: Line[] = []
  /** What is left of a chunk larger than PIECE_BYTES. */
  #rest: Buffer | undefined = undefined
  /** The source has ended (its last line may still be held by the splitter). */
  #ended = false
  #done = false

  constructor(source: AsyncIterable<Buffer | string>, maxLineBytes: number) {
    this.#source = source[Symbol.asyncIterator]()
    this.#splitter = new LineSplitter(maxLineBytes)
  }

  /** Bytes read from the source so far. */
  get bytes(): number {
    return this.#splitter.bytes
  }

  /**
   * Whether `take` has lines (or the end) to give without waiting for the source: a piece of a
   * chunk is left, or the source has ended. Otherwise `fill` waits for its next chunk.
   */
  get ready(): boolean {
    return this.#rest !== undefined || this.#ended || this.#done
  }

  /** Wait for the source's next chunk (or its end), for `take`. */
  async fill(): Promise<void> {
    if (this.ready) return
    const next = await this.#source.next()
    if (next.done === true) this.#ended = true
    else this.#rest = typeof next.value === 'string' ? Buffer.from(next.value) : next.value
  }

  /**
   * The lines of the next piece of what `fill` read (possibly none: a piece inside a long line),
   * or undefined at the end; synchronous, so the splitting is part of whoever's slice calls it. A
   * chunk larger than PIECE_BYTES is split a piece per call, so no call does work that grows with
   * the chunk the source happened to deliver.
   */
  take(): Line[] | undefined {
    if (this.#done) return undefined
    const lines: Line[] = []
    if (this.#rest === undefined) {
      if (!this.#ended) return lines
      this.#done = true
      this.#splitter.end(lines)
      return lines.length === 0 ? undefined : lines
    }
    let chunk = this.#rest
    if (chunk.length > PIECE_BYTES) {
      this.#rest = chunk.subarray(PIECE_BYTES)
      chunk = chunk.subarray(0, PIECE_BYTES)
    } else this.#rest = undefined
    this.#splitter.push(chunk, lines)
    return lines
  }

  /** The lines `first` held back (the header's neighbours), taken once. */
  held(): Line[] {
    const held = this.#held
    this.#held = []
    return held
  }

  /** Ends reading early: the source is let go. */
  async close(): Promise<void> {
    if (!this.#done) {
      this.#done = true
      await this.#source.return?.()
    }
  }

  /** The first line that is not empty (or undefined at the end); the lines before it are skipped. */
  async first(): Promise<Line | undefined> {
    const slice = new Slice()
    for (;;) {
      while (this.#held.length === 0) {
        // Megabytes of blank lines before the header are read in slices too.
        if (slice.due()) await slice.next()
        await slice.wait(this.fill())
        const lines = this.take()
        if (lines === undefined) return undefined
        this.#held = lines
      }
      const line = this.#held.shift()!
      if (!isBlank(line)) return line
    }
  }
}

/** An empty line, or one of JSON whitespace only (space, tab, carriage return): skipped, never answered. */
export function isBlank(line: Line): boolean {
  const text = line.text
  if (text === null) return false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c !== 32 && c !== 9 && c !== 13) return false
  }
  return true
}

/**
 * An error of the catalogue made without a stack trace: a line's refusal is answered, never
 * logged, and a stream may carry a million of them (capturing a stack costs more than the rest).
 */
function lineError<T extends Error>(make: () => T): T {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return make()
  } finally {
    Error.stackTraceLimit = limit
  }
}

/** A line past the limit: 413 PayloadTooLarge, as a /map body past it. */
export function lineTooLarge(line: Line, maxBytes: number): Error {
  return lineError(() => Object.assign(new PayloadTooLarge(maxBytes), { message: `Line ${line.number} exceeds the ${maxBytes}-byte limit (${line.bytes} bytes)` }))
}

/** A line whose bytes are not UTF-8: 400 BadRequest, rather than text changed by replacement characters. */
export function lineNotUtf8(line: Line): Error {
  return lineError(() => new BadRequest(`Line ${line.number} is not valid UTF-8`))
}

/** How much of a malformed line is scanned for where it stops being JSON, when JSON.parse does not say. */
export const SCAN_CHARS = 65536

/** Where V8's JSON.parse message says the text stops being JSON (Node 20: not for every error). */
const POSITION = / at position (\d+)/

/**
 * ` (column 7): unexpected "}"` for a line JSON.parse refused, or empty when the place is not
 * known: from the parser's own message where it gives a position, else from a scan of at most
 * SCAN_CHARS characters (the line's first ones), so a refusal costs no more than that.
 */
function whereLineFails(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : ''
  let position: number | undefined
  const stated = POSITION.exec(message)
  if (stated !== null) position = Number(stated[1])
  else if (message.startsWith('Unexpected end of JSON input')) position = text.length
  else {
    const truncated = text.length > SCAN_CHARS
    const problem = jsonSyntaxProblem(truncated ? text.slice(0, SCAN_CHARS) : text)
    // In a prefix, "unexpected end of input" is where the prefix ends, not the line.
    if (problem !== undefined && !(truncated && problem.column - 1 >= SCAN_CHARS)) position = problem.column - 1
  }
  if (position === undefined || position > text.length) return ''
  const found = text.codePointAt(position)
  return ` (column ${position + 1}): ${found === undefined ? 'unexpected end of input' : `unexpected ${JSON.stringify(String.fromCodePoint(found))}`}`
}

/** The first character of a JSON text (after whitespace): { [ " - 0-9 t f n. */
function mayStartJson(c: number): boolean {
  return c === 123 || c === 91 || c === 34 || c === 45 || (c >= 48 && c <= 57) || c === 116 || c === 102 || c === 110
}

function notJson(line: Line, where: string): Error {
  return lineError(() => new BadRequest(`${MESSAGES.invalidJson.replace('Body', `Line ${line.number}`)}${where}`))
}

/**
 * One line's JSON, read as a /map body is (http/plugins/body.ts): at most MAX_BODY_DEPTH levels, no
 * `__proto__` or `constructor.prototype` key. A line that is not JSON is 400 BadRequest naming the
 * column where it stops being JSON; one over the limit 413; one that is not UTF-8 400. None of
 * these refusals captures a stack trace.
 */
export function parseLine(line: Line, maxBytes: number): unknown {
  const text = line.text
  if (text === null) throw line.fault === 'utf8' ? lineNotUtf8(line) : lineTooLarge(line, maxBytes)
  if (jsonNestsDeeper(text, MAX_BODY_DEPTH)) throw lineError(() => new BadRequest(`Line ${line.number} must not nest deeper than ${MAX_BODY_DEPTH} levels`))
  // Most garbage is refused by its first character, without a parser's exception.
  let at = 0
  while (at < text.length && (text.charCodeAt(at) === 32 || text.charCodeAt(at) === 9 || text.charCodeAt(at) === 13)) at++
  if (at < text.length && !mayStartJson(text.charCodeAt(at))) {
    throw notJson(line, ` (column ${at + 1}): unexpected ${JSON.stringify(String.fromCodePoint(text.codePointAt(at)!))}`)
  }
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  let parsed: unknown
  try {
    try {
      parsed = JSON.parse(text)
    } catch (error) {
      throw notJson(line, whereLineFails(text, error))
    }
    if (text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')) {
      try {
        parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
      } catch {
        throw lineError(() => new BadRequest(`Line ${line.number} must not contain __proto__ or constructor.prototype keys`))
      }
    }
  } finally {
    Error.stackTraceLimit = limit
  }
  return parsed
}

/** An error as an answer line: `{"line":n,"status":s,"error":{ code, message, ...extra }}` and a newline. */
export function errorLine(line: number, status: number, body: Record<string, unknown>): string {
  return `${JSON.stringify({ line, status, error: body })}\n`
}

/** How a stream's lines are answered. */
export interface Answering {
  /** Answers that may be in flight at once (promises of plugins), output order kept; 1: one at a time. */
  readonly concurrency: number
  readonly maxLineBytes: number
  /** One input's answer line (its envelope's text and a newline), or a promise of it; may throw. */
  evaluate(input: unknown, line: number): string | Promise<string>
  /** The error line of a line that failed: not JSON, over the limit, or its evaluation threw. */
  fail(line: number, error: unknown): string
  /**
   * Ends the answers early when aborted: no line starts after it, none still running is waited
   * for (or answered), and the abort's reason is the last line (through `fail`, numbered as the
   * first line left unanswered), unless it is a ClientGone: nobody is there to read it.
   */
  readonly signal?: AbortSignal
}

/** The reason a stream stops when its client has left: no last line is written. */
export class ClientGone extends Error {
  constructor() {
    super('the client closed the request')
  }
}

/** Lines (blank ones included) one slice may take, however fast they go. */
export const SLICE_LINES = 1024
/** Bytes of lines after which the clock is read, whatever the count. */
const CHECK_BYTES = 65536

/** An answer waiting for the ones before it: its text once settled. */
interface Pending {
  readonly number: number
  text: string | undefined
  settled: Promise<void> | undefined
}

function pending(number: number, answered: string | Promise<string>): Pending {
  if (typeof answered === 'string') return { number, text: answered, settled: undefined }
  const waiting: Pending = { number, text: undefined, settled: undefined }
  waiting.settled = answered.then((text) => {
    waiting.text = text
  })
  return waiting
}

/** Where the answers go: the response, standard output, a test's array. */
export interface LinesOutput {
  /** Take `text` (whole answer lines), synchronously; false when the reader should be let catch up first. */
  write(text: string): boolean
  /** Resolves once the reader has caught up after `write` returned false. */
  drain(): Promise<void>
}

const STOPPED = Symbol('stopped')

/**
 * Answers every line `reader` has left into `output`, in input order, a write per slice or per
 * wait. A line that evaluates synchronously is answered at once; asynchronous answers run up to
 * `concurrency` at a time. However many lines a chunk brings, the work runs in slices
 * (engine/slices.ts) of at most SLICE_MS and SLICE_LINES, the event loop getting a turn between
 * two, so other requests are served meanwhile (and, while they wait, most of the loop). A slice is
 * charged with all the stream's own work on the thread: cutting the chunk into lines, parsing,
 * evaluating, printing and writing the answers. Only the waits are not its (for the source's next
 * chunk, for an answer, for the reader to catch up), so the share the stream takes while others
 * wait is the share of the thread it really uses. `answering.signal` stops it at once, even while
 * a read or an answer is awaited; the source is then let go.
 */
export async function answerLines(reader: NdjsonReader, answering: Answering, output: LinesOutput): Promise<void> {
  const { concurrency, signal } = answering
  const queue: Pending[] = []
  let out = ''
  let lastNumber = 0
  const stopped =
    signal === undefined
      ? undefined
      : new Promise<typeof STOPPED>((resolve) => {
        if (signal.aborted) resolve(STOPPED)
        else signal.addEventListener('abort', () => resolve(STOPPED), { once: true })
      })
  const slice = new Slice()
  const until = <T>(promise: Promise<T>): Promise<T | typeof STOPPED> => slice.wait<T | typeof STOPPED>(stopped === undefined ? promise : Promise.race([promise, stopped]))
  const answer = (line: Line): string | Promise<string> => {
    try {
      const answered = answering.evaluate(parseLine(line, answering.maxLineBytes), line.number)
      // A line still running when the stream stops is not answered (its abort is not its failure).
      return typeof answered === 'string' ? answered : answered.catch((error: unknown) => (signal?.aborted === true ? '' : answering.fail(line.number, error)))
    } catch (error) {
      return answering.fail(line.number, error)
    }
  }
  /** What is answered goes out (the write is the slice's); false: stopped while the reader caught up. */
  async function flush(): Promise<boolean> {
    if (out === '') return true
    const text = out
    out = ''
    return output.write(text) || (await until(output.drain())) !== STOPPED
  }
  /** Take answers off the queue until `left` remain, waiting for each in turn; what is ready goes out before a wait. False: stopped. */
  async function settle(left: number): Promise<boolean> {
    while (queue.length > left) {
      const head = queue[0]!
      if (head.text === undefined) {
        if (!(await flush())) return false
        if ((await until(head.settled!)) === STOPPED) return false
      }
      out += head.text
      queue.shift()
    }
    return true
  }
  let reading = false
  let finished = false
  let sliceLines = 0
  let sliceBytes = 0
  try {
    let halted = false
    let batch: Line[] | undefined = reader.held()
    for (;;) {
      if (batch.length === 0) {
        if (!reader.ready) {
          reading = true
          const read = await until(reader.fill())
          reading = false
          if (read === STOPPED) break
        }
        batch = reader.take()
        if (batch === undefined) {
          finished = true
          break
        }
      }
      for (const line of batch) {
        // The clock is read every eighth line, or after 64 KiB of lines: a line costs about its bytes.
        let due = ++sliceLines > SLICE_LINES
        sliceBytes += line.bytes
        if (!due && ((sliceLines & 7) === 0 || sliceBytes >= CHECK_BYTES)) {
          sliceBytes = 0
          due = slice.due()
        }
        if (due) {
          while (queue.length > 0 && queue[0]!.text !== undefined) out += queue.shift()!.text
          if (!(await flush())) {
            halted = true
            break
          }
          await slice.next()
          sliceLines = 1
          sliceBytes = 0
        }
        if (signal?.aborted === true) {
          halted = true
          break
        }
        lastNumber = line.number
        if (isBlank(line)) continue
        const answered = answer(line)
        if (typeof answered === 'string' && queue.length === 0) {
          out += answered
          continue
        }
        queue.push(pending(line.number, answered))
        if (queue.length >= concurrency && !(await settle(concurrency - 1))) {
          halted = true
          break
        }
      }
      batch = []
      if (halted) break
      // What is ready goes out with the batch; what is still running waits for the next one.
      while (queue.length > 0 && queue[0]!.text !== undefined) out += queue.shift()!.text
      if (!(await flush())) break
      // The check of the clock between batches too: a batch may be all one long line.
      if (slice.due()) {
        await slice.next()
        sliceLines = 0
        sliceBytes = 0
      }
    }
    let complete = false
    if (finished && (await settle(0))) {
      complete = true
      if (out !== '') output.write(out)
    }
    if (!complete && signal?.aborted === true && !(signal.reason instanceof ClientGone)) {
      // Stopped (finished or not): what was answered, then the reason as the last line.
      while (queue.length > 0 && queue[0]!.text !== undefined) out += queue.shift()!.text
      output.write(out + answering.fail(queue[0]?.number ?? lastNumber + 1, signal.reason))
    }
  } finally {
    if (!finished) {
      // A read still pending cannot be returned until it settles: the caller ends the source.
      const closing = reader.close()
      if (reading) closing.catch(() => {})
      else await closing
    }
  }
}
