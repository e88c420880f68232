// Load shedding (options.underPressure) with @fastify/under-pressure: while event-loop delay, heap,
// RSS or event-loop utilization stand above their thresholds, every request of this service — the
// health endpoints included, so an orchestrator sees it — is answered 503 Unavailable with the
// error body and Retry-After, before any work is done for it.
import underPressure from '@fastify/under-pressure'
import fp from 'fastify-plugin'
import type { UnderPressureConfig } from '../../config/resolve.js'
import { Unavailable } from '../../service/errors.js'

interface PressurePluginOptions {
  readonly underPressure: UnderPressureConfig
}

const WHAT: Readonly<Record<string, string>> = {
  eventLoopDelay: 'event-loop delay',
  heapUsedBytes: 'heap in use',
  rssBytes: 'resident memory',
  eventLoopUtilization: 'event-loop utilization',
  healthCheck: 'health check',
}

export const pressurePlugin = fp<PressurePluginOptions>(
  async (app, { underPressure: settings }) => {
    await app.register(underPressure, {
      maxEventLoopDelay: settings.maxEventLoopDelay,
      maxHeapUsedBytes: settings.maxHeapUsedBytes,
      maxRssBytes: settings.maxRssBytes,
      maxEventLoopUtilization: settings.maxEventLoopUtilization,
      sampleInterval: settings.sampleInterval,
      retryAfter: settings.retryAfter,
      // A rejected promise hands the error to this service's error handler: the one error body.
      pressureHandler: async (_request, reply, type) => {
        reply.header('retry-after', String(settings.retryAfter))
        throw new Unavailable(`Service under pressure (${WHAT[type] ?? type}); retry after ${settings.retryAfter} s`)
      },
    })
  },
  { name: 'mapper-pressure', fastify: '5.x' }
)
