// Requests per caller and time window (options.rateLimit) with @fastify/rate-limit. The caller is
// the verified token subject when auth is on — the limit runs after authentication, so a client
// cannot pick its bucket with an unverified token — and the client IP otherwise (or for a token
// without `sub`). Public routes (health, OpenAPI, OPTIONS) are never limited: probes must not be
// turned away by a busy client. Over the limit: 429 with the error body and Retry-After.
// The counters are in memory, per process, unless rateLimit.redis names a Redis that every replica
// shares (http/plugins/rate-limit/store.ts; it fails open). Without it nothing here touches Redis.
// The plugin owns its options: it checks and resolves options.rateLimit as it is registered
// (./options.ts), before any connection to Redis, so a mistake fails the start in one line.
import rateLimit from '@fastify/rate-limit'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { RateLimitOptions } from '../../../config/options-schema.js'
import { TooManyRequests } from '../../../service/errors.js'
import type { ServiceMetrics } from '../../../observability/metrics.js'
import { resolveRateLimitOptions } from './options.js'
import { SharedRateLimitStore } from './store.js'

/** The bucket a request counts against. */
export function callerKey(request: FastifyRequest): string {
  const subject = request.identity?.sub
  return typeof subject === 'string' && subject !== '' ? `sub:${subject}` : `ip:${request.ip}`
}

const UNITS: ReadonlyArray<readonly [string, number]> = [['day', 86_400_000], ['hour', 3_600_000], ['minute', 60_000], ['second', 1000]]

/** A window in milliseconds as people say it: "1 minute", "90 seconds", "250 milliseconds". */
export function describeWindow(ms: number): string {
  const [unit, size] = UNITS.find(([, size]) => ms % size === 0) ?? ['millisecond', 1]
  const count = ms / size
  return `${count} ${unit}${count === 1 ? '' : 's'}`
}

interface RateLimitPluginOptions {
  /** options.rateLimit's settings as the options schema admitted them (`true`: none). */
  readonly rateLimit: RateLimitOptions
  /** Where the shared store reports its failures; undefined with metrics off. */
  readonly metrics?: ServiceMetrics | undefined
}

export const rateLimitPlugin = fp<RateLimitPluginOptions>(
  async (app, { rateLimit: given, metrics }) => {
    // First: a mistake in options.rateLimit fails registration before Redis is ever asked.
    const { max, timeWindow, redis } = resolveRateLimitOptions(given)
    const window = describeWindow(timeWindow)
    let shared: SharedRateLimitStore | undefined
    if (redis !== undefined) {
      shared = await SharedRateLimitStore.open(redis, app.log, metrics?.rateLimitStore())
      app.addHook('onClose', (_app, done) => {
        shared!.close()
        done()
      })
    }
    await app.register(rateLimit, {
      // Redis failing: the request passes (fail open); the store has counted and logged it.
      ...(shared === undefined ? {} : { store: shared.store, skipOnError: true }),
      max,
      timeWindow,
      // After every onRequest hook (authentication sets request.identity there), before the body is read.
      hook: 'preParsing',
      keyGenerator: callerKey,
      allowList: (request) => request.routeOptions.config.public === true,
      // Thrown, so the error handler writes the error body; the plugin has set Retry-After already.
      // The configured window, not the plugin's `after` (the time left in it: "59 seconds" a second in).
      errorResponseBuilder: (_request, context) => new TooManyRequests(`Rate limit exceeded: at most ${context.max} requests per ${window}`),
    })
  },
  { name: 'mapper-rate-limit', fastify: '5.x', dependencies: ['mapper-auth'] }
)
