// Load shedding (options.underPressure) with @fastify/under-pressure: while event-loop delay, heap,
// RSS or event-loop utilization stand above their thresholds, every request of this service — the
// health endpoints included, so an orchestrator sees it — is answered 503 Unavailable with the
// error body and Retry-After, before any work is done for it.
//
// Event-loop delay and utilization are judged only from the second sample interval after the
// server is ready: the first readings cover its own start-up (compiling routes and mappings, a
// second or more on a small machine, during which the loop records no delay at all and
// @fastify/under-pressure reads it as an infinite one), and shedding the first requests and
// readiness probes after a start for that would turn a start into an outage. Heap and resident
// memory are judged from the first request.
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

/** The readings the server's own start-up skews. */
const STARTUP_TYPES = new Set(['eventLoopDelay', 'eventLoopUtilization'])

export const pressurePlugin = fp<PressurePluginOptions>(
  async (app, { underPressure: settings }) => {
    // Two sample intervals of a running loop, counted from its first turn once ready: a start-up
    // hook that runs after this one and holds the loop delays the count, it does not eat into it.
    let judged = false
    app.addHook('onReady', async () => {
      setImmediate(() => setTimeout(() => (judged = true), 2 * settings.sampleInterval).unref())
    })
    await app.register(underPressure, {
      maxEventLoopDelay: settings.maxEventLoopDelay,
      maxHeapUsedBytes: settings.maxHeapUsedBytes,
      maxRssBytes: settings.maxRssBytes,
      maxEventLoopUtilization: settings.maxEventLoopUtilization,
      sampleInterval: settings.sampleInterval,
      retryAfter: settings.retryAfter,
      // A rejected promise hands the error to this service's error handler: the one error body.
      pressureHandler: async (_request, reply, type) => {
        // Resolving without an answer lets the request through.
        if (!judged && STARTUP_TYPES.has(type)) return
        reply.header('retry-after', String(settings.retryAfter))
        throw new Unavailable(`Service under pressure (${WHAT[type] ?? type}); retry after ${settings.retryAfter} s`)
      },
    })
  },
  { name: 'mapper-pressure', fastify: '5.x' }
)
