// GET /mappings (the registered documents, `$extend` resolved, keyed by `$id`; explicit
// submissions never appear), GET /mappings/{id}/schema (the JSON Schema of what a registered
// mapping outputs, inferred when the set was admitted: engine/output-schema.ts) and GET /extensions
// (names only, in registration order).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { unknownMapping } from '../../service/errors.js'
import { errorResponses } from '../schemas/error.js'
import { ExtensionsSchema, MappingsSchema, OutputSchemaDocumentSchema } from '../schemas/service.js'
import { SCHEMA_TYPE } from './schema.js'

export const registryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/mappings', { schema: { operationId: 'listMappings', summary: 'The registered mappings, by $id', tags: ['registry'], response: { 200: MappingsSchema, ...errorResponses(401, 500) } } }, async () => app.engine.mappings)
  app.get(
    '/mappings/:id/schema',
    {
      schema: {
        operationId: 'mappingOutputSchema',
        summary: 'The JSON Schema of what a registered mapping outputs',
        description: 'Inferred from the mapping document when the mappings were registered or reloaded: what a valid result holds besides valid and errors, `{}` where the document says nothing.',
        tags: ['registry'],
        params: Type.Object({ id: Type.String({ description: 'The $id of a registered mapping.' }) }),
        response: {
          200: { description: OutputSchemaDocumentSchema.description, content: { 'application/schema+json': { schema: OutputSchemaDocumentSchema } } },
          ...errorResponses(401, 404, 500),
        },
      },
    },
    // A string payload is sent as it is (printed once per served set).
    async (request, reply) => {
      const output = app.engine.outputs.get(request.params.id)
      if (output === undefined) throw unknownMapping(request.params.id)
      return reply.type(SCHEMA_TYPE).send(output.text as unknown as Record<string, unknown>)
    }
  )
  app.get('/extensions', { schema: { operationId: 'listExtensions', summary: 'The extension surface: initializer, transformer and plugin names', tags: ['registry'], response: { 200: ExtensionsSchema, ...errorResponses(401, 500) } } }, async () => app.engine.extensionNames)
}
