// POST /validate (http.md §4): the full report at 200, always, for a submitted document (the same
// overlay as explicit evaluation) or a registered id (unknown → 404). Gated only by
// `validate.claims`, never by `map.explicit`. A valid submitted document's `examples` run when the
// caller may evaluate it (`map.claims`, `map.explicit` and its claims, as POST /map would ask): each failing one
// is an `EXAMPLE-1` error. Otherwise they are not run, and an `EXAMPLE-2` warning says so. The
// examples of one request share one set of the explicit budgets: the example that spends it fails
// with the budget's error (EXAMPLE-1), and an `EXAMPLE-2` warning counts those left unrun. A
// submitted document is validated and its examples run in a worker thread (isolation.validate, on
// by default whatever map.explicit says; service/evaluator.ts), and its report printed there.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ServiceConfig } from '../../config/resolve.js'
import { unknownMapping } from '../../service/errors.js'
import { claimsSatisfied } from '../plugins/auth/index.js'
import { requireBody } from '../plugins/body.js'
import { jsonMemberText, type Report } from '../../service/evaluation.js'
import type { Evaluator } from '../../service/evaluator.js'
import { JsonText } from '../../service/json-text.js'
import { documentText } from './map.js'
import { callerOf } from './caller.js'
import { errorResponses } from '../schemas/error.js'
import { ValidateRequestSchema } from '../schemas/map.js'
import { ReportSchema } from '../schemas/report.js'

const JSON_TYPE = 'application/json; charset=utf-8'

interface ValidateRoutesOptions {
  readonly validate: ServiceConfig['validate']
  readonly map: ServiceConfig['map']
  readonly evaluator: Evaluator
}

export const validateRoutes: FastifyPluginAsyncTypebox<ValidateRoutesOptions> = async (app, { validate, map, evaluator }) => {
  /** The reports of registered ids, by served set: validation grows with the document, and the set does not change. */
  const registeredReports = new WeakMap<object, Map<string, Report>>()
  app.post(
    '/validate',
    {
      preValidation: requireBody,
      config: { claims: { for: '/validate', required: validate.claims } },
      schema: {
        operationId: 'validate',
        summary: 'Validate a mapping document and run its examples',
        tags: ['mapping'],
        body: ValidateRequestSchema,
        response: { 200: ReportSchema, ...errorResponses(400, 401, 403, 404, 413, 422, 500) },
      },
    },
    async (request, reply): Promise<Report> => {
      const { mapping } = request.body
      // One engine for the whole request, though a reload may swap it meanwhile.
      const engine = app.engine
      if (typeof mapping === 'string') {
        if (!engine.has(mapping)) throw unknownMapping(mapping)
        // A registered mapping's examples passed when it was registered; its report is judged once per served set.
        let reports = registeredReports.get(engine)
        if (reports === undefined) registeredReports.set(engine, (reports = new Map()))
        let report = reports.get(mapping)
        if (report === undefined) reports.set(mapping, (report = engine.registeredReport(mapping)))
        return report
      }
      const mayEvaluate = map.explicit !== false && claimsSatisfied(request.identity, map.claims) && claimsSatisfied(request.identity, map.explicit.claims)
      // The document's text as sent crosses to the worker in place of the document (a large one was kept as text).
      const text = mapping instanceof JsonText ? documentText(mapping) : jsonMemberText(request.bodyText, 'mapping')
      const report = await evaluator.validate(engine, mapping, text, mayEvaluate, callerOf(request, reply))
      if (typeof report !== 'string') return report
      // Printed in the worker: a string payload is sent as it is (the response schema serializes objects only).
      return reply.type(JSON_TYPE).send(report as unknown as Report)
    }
  )
}
