// Request bodies (http.md §2): parsed as JSON whatever the Content-Type (a client that forgets the
// header still works), with the prototype-poisoning guard, and refused past `maxBodyBytes` while
// streaming, so a chunked body is never buffered past the limit, refused when its bytes are not
// UTF-8 (never decoded with replacement characters), and refused when it nests deeper than
// MAX_BODY_DEPTH before it is parsed. The work a body's size sets (decoding, counting, scanning,
// parsing) takes at most BODY_TURN_MS of a turn for all bodies together: a short body alone is
// parsed the turn it arrives; a long one, or one arriving with many others, goes on a slice per
// turn, and keeps to the share of a busy loop that sliced work has (engine/slices.ts). One with more values than the main thread should build (service/json-text.ts) is checked
// by a strict scan and keeps its object and array members as text (JsonText), parsed and evaluated
// in a worker thread.
import { errorCodes, type FastifyReply, type FastifyRequest } from 'fastify'
import { isUtf8 } from 'node:buffer'
import fp from 'fastify-plugin'
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox'
import secureJson from 'secure-json-parse'
import { whereJsonFails } from '../../sources/json-syntax.js'
import { jsonNestsDeeper } from '../../engine/index.js'
import { Slice } from '../../engine/slices.js'
import { BadRequest, MESSAGES } from '../../service/errors.js'
import { JsonCount, JsonScan, LARGE_BODY_CHARS, LARGE_BODY_VALUES, largeBody, MAX_BODY_DEPTH, parseJsonText, POISONED_BODY, whereJsonStops } from '../../service/json-text.js'

export { MAX_BODY_DEPTH }

interface BodyPluginOptions {
  readonly maxBodyBytes: number
}

/** Route hook: no body at all (nothing sent) is as malformed as an empty one. */
export function requireBody(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  done(request.body === undefined ? new BadRequest(MESSAGES.invalidJson) : undefined)
}

const DEEP_BODY = `Body must not nest deeper than ${MAX_BODY_DEPTH} levels`

/** Characters of a long body scanned strictly at a time: well under a millisecond's work. */
const SCAN_SLICE_CHARS = 32 * 1024

/** Characters of a long body counted at a time (`JsonCount` reads strings by indexOf): as quick. */
const COUNT_SLICE_CHARS = 128 * 1024

/** Bytes of a body checked as UTF-8 and decoded at a time: a fraction of a millisecond. */
const DECODE_SLICE_BYTES = 128 * 1024

/**
 * Main-thread time (ms) that bodies' work (decoding, counting, scanning, parsing) takes in one turn
 * of the event loop, however many bodies are waiting: a hundred long bodies whose last bytes arrive
 * together take a hundred times as many turns, not a hundred times as long a turn.
 */
const BODY_TURN_MS = 4

/** A body this short (bytes) is parsed at once, whatever else the turn holds (`begin`). */
const UNCOUNTED_BODY_BYTES = 4096

/** One body's next piece of work; says whether the body is done (answered, or refused). */
type Step = () => boolean

/** Bodies whose work goes on in later turns, taken in turn a step at a time. */
const waiting: Step[] = []
/** Whether `bodyTurns` is working through `waiting` (between its slices too). */
let turning = false
/** Time bodies took in this turn before `bodyTurns` (those that arrived and were done at once). */
let spentThisTurn = 0
let resetScheduled = false
const resetSpent = (): void => {
  spentThisTurn = 0
  resetScheduled = false
}

/**
 * Steps of the waiting bodies, in turn, a slice (engine/slices.ts) of at most BODY_TURN_MS at a
 * time, until none waits.
 */
async function bodyTurns(): Promise<void> {
  turning = true
  try {
    const slice = new Slice(BODY_TURN_MS)
    while (waiting.length > 0) {
      if (slice.due()) await slice.next()
      const step = waiting.shift()!
      if (!step()) waiting.push(step)
    }
  } finally {
    turning = false
  }
}

