// Rate-limit counters in Redis (options.rateLimit.redis), so that every replica enforces one limit:
// @fastify/rate-limit's own RedisStore (its Lua script counts and expires atomically) over an
// ioredis client, wrapped to watch each exchange.
//
// Redis unreachable fails open: a request whose count cannot be had passes without a limit
// (@fastify/rate-limit's skipOnError), is counted in mapper_rate_limit_store_errors_total, and the
// outage is logged once when it starts and once when it ends, never per request. A limit that
// cannot be counted must not take the service down with it, and rejecting every request while
// Redis is away would do exactly that. Every exchange is bounded: no offline queue and no retry
// (a command while disconnected fails at once), a command timeout for a server that accepted the
// connection but stopped answering, a connect timeout; the client reconnects in the background.
// Start-up waits for the first connection at most REDIS_TIMEOUTS.connectMs and never fails on it.
import { createRequire } from 'node:module'
import type { FastifyBaseLogger } from 'fastify'
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import { loadIoredis, type RedisClient } from '../config/optional.js'
import { redactUrl } from '../config/resolve.js'
import type { RateLimitStoreSeries } from './metrics.js'

/** The bounds on every exchange with Redis, in ms: what a dead or stalled Redis costs a request at most. */
export const REDIS_TIMEOUTS = { connectMs: 2000, commandMs: 500, reconnectMaxMs: 2000 } as const

/** The prefix of every counter's key: the caller key (`ip:…`, `sub:…`) follows. */
export const REDIS_KEY_PREFIX = 'mapper-service:rate-limit:'

type StoreCallback = Parameters<FastifyRateLimitStore['incr']>[1]

/** @fastify/rate-limit's store/RedisStore.js, as far as it is used here. */
type RedisStoreCtor = new (continueExceeding: boolean, exponentialBackoff: boolean, redis: RedisClient, key: string) => FastifyRateLimitStore

type State = 'connecting' | 'up' | 'down'

export class SharedRateLimitStore {
  #state: State = 'connecting'
  #downSince = 0
  #started: (() => void) | undefined

  private constructor(
    private readonly client: RedisClient,
    private readonly where: string,
    private readonly secret: string,
    private readonly log: FastifyBaseLogger,
    private readonly series: RateLimitStoreSeries | undefined
  ) {}

  /** A client connecting to `url` in the background; settles once connected, refused, or after connectMs. */
  static async open(url: string, log: FastifyBaseLogger, series: RateLimitStoreSeries | undefined): Promise<SharedRateLimitStore> {
    const { Redis } = await loadIoredis()
    const client = new Redis(url, {
      connectTimeout: REDIS_TIMEOUTS.connectMs,
      commandTimeout: REDIS_TIMEOUTS.commandMs,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: (attempt) => Math.min(attempt * 100, REDIS_TIMEOUTS.reconnectMaxMs),
    })
    const store = new SharedRateLimitStore(client, redactUrl(url), decodeURIComponent(new URL(url).password), log, series)
    series?.reachable(false)
    const started = new Promise<void>((resolve) => (store.#started = resolve))
    // Listened to at once: an ioredis client without an error listener prints every failure itself.
    client.on('error', (error) => store.#failed(error, false))
    client.on('ready', () => store.#succeeded())
    const timer = setTimeout(() => store.#start(), REDIS_TIMEOUTS.connectMs)
    await started
    clearTimeout(timer)
    return store
  }

  /** The store class @fastify/rate-limit instantiates (`store` option). */
  get store(): FastifyRateLimitStoreCtor {
    const RedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore.js') as RedisStoreCtor
    const client = this.client
    const watched = (inner: FastifyRateLimitStore): FastifyRateLimitStore => ({
      incr: (key: string, callback: StoreCallback, timeWindow: number, max: number) =>
        inner.incr(
          key,
          (error, result) => {
            if (error === null) this.#succeeded()
            else this.#failed(error, true)
            callback(error, result)
          },
          timeWindow,
          max
        ),
      child: (routeOptions) => watched(inner.child(routeOptions)),
    })
    // Called with `new` and the plugin's settings: what a constructor returns is the instance.
    return function Store(settings: { continueExceeding?: boolean; exponentialBackoff?: boolean }) {
      return watched(new RedisStore(settings.continueExceeding === true, settings.exponentialBackoff === true, client, REDIS_KEY_PREFIX))
    } as unknown as FastifyRateLimitStoreCtor
  }

  /** Disconnects at once: nothing is left to write, and a dead Redis must not hold the close. */
  close(): void {
    this.client.disconnect()
  }

  #start(): void {
    this.#started?.()
    this.#started = undefined
  }

  #succeeded(): void {
    const was = this.#state
    this.#state = 'up'
    if (was !== 'up') {
      this.series?.reachable(true)
      if (was === 'down') this.log.info({ store: this.where, downMs: Date.now() - this.#downSince }, 'rate limit store reachable again: the shared limit applies')
      else this.log.info({ store: this.where }, 'rate limits shared in Redis')
    }
    this.#start()
  }

  /** A failed exchange; `request`: a request passed unlimited because of it. */
  #failed(error: Error, request: boolean): void {
    if (request) this.series?.failedOpen()
    if (this.#state !== 'down') {
      this.#state = 'down'
      this.#downSince = Date.now()
      this.series?.reachable(false)
      this.log.warn({ store: this.where, error: this.#describe(error) }, 'rate limit store unreachable: requests pass without a limit until it is back')
    }
    this.#start()
  }

  /** The error's message, never the password (ioredis does not print it; this holds if that changes). */
  #describe(error: Error): string {
    const nested = (error as { errors?: Error[] }).errors?.[0]
    const message = error.message !== '' ? error.message : (nested?.message ?? (error as { code?: string }).code ?? error.name)
    return this.secret === '' ? message : message.replaceAll(this.secret, '***')
  }
}
