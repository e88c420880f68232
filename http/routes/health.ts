// GET /health (liveness, touches no engine) and GET /health/mapping (http.md §4): the canary runs
// through the full engine within `health.timeout`; on timeout its abort signal fires, so plugin
// I/O stops. Any failure, a refused redirect included, is 503.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Unavailable } from '../../service/errors.js'
import { errorResponses } from '../schemas/error.js'
import { CanaryHealthSchema, HealthSchema } from '../schemas/service.js'

interface HealthRoutesOptions {
  readonly mapping: string | undefined
  readonly timeout: number
}

const ECHO_CANARY = { mapping: { '/echo': '/' } }
const CANARY_INPUT = { health: 'check' }

export const healthRoutes: FastifyPluginAsyncTypebox<HealthRoutesOptions> = async (app, { mapping, timeout }) => {
  app.get('/health', { config: { public: true }, schema: { operationId: 'health', summary: 'Liveness: the process answers', tags: ['health'], response: { 200: HealthSchema } } }, async () => ({ status: 'ok' as const }))

  const echo = app.engine.compileOwn(ECHO_CANARY)
  app.get(
    '/health/mapping',
    {
      config: { public: true },
      schema: { operationId: 'healthMapping', summary: 'Readiness: a canary mapping evaluates in time', tags: ['health'], response: { 200: CanaryHealthSchema, ...errorResponses(503) } },
    },
    async () => {
      const plan = mapping === undefined ? echo : app.engine.registered(mapping)
      if (plan === undefined) throw new Unavailable(`Health canary "${mapping}" is not a registered mapping`)
      const started = performance.now()
      const controller = new AbortController()
      let timer: NodeJS.Timeout | undefined
      const expired = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => {
          controller.abort(new Error(`health canary timed out after ${timeout} ms`))
          reject(new Unavailable(`Mapping-path health check timed out after ${timeout} ms`))
        }, timeout)
      })
      try {
        await Promise.race([Promise.resolve(plan.run(CANARY_INPUT, { signal: controller.signal, identity: null })), expired])
      } catch (error) {
        if (error instanceof Unavailable) throw error
        throw new Unavailable('Mapping-path health check failed', { cause: error })
      } finally {
        clearTimeout(timer)
      }
      return { status: 'ok' as const, mapping: mapping ?? 'echo', durationMs: Math.round((performance.now() - started) * 1000) / 1000 }
    }
  )
}