/** `step` goes after the bodies waiting, a step per turn (bodyTurns). */
function queue(step: Step): void {
  waiting.push(step)
  if (!turning) void bodyTurns()
}

/**
 * A body's work begins. A body of at most UNCOUNTED_BODY_BYTES is parsed at once, with no account
 * kept of it. A short body (at most LARGE_BODY_CHARS bytes) is decoded and parsed at once too, in
 * the turn its last bytes arrived, while no body waits and the bodies of this turn have taken less
 * than BODY_TURN_MS: the common case, answered as it always was. Any other body goes after those
 * before it, a step per turn, its first step at once when none waits; as sliced work, it keeps to
 * its share of a busy loop (engine/slices.ts). A body whose first step does not finish it goes on
 * the same way, whichever path it took.
 */
function begin(step: Step, bytes: number): void {
  // A body of a few kilobytes costs less to parse than its request costs the service anyway
  // (routing, the handler, the answer): no account is kept of it, and no turn is waited for.
  if (bytes <= UNCOUNTED_BODY_BYTES) {
    if (!step()) queue(step)
    return
  }
  if (turning || bytes > LARGE_BODY_CHARS || spentThisTurn >= BODY_TURN_MS) {
    queue(step)
    return
  }
  const began = performance.now()
  const finished = step()
  spentThisTurn += performance.now() - began
  if (!resetScheduled) {
    resetScheduled = true
    setImmediate(resetSpent)
  }
  if (!finished) queue(step)
}

/**
 * Where the last whole character of `bytes` ends: their length, or where a character cut short at
 * their end (its other bytes in the next chunk) begins. Bytes that are not UTF-8 are left for
 * `isUtf8` to refuse.
 */
function wholeCharactersEnd(bytes: Buffer): number {
  for (let at = bytes.length - 1; at >= 0 && at >= bytes.length - 4; at--) {
    const byte = bytes[at]!
    if ((byte & 0xc0) === 0x80) continue
    const length = byte < 0xc0 ? 1 : byte < 0xe0 ? 2 : byte < 0xf0 ? 3 : 4
    return at + length <= bytes.length ? bytes.length : at
  }
  return bytes.length
}

const NOT_UTF8 = 'Body must be valid JSON: its bytes are not UTF-8'

/**
 * A body's bytes, as text, then parsed (`parseText`): checked as UTF-8 and decoded
 * DECODE_SLICE_BYTES at a time (a character cut between two chunks is decoded whole), so that a
 * long body is never decoded in one go. Bytes that are not UTF-8 are refused with 400, never
 * replaced by U+FFFD: the data would be changed without a word.
 */
function bodyStep(request: FastifyRequest, chunks: Buffer[], done: Done): Step {
  let text = ''
  let next = 0
  let carried: Buffer | undefined
  let parsing: Step | undefined
  const work = (): boolean => {
    if (parsing !== undefined) return parsing()
    let decoded = 0
    while (next < chunks.length && decoded < DECODE_SLICE_BYTES) {
      let bytes = chunks[next]!
      chunks[next++] = EMPTY
      if (carried !== undefined) {
        bytes = Buffer.concat([carried, bytes])
        carried = undefined
      }
      const end = next === chunks.length ? bytes.length : wholeCharactersEnd(bytes)
      if (end < bytes.length) {
        carried = bytes.subarray(end)
        bytes = bytes.subarray(0, end)
      }
      if (!isUtf8(bytes)) return refuse(done, new BadRequest(NOT_UTF8))
      text += bytes.toString('utf8')
      decoded += bytes.length
    }
    if (next < chunks.length) return false
    parsing = parseText(request, text, done)
    return parsing === undefined || parsing()
  }
  // Not expected (each step answers the failures it knows): answered all the same, never left waiting.
  return () => {
    try {
      return work()
    } catch (error) {
      return refuse(done, error as Error)
    }
  }
}

