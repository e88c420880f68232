// Newline-delimited JSON in, one answer per line out (README "Batches"): shared by POST /map/stream
// (routes/stream.ts) and the CLI's `map --ndjson` (bin/commands.ts). Memory stays bounded whatever
// the size of the stream: input is read a chunk at a time and only when the output side asks for
// more (the consumer pulls the generator, so a slow reader stops the reading), a line is held whole
// only up to its byte limit (a longer one is counted to its end, never buffered), and at most
// `concurrency` answers wait for an earlier one.
import secureJson from 'secure-json-parse'
import { whereJsonFails } from '../config/json-syntax.js'
import { jsonNestsDeeper } from '../engine/index.js'
import { BadRequest, MESSAGES, PayloadTooLarge } from '../errors.js'
import { MAX_BODY_DEPTH } from '../plugins/body.js'

/** One line of the input: its number (from 1, empty lines counted), its text, or null past the byte limit. */
export interface Line {
  readonly number: number
  readonly text: string | null
  /** The line's bytes, without its newline. */
  readonly bytes: number
}

const NEWLINE = 10

/**
 * Cuts a byte stream into lines (`\n`, a `\r` before it dropped), each decoded as UTF-8 once it is
 * whole (a character split across chunks is never cut). A line past `maxBytes` is dropped as it
 * arrives: its number and size are kept, its bytes are not.
 */
export class LineSplitter {
  #parts: Buffer[] = []
  #lineBytes = 0
  #over = false
  #number = 0
  /** Bytes read so far. */
  bytes = 0

  constructor(readonly maxBytes: number) {}

