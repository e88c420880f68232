// Feeds the instance's Prometheus series from outside the routes: one onResponse hook for every
// request of the service (unknown paths included), and the request plugin's upstream calls from
// their diagnostics channel, subscribed while the service is open (each counted only by the
// instance whose evaluation made it). Reload attempts are counted by the Reloader's observer (app.ts).
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import fp from 'fastify-plugin'
import { UPSTREAM_CHANNEL } from '../../extensions/request/index.js'
import type { EvaluationObserver } from '../../observability/observer.js'
import type { ServiceMetrics } from '../../observability/metrics.js'

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
    subscribe(UPSTREAM_CHANNEL, evaluations.upstreamCalled)
    app.addHook('onClose', (_app, done) => {
      unsubscribe(UPSTREAM_CHANNEL, evaluations.upstreamCalled)
      done()
    })
  },
  { name: 'mapper-metrics', fastify: '5.x' }
)