const EMPTY = Buffer.alloc(0)

/**
 * A body of one chunk of at most UNCOUNTED_BODY_BYTES: what `bodyStep` and `begin` would do with
 * it (checked as UTF-8, decoded, parsed at once), without making either.
 */
function shortBody(request: FastifyRequest, bytes: Buffer, done: Done): void {
  if (!isUtf8(bytes)) {
    done(new BadRequest(NOT_UTF8), undefined)
    return
  }
  try {
    // Never a long body's step: the text is far shorter than LARGE_BODY_CHARS.
    parseText(request, bytes.toString('utf8'), done)
  } catch (error) {
    done(error as Error, undefined)
  }
}

type Done = (error: Error | null, body?: unknown) => void

/**
 * A body longer than LARGE_BODY_CHARS, read a slice per turn: its values counted (`JsonCount`),
 * then, holding few, parsed at once; holding many, checked by a strict scan (`JsonScan`) and made
 * a large body (`largeBody`: its scalars parsed, its objects and arrays kept as text for a worker).
 * A body that is not JSON is refused where the strict scan finds it stops being JSON, never by
 * building what comes before.
 */
function longBodyStep(request: FastifyRequest, text: string, done: Done): Step {
  const count = new JsonCount(text, MAX_BODY_DEPTH)
  let scan: JsonScan | undefined
  // JSON.parse refused the text: the scan only says where.
  let refused = false
  const step = (): boolean => {
    if (scan === undefined) {
      const values = count.run(COUNT_SLICE_CHARS)
      if (values === undefined) return false
      if (values < 0) {
        done(new BadRequest(DEEP_BODY), undefined)
        return true
      }
      if (values <= LARGE_BODY_VALUES) {
        let parsed: unknown
        try {
          parsed = parseJsonText(text)
        } catch (error) {
          if (!(error instanceof SyntaxError)) {
            done(error as Error, undefined)
            return true
          }
          refused = true
        }
        if (!refused) {
          request.bodyText = text
          done(null, parsed)
          return true
        }
      }
      scan = new JsonScan(text, MAX_BODY_DEPTH)
      return false
    }
    const scanned = scan.run(SCAN_SLICE_CHARS)
    if (scanned === undefined) return false
    if (scanned.kind === 'deep') return refuse(done, new BadRequest(DEEP_BODY))
    if (scanned.kind === 'invalid') return refuse(done, new BadRequest(`${MESSAGES.invalidJson}${whereJsonStops(text, scanned.at)}`))
    if (refused) return refuse(done, new BadRequest(MESSAGES.invalidJson))
    let body: unknown
    try {
      body = largeBody(scanned.members)
    } catch (error) {
      return refuse(done, error as Error)
    }
    request.bodyText = text
    done(null, body)
    return true
  }
  return step
}

/** A body refused: done, and its step with it. */
function refuse(done: Done, error: Error): true {
  done(error, undefined)
  return true
}

/**
 * A body's text parsed: a short one at once (returns undefined, `done` called); a long one by the
 * step it returns (`longBodyStep`).
 */
function parseText(request: FastifyRequest, text: string, done: Done): Step | undefined {
  // A leading byte order mark is allowed (RFC 8259 §8.1 lets a parser ignore it).
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  if (text.trim() === '') return answered(done, new BadRequest(MESSAGES.invalidJson))
  if (text.length > LARGE_BODY_CHARS) return longBodyStep(request, text, done)
  if (jsonNestsDeeper(text, MAX_BODY_DEPTH)) return answered(done, new BadRequest(DEEP_BODY))
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    // Only a refused body pays for the scan that names where it stops being JSON.
    return answered(done, new BadRequest(`${MESSAGES.invalidJson}${whereJsonFails(text)}`))
  }
  // A second, careful pass only when a dangerous key could be present at all (spelled out, or
  // hidden behind a \u escape such as "\u005f_proto__").
  if (text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')) {
    try {
      parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
    } catch {
      return answered(done, new BadRequest(POISONED_BODY))
    }
  }
  request.bodyText = text
  done(null, parsed)
  return undefined
}

