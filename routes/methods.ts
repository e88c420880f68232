// The method rules of the known paths (http.md §4): OPTIONS answers 204 with Allow (and the CORS
// preflight headers when CORS is on), never authenticated; any other method the path does not
// serve is 405 with Allow. HEAD on a GET route is served by Fastify as GET without a body.
import type {} from '@fastify/swagger'
import type { FastifyPluginAsync, HTTPMethods } from 'fastify'
import { MethodNotAllowed } from '../errors.js'
import type { CorsConfig } from '../plugins/config.js'

/** Each known path and the one method it serves. */
export const KNOWN_PATHS: ReadonlyArray<readonly [path: string, method: 'GET' | 'POST', isPublic: boolean]> = [
  ['/health', 'GET', true],
  ['/health/mapping', 'GET', true],
  ['/map', 'POST', false],
  ['/validate', 'POST', false],
  ['/mappings', 'GET', false],
  ['/extensions', 'GET', false],
]

export interface MethodRoutesOptions {
  readonly cors: CorsConfig | null
  readonly openapi: boolean
}

export const methodRoutes: FastifyPluginAsync<MethodRoutesOptions> = async (app, { cors, openapi }) => {
  const paths = openapi ? [...KNOWN_PATHS, ['/openapi.json', 'GET', true] as const] : KNOWN_PATHS
  for (const [url, method, isPublic] of paths) {
    const served = method === 'GET' ? ['GET', 'HEAD'] : ['POST']
    app.route({
      method: 'OPTIONS',
      url,
      schema: { hide: true },
      config: { public: true },
      handler: async (_request, reply) => {
        reply.header('allow', [...served, 'OPTIONS'].join(', '))
        if (cors !== null && reply.hasHeader('access-control-allow-origin')) {
          reply.header('access-control-allow-methods', cors.methods)
          reply.header('access-control-allow-headers', cors.headers)
        }
        return reply.code(204).send()
      },
    })
    app.route({
      // Every other method Fastify routes (TRACE and QUERY included), so none of them reads as 404.
      method: app.supportedMethods.filter((m) => m !== 'OPTIONS' && !served.includes(m)) as HTTPMethods[],
      url,
      schema: { hide: true },
      config: { public: isPublic },
      // Refused before the body is read: a wrong method is 405 whatever it carries.
      onRequest: async () => {
        throw Object.assign(new MethodNotAllowed(`Use ${method}`), { allow: method })
      },
      handler: async () => undefined,
    })
  }
}
