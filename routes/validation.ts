// POST /validate (http.md §4): the full report at 200, always, for a submitted document (the same
// overlay as explicit evaluation) or a registered id (unknown → 404). Gated only by
// `validate.claims`, never by `map.explicit`.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ServiceConfig } from '../config/resolve.js'
import { unknownMapping } from '../errors.js'
import { requireBody } from '../plugins/body.js'
import { errorResponses } from '../schemas/error.js'
import { ValidateRequestSchema } from '../schemas/map.js'
import { ReportSchema } from '../schemas/report.js'

interface ValidateRoutesOptions {
  readonly validate: ServiceConfig['validate']
}

export const validateRoutes: FastifyPluginAsyncTypebox<ValidateRoutesOptions> = async (app, { validate }) => {
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
        return engine.registeredReport(mapping)
      }
      return engine.explicit(mapping).report
    },
  )
}