/** A short body refused: done, no step left. */
function answered(done: Done, error: Error): undefined {
  done(error, undefined)
  return undefined
}

/** The request's body as Fastify hands it to a parser: the request itself, or what a preParsing hook made of it. */
type Payload = NodeJS.ReadableStream & { receivedEncodedLength?: number }

/**
 * Reads a body's bytes, as Fastify's own parsers do (a body past `limit` bytes refused with 413 as
 * soon as it is, by its Content-Length or while it streams; one whose length differs from its
 * Content-Length 400; a read that fails 400), keeping its chunks as they arrive; once it has all
 * arrived, its work begins (`begin`): decoded and parsed at once when it is short and the turn has
 * time, in slices otherwise.
 */
function readBody(request: FastifyRequest, payload: Payload, limit: number, done: Done): void {
  const declared = Number(request.headers['content-length'])
  if (declared > limit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), undefined)
  const chunks: Buffer[] = []
  let received = 0
  const detach = (): void => {
    payload.removeListener('data', onData)
    payload.removeListener('end', onEnd)
    payload.removeListener('error', onEnd)
  }
  function onData(chunk: Buffer | string): void {
    // A preParsing stream may give strings.
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    received += bytes.length
    if (received > limit || (payload.receivedEncodedLength ?? 0) > limit) {
      detach()
      done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), undefined)
      return
    }
    chunks.push(bytes)
  }
  function onEnd(error?: Error & { statusCode?: number }): void {
    detach()
    if (error != null) {
      if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400
      return done(error, undefined)
    }
    if (!Number.isNaN(declared) && (payload.receivedEncodedLength || received) !== declared) {
      return done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH(), undefined)
    }
    // The common case, one short chunk: decoded and parsed at once, without the steps a longer body takes.
    if (chunks.length === 1 && received <= UNCOUNTED_BODY_BYTES) return shortBody(request, chunks[0]!, done)
    begin(bodyStep(request, chunks, done), received)
  }
  payload.on('data', onData)
  payload.on('end', onEnd)
  payload.on('error', onEnd)
  payload.resume()
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON text the body was parsed from (its byte order mark dropped); empty when there is none. */
    bodyText: string
  }
}

export const bodyPlugin = fp<BodyPluginOptions>(
  async (app, { maxBodyBytes }) => {
    // Fastify refuses a Content-Type it cannot read as a media type (`json`, an empty value) with
    // 415 before any parser runs; every body here is JSON, so the header is simply not consulted.
    // A callback hook (no promise per request) that leaves the common header alone: deleting a
    // member turns the headers object into a slow dictionary for every later read.
    app.addHook('onRequest', (request, _reply, done) => {
      const type = request.raw.headers['content-type']
      if (type !== undefined && type !== 'application/json') delete request.raw.headers['content-type']
      done()
    })
    app.decorateRequest('bodyText', '')
    app.removeAllContentTypeParsers()
    // Validation without coercion: `{ "mapping": 5 }` is a bad request, not the id "5".
    app.setValidatorCompiler(TypeBoxValidatorCompiler)
    // Every body is read by `readBody` (not by Fastify's string parser, which decodes a body whole
    // in the turn its last bytes arrive). The catch-all takes every body; `application/json` is
    // also named so that Fastify finds its parser in its cache (a request matched only by the
    // catch-all has its Content-Type parsed anew every time).
    const parser = (request: FastifyRequest, payload: Payload, done: Done): void => readBody(request, payload, maxBodyBytes, done)
    app.addContentTypeParser('application/json', parser)
    app.addContentTypeParser('*', parser)
  },
  { name: 'mapper-body', fastify: '5.x' }
)
