// The engine as the routes see it: `app.engine`, the set being served now (service/mapping-service.ts).
import fp from 'fastify-plugin'
import type { ServedSet, EngineService } from '../../service/mapping-service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The engine serving now: read it once per request (a reload may swap it afterwards). */
    readonly engine: EngineService
  }
}

export interface EnginePluginOptions {
  readonly served: ServedSet
}

/** Decorates the service's context with its current engine. */
export const enginePlugin = fp<EnginePluginOptions>(
  async (app, { served }) => {
    app.decorate('engine', {
      getter: () => served.current,
    })
  },
  { name: 'mapper-engine', fastify: '5.x' }
)
