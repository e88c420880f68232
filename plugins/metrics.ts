// Feeds the instance's Prometheus series from outside the routes: one onResponse hook for every
// request of the service (unknown paths included), and the diagnostics channels other parts
// publish on — the request plugin's upstream calls and the hot reload's attempts — subscribed
// while the service is open.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import fp from 'fastify-plugin'
import { UPSTREAM_CHANNEL } from '../extensions/request/index.js'
import type { EvaluationObserver } from './evaluations.js'
import type { ServiceMetrics } from './service-metrics.js'

/** Where each reload attempt is published: `{ ok: boolean, mappings?: number, error?: string }`. */
export const RELOAD_CHANNEL = 'mapper-service:reload'

interface MetricsPluginOptions {
  readonly metrics: ServiceMetrics
  readonly evaluations: EvaluationObserver
}

export const metricsPlugin = fp<MetricsPluginOptions>(
  async (app, { metrics, evaluations }) => {
    app.addHook('onResponse', (request, reply, done) => {
      // The route's pattern, never the raw URL: `/mappings/:id` is one series, an unknown path none of its own.
      metrics.answered(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000)
      done()
    })
    // A subscriber that threw would crash the process: a message off the contract is ignored.
    const reloaded = (message: unknown): void => {
      const ok = (message as { ok?: unknown } | null)?.ok
      if (typeof ok === 'boolean') metrics.reloaded(ok)
    }
    subscribe(RELOAD_CHANNEL, reloaded)
    subscribe(UPSTREAM_CHANNEL, evaluations.upstreamCalled)
    app.addHook('onClose', (_app, done) => {
      unsubscribe(RELOAD_CHANNEL, reloaded)
      unsubscribe(UPSTREAM_CHANNEL, evaluations.upstreamCalled)
      done()
    })
  },
  { name: 'mapper-metrics', fastify: '5.x' },
)
