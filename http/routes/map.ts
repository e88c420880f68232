// POST /map (http.md §4): a registered id (own ids only; unknown → 404) or, where enabled, an
// explicit document: claims, then validation at the instance level (screens included; invalid →
// 422 with the report), then stateless evaluation. Results are data at 200 unless
// `map.invalidStatus` promotes `valid: false`. The route checks what the caller may ask for; where
// and how the evaluation runs is the evaluator's (service/evaluator.ts). POST /map/{id} is the same
// evaluation of a registered mapping with the id in the path and the input in the body: the form the
// OpenAPI document gives each registered mapping as its own typed operation (http/openapi-mappings.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { ServiceConfig } from '../../config/resolve.js'
import { BadRequest, FIELD_MESSAGES, Forbidden, MESSAGES, refuseInvalid } from '../../service/errors.js'
import { requireClaims } from '../plugins/auth/index.js'
import { requireBody } from '../plugins/body.js'
import { enabledBy } from '../plugins/errors.js'
import { jsonMemberText, type Envelope, type MapOutcome, type MapRequest } from '../../service/evaluation.js'
import type { Evaluator } from '../../service/evaluator.js'
import { JsonText } from '../../service/json-text.js'
import { callerOf } from './caller.js'
import { errorResponses } from '../schemas/error.js'
import { EnvelopeSchema, MapByIdRequestSchema, MapRequestSchema } from '../schemas/map.js'

const JSON_TYPE = 'application/json; charset=utf-8'

interface MapRoutesOptions {
  readonly map: ServiceConfig['map']
  readonly evaluator: Evaluator
}

// Refusals of a form that is off name the option that turns it on.
const EXPLICIT_OFF = `${MESSAGES.explicitDisabled}: ${enabledBy('map.explicit')}`
const EXPLAIN_OFF = `${MESSAGES.explainDisabled}: ${enabledBy('map.explain')}`

/** A caller's own mapping document (the explicit form): refused where it is off or the caller lacks its claims. */
export function allowExplicit(map: ServiceConfig['map'], identity: FastifyRequest['identity']): void {
  if (map.explicit === false) throw new Forbidden(EXPLICIT_OFF)
  requireClaims(identity, map.explicit.claims, 'explicit mappings')
}

/**
 * The text of a body's `mapping` kept as text (a large body, http/plugins/body.ts): an object's, or 400
 * as the body's schema refuses an array there.
 */
export function documentText(mapping: JsonText): string {
  if (mapping.text.charCodeAt(0) !== 0x7b) throw new BadRequest(FIELD_MESSAGES.mapping!)
  return mapping.text
}

export const mapRoutes: FastifyPluginAsyncTypebox<MapRoutesOptions> = async (app, { map, evaluator }) => {
  /**
   * Evaluate what the request asks (its form already allowed) and answer the envelope, or the
   * promise of it: `map.invalidStatus` turns a `valid: false` result into that error, explain aside.
   */
  const evaluate = (asked: MapRequest, request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined => {
    // Read once: the evaluation keeps this engine to the end of the request, though a reload may swap it.
    const outcome = evaluator.map(app.engine, asked, callerOf(request, reply))
    const answer = (settled: MapOutcome): void => {
      if (!asked.explain) refuseInvalid(settled, map.invalidStatus)
      // A string payload is sent as it is (the response schema serializes objects only).
      reply.type(JSON_TYPE).send(settled.text as unknown as Envelope)
    }
    if (outcome instanceof Promise) return outcome.then(answer)
    answer(outcome)
    return undefined
  }

  app.post(
    '/map',
    {
      preValidation: requireBody,
      config: { claims: { for: '/map', required: map.claims } },
      schema: {
        operationId: 'map',
        summary: 'Evaluate a mapping against an input',
        description: 'A registered mapping by id, or (where the deployment allows it) a whole mapping document, evaluated against the input; answers the envelope: the output keys, valid and errors.',
        tags: ['mapping'],
        body: MapRequestSchema,
        response: { 200: EnvelopeSchema, ...errorResponses(400, 401, 403, 404, 413, 422, 500) },
      },
    },
    // Not async: an evaluation that needs no await is answered in the same turn, without a promise.
    (request, reply) => {
      const { mapping, input } = request.body
      const explain = request.body.explain === true
      if (explain) {
        if (map.explain === false) throw new Forbidden(EXPLAIN_OFF)
        requireClaims(request.identity, map.explain.claims, 'explain traces')
      }
      // On top of the route's claims; only here is it known which form the body takes.
      if (typeof mapping === 'string') return evaluate({ mapping, input, explain }, request, reply)
      allowExplicit(map, request.identity)
      // A large document kept as text (http/plugins/body.ts) is evaluated from it, in a worker.
      if (mapping instanceof JsonText) return evaluate({ mapping: null, mappingText: documentText(mapping), input, explain }, request, reply)
      // The document as the caller wrote it keys the prepared-document cache and crosses to a worker.
      return evaluate({ mapping, mappingText: jsonMemberText(request.bodyText, 'mapping'), input, explain }, request, reply)
    }
  )

  app.post(
    '/map/:id',
    {
      preValidation: requireBody,
      config: { claims: { for: '/map', required: map.claims } },
      schema: {
        operationId: 'mapById',
        summary: 'Evaluate a registered mapping against an input',
        description: 'The registered mapping named in the path, evaluated against the input; answers the envelope: the output keys, valid and errors.',
        tags: ['mapping'],
        params: Type.Object({ id: Type.String({ description: 'The $id of a registered mapping.' }) }),
        body: MapByIdRequestSchema,
        response: { 200: EnvelopeSchema, ...errorResponses(400, 401, 403, 404, 413, 422, 500) },
      },
    },
    (request, reply) => evaluate({ mapping: request.params.id, input: request.body.input, explain: false }, request, reply)
  )
}
