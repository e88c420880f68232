// Rate-limit counters in Redis (options.rateLimit.redis), so that every replica enforces one limit:
// a store of @fastify/rate-limit's public custom-store interface (`store`: a class with `incr` and
// `child`), counting with one Lua script over an ioredis client (INCR, and PEXPIRE on a window's
// first request: atomic, one round trip), each exchange watched. Keys are those @fastify/rate-limit's
// own RedisStore writes (the prefix, then each route's method and URL), so counters survive an upgrade.
//
// Redis unreachable fails open: a request whose count cannot be had passes without a limit
// (@fastify/rate-limit's skipOnError), is counted in mapper_rate_limit_store_errors_total, and the
// outage is logged once when it starts and once when it ends, never per request. A limit that
// cannot be counted must not take the service down with it, and rejecting every request while
// Redis is away would do exactly that. Every exchange is bounded: no offline queue and no retry
// (a command while disconnected fails at once), a command timeout for a server that accepted the
// connection but stopped answering, a connect timeout; the client reconnects in the background.
// Start-up waits for the first connection at most REDIS_TIMEOUTS.connectMs and never fails on it.
import type { FastifyBaseLogger } from 'fastify'
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import { loadIoredis, type RedisClient } from '../../../support/optional.js'
import { redactUrl } from '../../../support/redact.js'
import type { RateLimitStoreSeries } from '../../../observability/metrics.js'

/** The bounds on every exchange with Redis, in ms: what a dead or stalled Redis costs a request at most. */
export const REDIS_TIMEOUTS = { connectMs: 2000, commandMs: 500, reconnectMaxMs: 2000 } as const

/** The prefix of every counter's key: the caller key (`ip:…`, `sub:…`) follows. */
export const REDIS_KEY_PREFIX = 'mapper-service:rate-limit:'

type StoreCallback = Parameters<FastifyRateLimitStore['incr']>[1]

/** The count of a key within its window: the first request of a window starts its expiry. */
const COUNT_SCRIPT = `
local current = redis.call('INCR', KEYS[1])
local ttl
if current == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
else
  ttl = redis.call('PTTL', KEYS[1])
end
return {current, ttl}
`

/** The client's command for COUNT_SCRIPT, defined once per client. */
const COUNT_COMMAND = 'mapperRateLimit'

type CountCommand = (key: string, timeWindow: number, callback: (error: Error | null, result?: [number, number]) => void) => void

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

  /** The store class @fastify/rate-limit instantiates (its `store` option). */
  get store(): FastifyRateLimitStoreCtor {
    const client = this.client as RedisClient & { [COUNT_COMMAND]?: CountCommand }
    if (client[COUNT_COMMAND] === undefined) client.defineCommand(COUNT_COMMAND, { numberOfKeys: 1, lua: COUNT_SCRIPT })
    const count = client[COUNT_COMMAND]!.bind(client)
    const storeAt = (prefix: string): FastifyRateLimitStore => ({
      incr: (key: string, callback: StoreCallback, timeWindow: number) => {
        count(prefix + key, timeWindow, (error, result) => {
          if (error === null && result !== undefined) {
            this.#succeeded()
            callback(null, { current: result[0], ttl: result[1] })
          } else {
            const failure = error ?? new Error('Redis answered the count without a result')
            this.#failed(failure, true)
            callback(failure)
          }
        })
      },
      // Each route its own counters, keyed as @fastify/rate-limit's RedisStore keys them.
      // (The plugin passes the route's options under `routeInfo`, its types the route's options themselves.)
      child: (routeOptions) => {
        const route = (routeOptions as { routeInfo?: typeof routeOptions }).routeInfo ?? routeOptions
        return storeAt(`${prefix}${String(route.method)}${route.url}-`)
      },
    })
    // Called with `new` and the plugin's settings: what a constructor returns is the instance.
    return function Store() {
      return storeAt(REDIS_KEY_PREFIX)
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
