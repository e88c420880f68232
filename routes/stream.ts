// POST /map/stream (http.md §4, README "Batches"): a newline-delimited JSON body, one input per
// line, answered as newline-delimited JSON, one line per input line in input order, streamed while
// the body is still arriving. The same callers, claims and forms as POST /map: a registered id in
// the query, or (with no id there) a first line `{"mapping": <id or document>}`, the explicit
// form gated as /map gates it. Whatever can refuse the whole stream (auth, claims, rate limit, an
// unknown id, an invalid document) does so before the first answer, with the error body and its
// status; after that, a line that fails is answered by an error line and the stream goes on.
//
// Bodies here are streams, not JSON: this plugin replaces, for its own routes only, the service's
// parsers with one that hands the request stream through unread (runtime/ndjson.ts reads it a
// chunk at a time, `maxBodyBytes` bounding each line rather than the body). The answer is a
// Readable that Fastify pipes to the response: the input is read only as fast as the client
// takes the answers, and the client's upload is read only as fast as TCP brings it.
import { Readable } from 'node:stream'
import { TypeBoxValidatorCompiler, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { ServiceConfig } from '../config/resolve.js'
import { isObject } from '../engine/index.js'
import { BadRequest, FIELD_MESSAGES, MESSAGES, ValidationError } from '../errors.js'
import { allowExplicit } from './map.js'
import { streamingSockets } from '../plugins/client-errors.js'
import { shapeError } from '../plugins/errors.js'
import type { MapOutcome } from '../runtime/evaluation.js'
import type { Evaluator } from '../runtime/evaluator.js'
import type { ServiceMetrics } from '../runtime/metrics.js'
import { answerLines, errorLine, NdjsonReader, parseLine, type Answering } from '../runtime/ndjson.js'
import { EXPLICIT } from '../runtime/observer.js'
import { callerOf } from './caller.js'
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

export const streamRoutes: FastifyPluginAsyncTypebox<StreamRoutesOptions> = async (app, { map, evaluator, maxBodyBytes, errorDetail, metrics }) => {
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
          ...errorResponses(400, 401, 403, 404, 413, 422, 500),
        },
      } as never,
    },
    async (request, reply) => {
      // Read once: the whole stream keeps this engine, though a reload may swap it meanwhile.
      const engine = app.engine
      const query = request.query as { mapping?: string; concurrency?: string }
      const reader = new NdjsonReader((request.body as AsyncIterable<Buffer> | undefined) ?? NO_BODY, maxBodyBytes)
      const mapping = query.mapping ?? (await headerMapping(reader, maxBodyBytes))
      if (typeof mapping !== 'string') allowExplicit(map, request.identity)
      const caller = callerOf(request, reply)
      const evaluate = await evaluator.stream(engine, mapping, caller)
      const label = typeof mapping === 'string' ? mapping : EXPLICIT
      const invalidStatus = map.invalidStatus
      const answer = (outcome: MapOutcome): string => {
        if (!outcome.valid && invalidStatus !== undefined) throw new ValidationError(invalidStatus, [...outcome.errors])
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
          const message = shaped.status >= 500 && errorDetail !== 'full' ? MESSAGES.hidden : shaped.message
          return errorLine(line, shaped.status, { code: shaped.code, message, ...shaped.extra, requestId: request.requestId })
        },
      }
      const answers = answerLines(reader.batches(), answering)
      // Admitted: the upload may take as long as the batch (plugins/client-errors.ts); silence is still bounded.
      const socket = request.raw.socket
      streamingSockets.add(socket)
      reply.raw.once('close', () => streamingSockets.delete(socket))
      reply.type(NDJSON_TYPE)
      return reply.send(Readable.from(metrics === undefined ? answers : counted(answers, reader, metrics)))
    }
  )
}

/** The answers, their bytes and the bytes read counted as they go. */
async function * counted(answers: AsyncGenerator<string>, reader: NdjsonReader, metrics: ServiceMetrics): AsyncGenerator<string> {
  let read = 0
  try {
    for await (const text of answers) {
      metrics.streamed('out', Buffer.byteLength(text))
      metrics.streamed('in', reader.bytes - read)
      read = reader.bytes
      yield text
    }
  } finally {
    metrics.streamed('in', reader.bytes - read)
  }
}
