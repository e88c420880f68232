// POST /map (http.md §4): a registered id (own ids only; unknown → 404) or, where enabled, an
// explicit document: claims, then validation at the instance level (screens included; invalid →
// 422 with the report), then stateless evaluation. Results are data at 200 unless
// `map.invalidStatus` promotes `valid: false`. Where it runs is decided here, once: inline, or in
// a worker thread (options.isolation) for caller-authored work; what runs is runtime/evaluation.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ServiceConfig } from '../config/resolve.js'
import type { Envelope } from '../engine/index.js'
import { Forbidden, MESSAGES, ValidationError, unknownMapping } from '../errors.js'
import { requireClaims } from '../plugins/auth.js'
import { requireBody } from '../plugins/body.js'
import type { EngineService } from '../runtime/engine.js'
import { EXPLICIT, type EvaluationObserver } from '../runtime/observer.js'
import { evaluateRequest, type MapOutcome, type MapRequest } from '../runtime/evaluation.js'
import { IsolatedFailure, type IsolationPool } from '../runtime/isolation.js'
import { errorResponses } from '../schemas/error.js'
import { EnvelopeSchema, MapRequestSchema } from '../schemas/map.js'

const JSON_TYPE = 'application/json; charset=utf-8'

interface MapRoutesOptions {
  readonly map: ServiceConfig['map']
  readonly isolation: ServiceConfig['isolation']
  readonly evaluations: EvaluationObserver
}

/**
 * An abort signal for the request, made only when asked for (a pure mapping pays nothing). The
 * request stream closed long before (once its body was read): a disconnect shows as the response
 * closing unfinished.
 */
function clientSignal(reply: FastifyReply): () => AbortSignal {
  let controller: AbortController | undefined
  const response = reply.raw
  return () => {
    if (controller === undefined) {
      const made = new AbortController()
      const abort = (): void => {
        if (!response.writableFinished) made.abort(new Error('the client closed the request'))
      }
      if (response.destroyed) abort()
      else response.once('close', abort)
      controller = made
    }
    return controller.signal
  }
}

/** `stdout` prints to the request's log at debug level, as data: never a raw line of its own. */
function stdoutOf(request: FastifyRequest): (text: string) => void {
  return (text) => {
    request.log.debug({ requestId: request.requestId, stdout: text }, 'mapping stdout')
  }
}

/** The request evaluated in one of the engine's worker threads. */
async function isolated(
  pool: IsolationPool,
  engine: EngineService,
  body: MapRequest,
  label: string,
  request: FastifyRequest,
  signal: AbortSignal,
  evaluations: EvaluationObserver
): Promise<MapOutcome> {
  const limits = typeof body.mapping === 'string' ? engine.settings.limits.registered : engine.settings.limits.explicit
  const stdout = request.log.level === 'debug' || request.log.level === 'trace'
  const answer = await pool.run({ kind: 'map', request: body, identity: request.identity, stdout }, limits.timeMs, signal)
  const print = stdoutOf(request)
  for (const line of answer.stdout) print(line)
  evaluations.isolated(label, answer)
  if (!answer.ok) throw new IsolatedFailure(answer.failure)
  if (!('outcome' in answer)) throw new Error('an isolated evaluation answered without an outcome')
  return answer.outcome
}

export const mapRoutes: FastifyPluginAsyncTypebox<MapRoutesOptions> = async (app, { map, isolation, evaluations }) => {
  app.post(
    '/map',
    {
      preValidation: requireBody,
      config: { claims: { for: '/map', required: map.claims } },
      schema: {
        body: MapRequestSchema,
        response: { 200: EnvelopeSchema, ...errorResponses(400, 401, 403, 404, 413, 422, 500) },
      },
    },
    async (request, reply) => {
      const { mapping, input } = request.body
      const explain = request.body.explain === true
      if (explain) {
        if (map.explain === false) throw new Forbidden(MESSAGES.explainDisabled)
        requireClaims(request.identity, map.explain.claims, 'explain traces')
      }
      if (typeof mapping !== 'string') {
        if (map.explicit === false) throw new Forbidden(MESSAGES.explicitDisabled)
        // On top of the route's claims; only here is it known which form the body takes.
        requireClaims(request.identity, map.explicit.claims, 'explicit mappings')
      }
      // Read once: the evaluation keeps this engine to the end of the request, though a reload may swap it.
      const engine = app.engine
      const label = typeof mapping === 'string' ? mapping : EXPLICIT
      const signal = clientSignal(reply)
      const body: MapRequest = { mapping, input, explain }
      const pool = engine.isolation
      const inWorker = pool !== undefined && isolation !== false && (typeof mapping === 'string' ? isolation.registered || (explain && isolation.explicit) : isolation.explicit)
      let outcome: MapOutcome
      if (inWorker) {
        if (typeof mapping === 'string' && engine.registered(mapping) === undefined) throw unknownMapping(mapping)
        outcome = await evaluations.run(label, {}, () => isolated(pool, engine, body, label, request, signal(), evaluations))
      } else {
        const extra = {
          identity: request.identity,
          get signal(): AbortSignal {
            return signal()
          },
        }
        outcome = await evaluations.run(label, extra, () => evaluateRequest(engine, body, extra, stdoutOf(request), (prepared) => evaluations.prepared(prepared)))
      }
      if (!outcome.valid && map.invalidStatus !== undefined && !explain) throw new ValidationError(map.invalidStatus, [...outcome.errors])
      evaluations.printed(label, outcome.text)
      // A string payload is sent as it is (the response schema serializes objects only).
      return reply.type(JSON_TYPE).send(outcome.text as unknown as Envelope)
    }
  )
}
