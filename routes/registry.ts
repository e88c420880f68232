// GET /mappings (the registered documents, `$extend` resolved, keyed by `$id`; explicit
// submissions never appear) and GET /extensions (names only, in registration order).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../schemas/error.js'
import { ExtensionsSchema, MappingsSchema } from '../schemas/service.js'

export const registryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/mappings', { schema: { response: { 200: MappingsSchema, ...errorResponses(401, 500) } } }, async () => app.engine.mapper.mappings)
  app.get('/extensions', { schema: { response: { 200: ExtensionsSchema, ...errorResponses(401, 500) } } }, async () => app.engine.extensionNames)
}
