// POST /validate (http.md §4): the full report at 200, always, for a submitted document (the same
// overlay as explicit evaluation) or a registered id (unknown → 404). Gated only by
// `validate.claims`, never by `map.explicit`. A valid submitted document's `examples` run when the
// caller may evaluate it (`map.claims`, `map.explicit` and its claims, as POST /map would ask): each failing one
// is an `EXAMPLE-1` error. Otherwise they are not run, and an `EXAMPLE-2` warning says so. The
// examples of one request share one set of the explicit budgets: the example that spends it fails
// with the budget's error (EXAMPLE-1), and an `EXAMPLE-2` warning counts those left unrun.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ServiceConfig } from '../config/resolve.js'
import { countExamples, exampleDiagnostics, type ValidationReport } from '../engine/index.js'
import { unknownMapping } from '../errors.js'
import { claimsSatisfied } from '../plugins/auth.js'
import { requireBody } from '../plugins/body.js'
import { errorResponses } from '../schemas/error.js'
import { ValidateRequestSchema } from '../schemas/map.js'
import { ReportSchema } from '../schemas/report.js'

interface ValidateRoutesOptions {
  readonly validate: ServiceConfig['validate']
  readonly map: ServiceConfig['map']
}

export const validateRoutes: FastifyPluginAsyncTypebox<ValidateRoutesOptions> = async (app, { validate, map }) => {
  app.post(
    '/validate',
    {
      preValidation: requireBody,
      config: { claims: { for: '/validate', required: validate.claims } },
      schema: { body: ValidateRequestSchema, response: { 200: ReportSchema, ...errorResponses(400, 401, 403, 404, 413, 500) } },
    },
    async (request) => {
      const { mapping } = request.body
      // One engine for the whole request, though a reload may swap it meanwhile.
      const engine = app.engine
      if (typeof mapping === 'string') {
        if (!Object.hasOwn(engine.mapper.mappings, mapping)) throw unknownMapping(mapping)
        // A registered mapping's examples passed when it was registered.
        return engine.registeredReport(mapping)
      }
      // The prepared report is cached with the document: what examples add goes on a copy.
      const report: ValidationReport & { expansion?: number } = engine.explicit(mapping).report
      if (!report.valid || countExamples(mapping) === 0) return report
      const mayEvaluate = map.explicit !== false && claimsSatisfied(request.identity, map.claims) && claimsSatisfied(request.identity, map.explicit.claims)
      if (!mayEvaluate) {
        const warning = { rule: 'EXAMPLE-2', message: 'examples not run: this caller may not evaluate submitted documents here', pointer: '', descriptor: null }
        return { ...report, warnings: [...report.warnings, warning] }
      }
      const stdout = (text: string): void => {
        request.log.debug({ requestId: request.requestId, stdout: text }, 'mapping stdout')
      }
      const results = await engine.explicitExamples(mapping, { identity: request.identity }, stdout)
      const failed = exampleDiagnostics(results)
      // The examples share one budget: the one that spent it failed (EXAMPLE-1), the rest did not run.
      const notRun = countExamples(mapping) - results.length
      const warnings =
        notRun === 0
          ? report.warnings
          : [...report.warnings, { rule: 'EXAMPLE-2', message: `${notRun} example${notRun === 1 ? '' : 's'} not run: the examples of one request share one evaluation budget, and it is spent`, pointer: '', descriptor: null }]
      return failed.length === 0 && notRun === 0 ? report : { ...report, valid: report.valid && failed.length === 0, errors: [...report.errors, ...failed], warnings }
    }
  )
}
