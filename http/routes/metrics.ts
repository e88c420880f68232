// GET /metrics (options.metrics.path): the Prometheus text exposition of this instance and its
// process. Public like /health unless `metrics.claims` asks for a token with those claims; left out
// of the OpenAPI document, which describes the API a caller uses, not what a scraper reads.
import type { FastifyPluginAsync } from 'fastify'
import type { Claims } from '../../config/options-schema.js'
import type { ServiceMetrics } from '../../observability/metrics.js'

interface MetricsRoutesOptions {
  readonly path: string
  readonly claims: Claims | undefined
  readonly metrics: ServiceMetrics
}

export const metricsRoutes: FastifyPluginAsync<MetricsRoutesOptions> = async (app, { path, claims, metrics }) => {
  app.get(
    path,
    { config: { public: claims === undefined, claims: { for: path, required: claims } }, schema: { hide: true } },
    async (_request, reply) => reply.type(metrics.contentType).send(await metrics.exposition())
  )
}
