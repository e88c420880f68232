// GET /schema/mapping.json: the JSON Schema of the mapping language (engine/schema.ts), for editors.
// Public, like /health: it describes the language only, the same for every deployment (no
// registered mapping or extension names), and an editor fetching it sends no token.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../schemas/error.js'
import { MappingSchemaDocumentSchema } from '../schemas/service.js'
import { mappingSchema } from '../../service/evaluation.js'

export const SCHEMA_TYPE = 'application/schema+json; charset=utf-8'

export const schemaRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Printed once: the catalogue cannot change while the service runs.
  const text = JSON.stringify(mappingSchema())
  app.get(
    '/schema/mapping.json',
    {
      config: { public: true },
      schema: {
        operationId: 'mappingSchema',
        summary: 'The JSON Schema of the mapping language',
        tags: ['registry'],
        response: {
          200: { description: MappingSchemaDocumentSchema.description, content: { 'application/schema+json': { schema: MappingSchemaDocumentSchema } } },
          ...errorResponses(500),
        },
      },
    },
    // A string payload is sent as it is (the response schema serializes objects only).
    async (_request, reply) => reply.type(SCHEMA_TYPE).send(text as unknown as Record<string, unknown>)
  )
}
