// The method rules of the known paths (http.md §4): OPTIONS answers 204 with Allow (and the CORS
// preflight headers when CORS is on), never authenticated; any other method the path does not
// serve is 405 with the same Allow. HEAD on a GET route is served by Fastify as GET without a body. The
// known paths are the routes themselves, recorded as they are registered: a new route needs no
// second list.
import type {} from '@fastify/swagger'
import type { FastifyPluginAsync, HTTPMethods, RouteOptions } from 'fastify'
import type { CorsConfig } from '../../config/resolve.js'
import { MethodNotAllowed } from '../../service/errors.js'

/** A path the service serves: the methods its routes answer, and whether they are all public. */
interface ServedPath {
  readonly methods: string[]
  isPublic: boolean
}

/**
 * The paths of the routes registered after `onRoute` is added as a hook, with their methods.
 * HEAD and OPTIONS are not recorded (Fastify adds HEAD to a GET route; OPTIONS is a method rule).
 */
export class ServedPaths {
  readonly #paths = new Map<string, ServedPath>()
  #open = true

  readonly onRoute = (route: RouteOptions): void => {
    if (!this.#open) return
    const methods = [route.method].flat().filter((method) => method !== 'HEAD' && method !== 'OPTIONS')
    if (methods.length === 0) return
    const isPublic = route.config?.public === true
    const served = this.#paths.get(route.url)
    if (served === undefined) {
      this.#paths.set(route.url, { methods, isPublic })
    } else {
      for (const method of methods) served.methods.push(method)
      served.isPublic &&= isPublic
    }
  }

  /** The paths recorded so far, full URLs (prefix included); recording stops here. */
  close(): ReadonlyMap<string, ServedPath> {
    this.#open = false
    return this.#paths
  }
}

interface MethodRoutesOptions {
  readonly cors: CorsConfig | null
  /** Recording every route of the service; registered after them, these rules close it. */
  readonly served: ServedPaths
}

export const methodRoutes: FastifyPluginAsync<MethodRoutesOptions> = async (app, { cors, served }) => {
  for (const [path, { methods, isPublic }] of served.close()) {
    // Recorded with the prefix; `app.route` adds it again.
    const url = path.slice(app.prefix.length)
    const answered = methods.includes('GET') ? [...methods, 'HEAD'] : methods
    // One Allow header for the path, on OPTIONS and on 405 alike (RFC 9110 §10.2.1: every method
    // the resource supports, HEAD and OPTIONS included); the 405's message names the served ones.
    const allow = [...answered, 'OPTIONS'].join(', ')
    const use = `Use ${methods.join(', ')}`
    app.route({
      method: 'OPTIONS',
      url,
      schema: { hide: true },
      config: { public: true },
      handler: async (_request, reply) => {
        reply.header('allow', allow)
        if (cors !== null && reply.hasHeader('access-control-allow-origin')) {
          reply.header('access-control-allow-methods', cors.methods)
          reply.header('access-control-allow-headers', cors.headers)
        }
        return reply.code(204).send()
      },
    })
    app.route({
      // Every other method Fastify routes (TRACE and QUERY included), so none of them reads as 404.
      method: app.supportedMethods.filter((m) => m !== 'OPTIONS' && !answered.includes(m)) as HTTPMethods[],
      url,
      schema: { hide: true },
      config: { public: isPublic },
      // Refused before the body is read: a wrong method is 405 whatever it carries.
      onRequest: async () => {
        throw Object.assign(new MethodNotAllowed(use), { allow })
      },
      handler: async () => undefined,
    })
  }
}