  /** Append the complete lines of `chunk` to `lines`; what follows its last newline waits for the next. */
  push(chunk: Buffer, lines: Line[]): void {
    this.bytes += chunk.length
    let start = 0
    for (;;) {
      const end = chunk.indexOf(NEWLINE, start)
      if (end === -1) {
        if (start < chunk.length) this.#hold(chunk, start, chunk.length)
        return
      }
      if (this.#lineBytes === 0 && !this.#over) {
        // The common case, a line within one chunk: decoded in place, no copy.
        const bytes = end - start
        this.#number++
        lines.push({ number: this.#number, text: bytes > this.maxBytes ? null : decode(chunk, start, end), bytes })
      } else {
        this.#hold(chunk, start, end)
        lines.push(this.#finish())
      }
      start = end + 1
    }
  }

  /** The last line, when the input does not end with a newline. */
  end(lines: Line[]): void {
    if (this.#lineBytes > 0 || this.#over) lines.push(this.#finish())
  }

  #hold(chunk: Buffer, from: number, to: number): void {
    this.#lineBytes += to - from
    if (this.#over) return
    if (this.#lineBytes > this.maxBytes) {
      this.#over = true
      this.#parts = []
      return
    }
    this.#parts.push(chunk.subarray(from, to))
  }

  #finish(): Line {
    this.#number++
    const bytes = this.#lineBytes
    let text: string | null = null
    if (!this.#over) {
      const whole = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, bytes)
      text = decode(whole, 0, whole.length)
    }
    this.#parts = []
    this.#lineBytes = 0
    this.#over = false
    return { number: this.#number, text, bytes }
  }
}

function decode(buffer: Buffer, start: number, end: number): string {
  if (end > start && buffer[end - 1] === 13) end--
  return buffer.toString('utf8', start, end)
}

/**
 * Reads a stream of chunks as batches of lines, one batch per chunk, a chunk read only when the
 * next batch is asked for. `first` takes the first non-empty line off the front (a stream's header).
 */
export class NdjsonReader {
  readonly #source: AsyncIterator<Buffer | string>
  readonly #splitter: LineSplitter
  #held: Line[] = []
  #done = false

  constructor(source: AsyncIterable<Buffer | string>, maxLineBytes: number) {
    this.#source = source[Symbol.asyncIterator]()
    this.#splitter = new LineSplitter(maxLineBytes)
  }

  /** Bytes read from the source so far. */
  get bytes(): number {
    return this.#splitter.bytes
  }

  async #read(): Promise<Line[] | undefined> {
    if (this.#done) return undefined
    const lines: Line[] = []
    while (lines.length === 0) {
      const next = await this.#source.next()
      if (next.done === true) {
        this.#done = true
        this.#splitter.end(lines)
        return lines.length === 0 ? undefined : lines
      }
      const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value
      this.#splitter.push(chunk, lines)
    }
    return lines
  }

  /** The first line that is not empty (or undefined at the end); the lines before it are skipped. */
  async first(): Promise<Line | undefined> {
    for (;;) {
      if (this.#held.length === 0) {
        const lines = await this.#read()
        if (lines === undefined) return undefined
        this.#held = lines
      }
      const line = this.#held.shift()!
      if (!isBlank(line)) return line
    }
  }

  /** Every line left, a batch at a time. Ending early (return) stops reading the source. */
  async * batches(): AsyncGenerator<readonly Line[]> {
    try {
      if (this.#held.length > 0) {
        const held = this.#held
        this.#held = []
        yield held
      }
      for (;;) {
        const lines = await this.#read()
        if (lines === undefined) return
        yield lines
      }
    } finally {
      if (!this.#done) await this.#source.return?.()
    }
  }
}

/** An empty line, or one of whitespace only: skipped, never answered. */
export function isBlank(line: Line): boolean {
  const text = line.text
  if (text === null) return false
  if (text.length === 0) return true
  const c = text.charCodeAt(0)
  return (c === 32 || c === 9 || c === 13) && text.trim() === ''
}

/** A line past the limit: 413 PayloadTooLarge, as a /map body past it. */
export function lineTooLarge(line: Line, maxBytes: number): Error {
  return Object.assign(new PayloadTooLarge(maxBytes), { message: `Line ${line.number} exceeds the ${maxBytes}-byte limit (${line.bytes} bytes)` })
}

/**
 * One line's JSON, read as a /map body is (plugins/body.ts): a byte order mark before the first
 * line allowed, at most MAX_BODY_DEPTH levels, no `__proto__` or `constructor.prototype` key. A
 * line that is not JSON is 400 BadRequest naming the column where it stops being JSON.
 */
export function parseLine(line: Line, maxBytes: number): unknown {
  let text = line.text
  if (text === null) throw lineTooLarge(line, maxBytes)
  if (line.number === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  if (jsonNestsDeeper(text, MAX_BODY_DEPTH)) throw new BadRequest(`Line ${line.number} must not nest deeper than ${MAX_BODY_DEPTH} levels`)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    // One line: the scan's "line 1" is this line, named by its number instead.
    throw new BadRequest(`${MESSAGES.invalidJson.replace('Body', `Line ${line.number}`)}${whereJsonFails(text).replace(/^ \(line 1, /, ' (')}`)
  }
  if (text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')) {
    try {
      parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
    } catch {
      throw new BadRequest(`Line ${line.number} must not contain __proto__ or constructor.prototype keys`)
    }
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
}

/** An answer waiting for the ones before it: its text once settled. */
interface Pending {
  text: string | undefined
  settled: Promise<void> | undefined
}

function pending(answered: string | Promise<string>): Pending {
  if (typeof answered === 'string') return { text: answered, settled: undefined }
  const waiting: Pending = { text: undefined, settled: undefined }
  waiting.settled = answered.then((text) => {
    waiting.text = text
  })
  return waiting
}

/**
 * The answers to `batches`, in input order, one string per batch (or per wait). A line that
 * evaluates synchronously is answered at once; asynchronous answers run up to `concurrency` at a
 * time. Ending the generator early (the reader left) stops reading and evaluating.
 */
export async function * answerLines(batches: AsyncIterable<readonly Line[]>, answering: Answering): AsyncGenerator<string> {
  const { concurrency } = answering
  const queue: Pending[] = []
  let out = ''
  const answer = (line: Line): string | Promise<string> => {
    try {
      const answered = answering.evaluate(parseLine(line, answering.maxLineBytes), line.number)
      return typeof answered === 'string' ? answered : answered.catch((error: unknown) => answering.fail(line.number, error))
    } catch (error) {
      return answering.fail(line.number, error)
    }
  }
  /** Take answers off the queue until `left` remain, waiting for each in turn; what is ready goes out before a wait. */
  async function * settle(left: number): AsyncGenerator<string> {
    while (queue.length > left) {
      const head = queue[0]!
      if (head.text === undefined) {
        if (out !== '') {
          yield out
          out = ''
        }
        await head.settled
      }
      out += head.text
      queue.shift()
    }
  }
  for await (const lines of batches) {
    for (const line of lines) {
      if (isBlank(line)) continue
      const answered = answer(line)
      if (typeof answered === 'string' && queue.length === 0) {
        out += answered
        continue
      }
      queue.push(pending(answered))
      if (queue.length >= concurrency) yield * settle(concurrency - 1)
    }
    // What is ready goes out with the batch; what is still running waits for the next one.
    while (queue.length > 0 && queue[0]!.text !== undefined) out += queue.shift()!.text
    if (out !== '') {
      yield out
      out = ''
    }
  }
  yield * settle(0)
  if (out !== '') yield out
}
