// POST /map (http.md §4): a registered id (own ids only; unknown → 404) or, where enabled, an
// explicit document: claims, then validation at the instance level (screens included; invalid →
// 422 with the report), then stateless evaluation. Results are data at 200 unless
// `map.invalidStatus` promotes `valid: false`.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Envelope } from '../engine/index.js'
import type { ServiceConfig } from '../config/resolve.js'
import { Forbidden, InvalidMappingDocument, MESSAGES, OutputNotSerializable, ValidationError, unknownMapping } from '../errors.js'
import { requireClaims } from '../plugins/auth.js'
import { requireBody } from '../plugins/body.js'
import { EXPLICIT, type EvaluationObserver } from '../plugins/evaluations.js'
import { errorResponses } from '../schemas/error.js'
import { EnvelopeSchema, MapRequestSchema } from '../schemas/map.js'

const JSON_TYPE = 'application/json; charset=utf-8'

interface MapRoutesOptions {
  readonly map: ServiceConfig['map']
  readonly limits: ServiceConfig['limits']
  readonly evaluations: EvaluationObserver
}

export const mapRoutes: FastifyPluginAsyncTypebox<MapRoutesOptions> = async (app, { map, limits, evaluations }) => {
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
      let plan
      // Registered mappings run on the engine's own budgets (set from limits.*); explicit ones on limits.explicit.*.
      let budgets: ServiceConfig['limits']['explicit'] | undefined
      if (typeof mapping === 'string') {
        plan = app.engine.registered(mapping)
        if (plan === undefined) throw unknownMapping(mapping)
      } else {
        if (map.explicit === false) throw new Forbidden(MESSAGES.explicitDisabled)
        // On top of the route's claims; only here is it known which form the body takes.
        requireClaims(request.identity, map.explicit.claims, 'explicit mappings')
        const explicit = app.engine.explicit(mapping)
        evaluations.prepared(explicit)
        if (explicit.plan === null) throw new InvalidMappingDocument(explicit.report)
        plan = explicit.plan
        budgets = limits.explicit
      }
      // The request stream has closed long before (once its body was read): a disconnect shows as
      // the response closing unfinished.
      // The abort signal is made only when a plugin asks for it: a pure mapping pays nothing.
      let controller: AbortController | undefined
      const response = reply.raw
      const extra = {
        identity: request.identity,
        get signal(): AbortSignal {
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
        },
      }
      // `stdout` prints to this request's log at debug level, as data: never a raw line of its own.
      const stdout = (text: string): void => {
        request.log.debug({ requestId: request.requestId, stdout: text }, 'mapping stdout')
      }
      const label = typeof mapping === 'string' ? mapping : EXPLICIT
      const envelope = await evaluations.run(label, plan, input, extra, { limits: budgets, stdout })
      if (!envelope.valid && map.invalidStatus !== undefined) throw new ValidationError(map.invalidStatus, envelope.errors)
      // Serialized as it is: the output's keys in their order, then valid and errors. Printed here,
      // not by a reply serializer, so that an error answer is never printed twice.
      let text: string
      try {
        text = JSON.stringify(envelope)
      } catch (error) {
        if (error instanceof RangeError) throw new OutputNotSerializable()
        throw error
      }
      evaluations.printed(label, text)
      // A string payload is sent as it is (the response schema serializes objects only).
      return reply.type(JSON_TYPE).send(text as unknown as Envelope)
    },
  )
}
