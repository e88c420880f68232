// Request bodies (http.md §2): parsed as JSON whatever the Content-Type (a client that forgets the
// header still works), with the prototype-poisoning guard, and refused past `maxBodyBytes` while
// streaming, so a chunked body is never buffered past the limit, and refused when it nests deeper
// than MAX_BODY_DEPTH before it is parsed. A long body is read a slice per turn; one with more values
// than the main thread should build (service/json-text.ts) is checked by a strict scan and keeps its
// object and array members as text (JsonText), parsed and evaluated in a worker thread.
import type { FastifyReply, FastifyRequest } from 'fastify'
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

/** How long one slice scans bodies, however many are waiting. */
const SCAN_TURN_MS = 4

/** Long bodies being scanned, taken in turn a slice at a time; each says when it is done. */
const scanning: Array<() => boolean> = []

/**
 * Scan slices of the waiting bodies, in turn, the first slice in this turn of the event loop; a
 * slice (engine/slices.ts) covers at most SCAN_TURN_MS, however many bodies are waiting: four
 * bodies at once take four times as many turns, not four times as long a turn.
 */
async function scanTurns(): Promise<void> {
  const slice = new Slice(SCAN_TURN_MS)
  while (scanning.length > 0) {
    if (slice.due()) await slice.next()
    const scan = scanning.shift()!
    let finished = true
    try {
      finished = scan()
    } catch {
      // Not expected (each step answers its own failures).
    }
    if (!finished) scanning.push(scan)
  }
}

/**
 * A body longer than LARGE_BODY_CHARS, read a slice per turn: its values counted (`JsonCount`),
 * then, holding few, parsed at once; holding many, checked by a strict scan (`JsonScan`) and made
 * a large body (`largeBody`: its scalars parsed, its objects and arrays kept as text for a worker).
 * A body that is not JSON is refused where the strict scan finds it stops being JSON, never by
 * building what comes before.
 */
function parseLongBody(request: FastifyRequest, text: string, done: (error: Error | null, body?: unknown) => void): void {
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
    if (scanned.kind === 'deep') return finish(done, new BadRequest(DEEP_BODY))
    if (scanned.kind === 'invalid') return finish(done, new BadRequest(`${MESSAGES.invalidJson}${whereJsonStops(text, scanned.at)}`))
    if (refused) return finish(done, new BadRequest(MESSAGES.invalidJson))
    let body: unknown
    try {
      body = largeBody(scanned.members)
    } catch (error) {
      return finish(done, error as Error)
    }
    request.bodyText = text
    done(null, body)
    return true
  }
  // The first turn is this one, when no other body is waiting: a body a turn covers (a few
  // hundred kilobytes) is answered without waiting for the next.
  if (scanning.push(step) === 1) void scanTurns()
}

/** A long body refused: done, and its step with it. */
function finish(done: (error: Error | null, body?: unknown) => void, error: Error): true {
  done(error, undefined)
  return true
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
    const parseBody = (request: FastifyRequest, text: string | Buffer, done: (error: Error | null, body?: unknown) => void): void => {
      if (typeof text !== 'string') return done(new BadRequest(MESSAGES.invalidJson), undefined)
      // A leading byte order mark is allowed (RFC 8259 §8.1 lets a parser ignore it).
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
      if (text.trim() === '') return done(new BadRequest(MESSAGES.invalidJson), undefined)
      if (text.length > LARGE_BODY_CHARS) return parseLongBody(request, text, done)
      if (jsonNestsDeeper(text, MAX_BODY_DEPTH)) return done(new BadRequest(DEEP_BODY), undefined)
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch {
        // Only a refused body pays for the scan that names where it stops being JSON.
        return done(new BadRequest(`${MESSAGES.invalidJson}${whereJsonFails(text)}`), undefined)
      }
      // A second, careful pass only when a dangerous key could be present at all (spelled out, or
      // hidden behind a \u escape such as "\u005f_proto__").
      if (text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')) {
        try {
          parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
        } catch {
          return done(new BadRequest(POISONED_BODY), undefined)
        }
      }
      request.bodyText = text
      done(null, parsed)
    }
    // The catch-all takes every body; `application/json` is also named so that Fastify finds its
    // parser in its cache (a request matched only by the catch-all has its Content-Type parsed anew
    // every time).
    app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: maxBodyBytes }, parseBody)
    app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: maxBodyBytes }, parseBody)
  },
  { name: 'mapper-body', fastify: '5.x' }
)
