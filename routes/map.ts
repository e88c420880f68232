// POST /map (http.md §4): a registered id (own ids only; unknown → 404) or, where enabled, an
// explicit document: claims, then validation at the instance level (screens included; invalid →
// 422 with the report), then stateless evaluation. Results are data at 200 unless
// `map.invalidStatus` promotes `valid: false`.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Envelope, Explained } from '../engine/index.js'
import type { ServiceConfig } from '../config/resolve.js'
import { Forbidden, InvalidMappingDocument, MESSAGES, OutputNotSerializable, ValidationError, unknownMapping } from '../errors.js'
import { requireClaims } from '../plugins/auth.js'
import { requireBody } from '../plugins/body.js'
import { EXPLICIT, type EvaluationObserver } from '../plugins/evaluations.js'
import { errorResponses } from '../schemas/error.js'
import { EnvelopeSchema, MapRequestSchema } from '../schemas/map.js'

const JSON_TYPE = 'application/json; charset=utf-8'

/** The envelope with its trace beside valid and errors; an output member named `explain` gives way to it. */
function explained({ envelope, explain }: Explained): Envelope {
  return { ...envelope, explain }
}

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
      const { mapping, input, explain } = request.body
      if (explain === true) {
        if (map.explain === false) throw new Forbidden(MESSAGES.explainDisabled)
        requireClaims(request.identity, map.explain.claims, 'explain traces')
      }
      // Read once: the plan keeps this engine to the end of the request, though a reload may swap it.
      const engine = app.engine
      let plan
      // Registered mappings run on the engine's own budgets (set from limits.*); explicit ones on limits.explicit.*.
      let budgets: ServiceConfig['limits']['explicit'] | undefined
      if (typeof mapping === 'string') {
        plan = engine.registered(mapping)
        if (plan === undefined) throw unknownMapping(mapping)
      } else {
        if (map.explicit === false) throw new Forbidden(MESSAGES.explicitDisabled)
        // On top of the route's claims; only here is it known which form the body takes.
        requireClaims(request.identity, map.explicit.claims, 'explicit mappings')
        const explicit = engine.explicit(mapping)
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
      // An explain answer is the evaluation as data: the trace matters most when the envelope is invalid.
      const envelope = await evaluations.run(label, extra, async () =>
        explain === true ? explained(await plan.explain(input, extra, { limits: budgets, stdout })) : plan.run(input, extra, { limits: budgets, stdout })
      )
      if (!envelope.valid && map.invalidStatus !== undefined && explain !== true) throw new ValidationError(map.invalidStatus, envelope.errors)
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
    }
  )
}
