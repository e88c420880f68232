// GET /mappings (the registered documents, `$extend` resolved, keyed by `$id`; explicit
// submissions never appear) and GET /extensions (names only, in registration order).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../schemas/error.js'
import { ExtensionsSchema, MappingsSchema } from '../schemas/service.js'

export const registryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/mappings', { schema: { operationId: 'listMappings', summary: 'The registered mappings, by $id', tags: ['registry'], response: { 200: MappingsSchema, ...errorResponses(401, 500) } } }, async () => app.engine.mapper.mappings)
  app.get('/extensions', { schema: { operationId: 'listExtensions', summary: 'The extension surface: initializer, transformer and plugin names', tags: ['registry'], response: { 200: ExtensionsSchema, ...errorResponses(401, 500) } } }, async () => app.engine.extensionNames)
}
