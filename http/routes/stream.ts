// POST /map/stream (http.md §4, README "Batches"): a newline-delimited JSON body, one input per
// line, answered as newline-delimited JSON, one line per input line in input order, streamed while
// the body is still arriving. The same callers, claims and forms as POST /map: a registered id in
// the query, or (with no id there) a first line `{"mapping": <id or document>}`, the explicit
// form gated as /map gates it. Whatever can refuse the whole stream (auth, claims, rate limit, an
// unknown id, an invalid document) does so before the first answer, with the error body and its
// status; after that, a line that fails is answered by an error line and the stream goes on.
//
// Bodies here are streams, not JSON: this plugin replaces, for its own routes only, the service's
// parsers with one that hands the request stream through unread (service/ndjson.ts reads it a
// chunk at a time, `maxBodyBytes` bounding each line rather than the body). The answer is a
// Readable that Fastify pipes to the response: the input is read only as fast as the client
// takes the answers, and the client's upload is read only as fast as TCP brings it.
//
// An admitted stream is exempt from server.requestTimeout (http/client-errors.ts), so it has
// bounds of its own (options.stream): it must answer a line within `idleTimeout` (blank lines and
// bytes that end no line answer nothing) and may run `maxDurationMs` at most, else it is ended with
// a last error line (408 StreamIdle / StreamTooLong) and its connection closed; at most
// `maxStreams` run at once, `maxStreamsPerClient` from one client address, one more is 503 with
// Retry-After. A client that leaves is seen on its socket (closed, ended, destroyed: checked on
// every tick even while the upload is paused and nothing is read), and its leaving aborts every
// plugin call its lines have in flight at once, and starts no other line.
import type { ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { Readable } from 'node:stream'
import { TypeBoxValidatorCompiler, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ServiceConfig, StreamConfig } from '../../config/resolve.js'
import { BadRequest, FIELD_MESSAGES, refuseInvalid, shapeError, shownMessage, StreamIdle, StreamTooLong, Unavailable } from '../../service/errors.js'
import { allowExplicit } from './map.js'
import { streamingSockets } from '../client-errors.js'
import { isObject, type MapOutcome } from '../../service/evaluation.js'
import type { Caller, Evaluator } from '../../service/evaluator.js'
import type { ServiceMetrics } from '../../observability/metrics.js'
import { answerLines, ClientGone, errorLine, NdjsonReader, parseLine, type Answering, type LinesOutput } from '../../service/ndjson.js'
import { EXPLICIT } from '../../observability/observer.js'
import { errorResponses } from '../schemas/error.js'
import { StreamQuerySchema } from '../schemas/map.js'

const NDJSON_TYPE = 'application/x-ndjson; charset=utf-8'

/** Answers in flight at once for a mapping that awaits, unless the query says otherwise. */
export const DEFAULT_CONCURRENCY = 4

const HEADER_MESSAGE = 'With no "mapping" in the query, the first line must be {"mapping": <registered id or mapping document>}'

interface StreamRoutesOptions {
  readonly map: ServiceConfig['map']
  readonly evaluator: Evaluator
  readonly maxBodyBytes: number
  readonly errorDetail: ServiceConfig['errorDetail']
  readonly metrics: ServiceMetrics | undefined
  readonly stream: StreamConfig
}

/** Seconds a stream refused for the caps is told to wait before it tries again (Retry-After). */
export const STREAM_RETRY_AFTER = 5

/** How long a stream the service ends may take its last line before its connection is destroyed. */
const CLOSE_GRACE_MS = 2000

/**
 * The caller of one stream: its abort signal is the stream's own, aborted when the client leaves
 * (seen on the socket, not only the response) or when the service ends the stream, so every
 * plugin call of its lines stops at once.
 */
class StreamCaller implements Caller {
  constructor(
    private readonly request: FastifyRequest,
    private readonly stop: AbortController
  ) {}

  get identity(): unknown {
    return this.request.identity
  }

  signal(): AbortSignal {
    return this.stop.signal
  }

  /** `stdout` lines go to the request's log at debug level, as data, never a raw line of their own. */
  readonly stdout = (text: string): void => {
    this.request.log.debug({ requestId: this.request.requestId, stdout: text }, 'mapping stdout')
  }

  get wantsStdout(): boolean {
    const level = this.request.log.level
    return level === 'debug' || level === 'trace'
  }
}

/** Byte probes in one quiet spell at most: each adds a leading zero to the next chunk's size. */
const MAX_PROBE_BYTES = 8

/**
 * Notices a client that left while nothing is read from it or written to it. Its close cannot be
 * seen otherwise: with the upload paused (the service reads no faster than it answers), the
 * client's FIN waits behind megabytes of unread upload in the kernel's buffers, and a reset is
 * only reported to a socket that reads or writes. So, while the answers are quiet, each tick
 * writes nothing to the socket (a zero-length write reports a reset at once), and now and then
 * one byte: a peer that has closed its socket answers any byte with a reset, which the next tick
 * reports. The byte must not change the answer: it is the response's head while that is not yet
 * sent, then a `0` before the next chunk of the chunked body (a leading zero of its size, as
 * HTTP/1.1 allows; at most MAX_PROBE_BYTES of them in one quiet spell, at ticks 1, 2, 4, 8…,
 * so that a chunk size stays within the 16 digits clients accept). Not for a response that is not
 * chunked (an HTTP/1.0 client), nor once it has ended.
 */
class DepartureProbe {
  #quiet = 0
  #bytes = 0
  readonly #live: boolean

  constructor(
    private readonly socket: Socket,
    private readonly response: ServerResponse,
    live: boolean
  ) {
    this.#live = live
  }

  /** An answer went out: the quiet spell is over. */
  answered(): void {
    this.#quiet = 0
    this.#bytes = 0
  }

  tick(): void {
    const { socket, response } = this
    if (!this.#live || socket.destroyed || !socket.writable || response.writableEnded) return
    this.#quiet++
    if (this.#quiet === 1) return
    socket.write(EMPTY_PROBE)
    // Powers of two only: 2, 4, 8, …
    if ((this.#quiet & (this.#quiet - 1)) !== 0 || this.#bytes >= MAX_PROBE_BYTES) return
    if (!response.headersSent) {
      // The head as Fastify set it on the response as it began to pipe the answers (their type
      // among its headers), sent now rather than with the first answer.
      if (response.hasHeader('content-type')) response.flushHeaders()
      return
    }
    if ((response as ServerResponse & { chunkedEncoding?: boolean }).chunkedEncoding !== true) return
    this.#bytes++
    socket.write('0')
  }
}

const EMPTY_PROBE = Buffer.alloc(0)

/** Streams open at once, in this process and by client address. */
class StreamCount {
  #open = 0
  readonly #byClient = new Map<string, number>()

  constructor(private readonly limits: StreamConfig) {}

  /**
   * Count one more stream from `client`, or throw 503 (Retry-After set on `reply`) when a cap is
   * reached; returns its release (idempotent).
   */
  admit(client: string, reply: FastifyReply): () => void {
    const mine = this.#byClient.get(client) ?? 0
    const full = this.#open >= this.limits.maxStreams
    if (full || mine >= this.limits.maxStreamsPerClient) {
      reply.header('retry-after', String(STREAM_RETRY_AFTER))
      throw new Unavailable(
        full ? `${this.limits.maxStreams} streams are already open; retry later` : `${this.limits.maxStreamsPerClient} streams are already open from this client address; retry later`
      )
    }
    this.#open++
    this.#byClient.set(client, mine + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      this.#open--
      const left = this.#byClient.get(client)! - 1
      if (left === 0) this.#byClient.delete(client)
      else this.#byClient.set(client, left)
    }
  }
}

/** The mapping a stream's first line names or carries (the query named none). */
async function headerMapping(reader: NdjsonReader, maxBodyBytes: number): Promise<string | object> {
  const line = await reader.first()
  if (line === undefined) throw new BadRequest(HEADER_MESSAGE)
  const header = parseLine(line, maxBodyBytes)
  if (!isObject(header) || !Object.hasOwn(header, 'mapping') || Object.keys(header).length !== 1) throw new BadRequest(HEADER_MESSAGE)
  const mapping = header.mapping
  if (typeof mapping === 'string' || isObject(mapping)) return mapping
  throw new BadRequest(FIELD_MESSAGES.mapping!)
}

const NO_BODY: AsyncIterable<Buffer> = { [Symbol.asyncIterator]: async function * () {} }

/**
 * The upload's chunks; one that cannot be read to its end (the client aborted it, a chunk that is
 * not HTTP) is the caller's doing: 400, never the 500 of an unexpected error.
 */
async function * uploaded(body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  try {
    yield * body
  } catch (error) {
    throw Object.assign(new BadRequest('The request body could not be read to its end'), { cause: error })
  }
}

export const streamRoutes: FastifyPluginAsyncTypebox<StreamRoutesOptions> = async (app, { map, evaluator, maxBodyBytes, errorDetail, metrics, stream }) => {
  const streams = new StreamCount(stream)
  app.removeAllContentTypeParsers()
  const passThrough = (_request: FastifyRequest, payload: NodeJS.ReadableStream, done: (error: Error | null, body?: unknown) => void): void => done(null, payload)
  // Whatever the Content-Type, as /map reads JSON whatever it says (the service's body hook drops
  // any other than application/json before routing); application/x-ndjson is the one documented.
  app.addContentTypeParser('application/x-ndjson', passThrough)
  app.addContentTypeParser('*', passThrough)

  app.post(
    '/map/stream',
    {
      config: { claims: { for: '/map/stream', required: map.claims } },
      // The body is a stream (its schema is for the OpenAPI document); the query is validated as every schema is.
      validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : TypeBoxValidatorCompiler(route)),
      schema: {
        operationId: 'mapStream',
        summary: 'Evaluate a mapping against each line of a newline-delimited JSON stream',
        description:
          'One input per line (empty lines skipped), answered one line per input in input order while the body is still arriving: the envelope, or an error line {"line": n, "status": s, "error": <the error body /map would give>}. Each line is limited to maxBodyBytes, not the stream. The mapping is the registered id in the query or, with none there, the first line {"mapping": <id or document>} (the explicit form where the deployment allows it).',
        tags: ['mapping'],
        querystring: StreamQuerySchema,
        body: {
          content: {
            'application/x-ndjson': {
              schema: { type: 'string', description: 'Newline-delimited JSON: one input document per line.' },
            },
          },
        },
        response: {
          200: {
            description: 'One line per non-empty input line, in order: an envelope (it has "valid"), or an error line {"line", "status", "error"}.',
            content: {
              'application/x-ndjson': {
                schema: { type: 'string', description: 'Newline-delimited JSON: envelopes and error lines.' },
              },
            },
          },
          ...errorResponses(400, 401, 403, 404, 413, 422, 500, 503),
        },
      } as never,
    },
    async (request, reply) => {
      const release = streams.admit(request.ip, reply)
      // Read once: the whole stream keeps this engine, though a reload may swap it meanwhile.
      const engine = app.engine
      const query = request.query as { mapping?: string; concurrency?: string }
      const socket = request.raw.socket
      const response = reply.raw
      // A real connection (inject's stand-in has nothing to end or destroy).
      const live = socket instanceof Socket
      const stop = new AbortController()
      const gone = (): void => {
        if (!stop.signal.aborted) stop.abort(new ClientGone())
      }
      const responseClosed = (): void => {
        if (!response.writableFinished) gone()
      }
      let ended = false
      // The stream's own bounds, checked on a tick from its admission (http/client-errors.ts).
      const started = Date.now()
      let answeredAt = started
      const end = (reason: Error): void => {
        if (stop.signal.aborted) return
        ended = true
        stop.abort(reason)
        // The last line goes out as the answers end; a client that takes nothing more is cut off.
        if (live) setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref()
      }
      const probe = new DepartureProbe(socket, response, live)
      const timer = setInterval(
        () => {
          if (socket.destroyed || socket.readableEnded) return gone()
          const now = Date.now()
          if (now - answeredAt >= stream.idleTimeout) end(new StreamIdle(stream.idleTimeout))
          else if (stream.maxDurationMs > 0 && now - started >= stream.maxDurationMs) end(new StreamTooLong(stream.maxDurationMs))
          else probe.tick()
        },
        Math.max(25, Math.min(250, Math.floor(stream.idleTimeout / 4)))
      )
      timer.unref()
      stop.signal.addEventListener('abort', () => clearInterval(timer), { once: true })
      // A client's close shows on its socket even while the upload is paused and nothing reads it.
      socket.once('close', gone)
      socket.once('end', gone)
      request.raw.once('error', gone)
      response.once('close', () => {
        clearInterval(timer)
        socket.off('close', gone)
        socket.off('end', gone)
        request.raw.off('error', gone)
        streamingSockets.delete(socket)
        release()
        responseClosed()
      })
      response.once('finish', () => {
        // Ended by the service: the rest of the upload is not read, the connection is let go.
        if (ended && live) socket.end()
      })

      const body = request.body as AsyncIterable<Buffer> | undefined
      const reader = new NdjsonReader(body === undefined ? NO_BODY : uploaded(body), maxBodyBytes)
      const mapping = query.mapping ?? (await headerMapping(reader, maxBodyBytes))
      if (typeof mapping !== 'string') allowExplicit(map, request.identity)
      const caller = new StreamCaller(request, stop)
      const evaluate = await evaluator.stream(engine, mapping, caller)
      const label = typeof mapping === 'string' ? mapping : EXPLICIT
      const answer = (outcome: MapOutcome): string => {
        refuseInvalid(outcome, map.invalidStatus)
        metrics?.streamLine(label, undefined)
        return `${outcome.text}\n`
      }
      const answering: Answering = {
        concurrency: query.concurrency === undefined ? DEFAULT_CONCURRENCY : Number(query.concurrency),
        maxLineBytes: maxBodyBytes,
        evaluate: (input) => {
          const outcome = evaluate(input)
          return outcome instanceof Promise ? outcome.then(answer) : answer(outcome)
        },
        fail: (line, error) => {
          const shaped = shapeError(error, maxBodyBytes)
          metrics?.streamLine(label, shaped.code)
          if (shaped.status >= 500) request.log.error({ requestId: request.requestId, line, err: error }, 'stream line failed')
          return errorLine(line, shaped.status, { code: shaped.code, message: shownMessage(shaped, errorDetail), ...shaped.extra, requestId: request.requestId })
        },
        signal: stop.signal,
      }

      // Admitted: the upload may take as long as the batch, within the stream's own bounds.
      streamingSockets.add(socket)
      let read = 0
      const answers = new Answers((text) => {
        answeredAt = Date.now()
        probe.answered()
        if (metrics !== undefined) {
          metrics.streamed('out', Buffer.byteLength(text))
          metrics.streamed('in', reader.bytes - read)
          read = reader.bytes
        }
      })
      answerLines(reader, answering, answers).then(
        () => {
          metrics?.streamed('in', reader.bytes - read)
          answers.push(null)
        },
        (error: unknown) => answers.destroy(error as Error)
      )
      reply.type(NDJSON_TYPE)
      return reply.send(answers)
    }
  )
}

/**
 * The answers as the response reads them: written by the stream's slices (service/ndjson.ts
 * `answerLines`), handed on to the response at once while it keeps up (so the write is part of
 * the slice that answered), held when it does not, until it asks for more (`drain`).
 */
class Answers extends Readable implements LinesOutput {
  #wanted: (() => void) | undefined

  constructor(private readonly written: (text: string) => void) {
    super()
  }

  override _read(): void {
    const wanted = this.#wanted
    this.#wanted = undefined
    wanted?.()
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Nobody will ask for more: a writer waiting for it is let go (the stream's stop ends it).
    this._read()
    callback(error)
  }

  write(text: string): boolean {
    this.written(text)
    return this.push(text)
  }

  drain(): Promise<void> {
    return new Promise((resolve) => {
      this.#wanted = resolve
    })
  }
}
