// options.rateLimit (http.md §8), resolved by the rate-limit plugin itself as it is registered: the
// options schema (config/options-schema.ts) has checked its shape; this fills in the defaults and
// checks the Redis URL as ioredis will read it. A mistake is a ConfigError naming the setting (the
// URL only redacted: it may hold a password), so registration, and the start, fail in one line.
import type { RateLimitOptions } from '../../../config/options-schema.js'
import { ConfigError } from '../../../support/config-error.js'
import { redactUrl } from '../../../support/redact.js'

/** Requests per caller and time window (options.rateLimit), resolved. */
export interface RateLimitConfig {
  readonly max: number
  readonly timeWindow: number
  /** The Redis URL holding the counters, shared by every replica; absent: in memory, per process. */
  readonly redis?: string
}

/** options.rateLimit's settings (`true` gives none: the defaults), checked and completed. */
export function resolveRateLimitOptions(limit: RateLimitOptions): RateLimitConfig {
  const resolved = { max: limit.max ?? 100, timeWindow: limit.timeWindow ?? 60000 }
  return limit.redis === undefined ? resolved : { ...resolved, redis: redisUrl(limit.redis) }
}

/** options.rateLimit.redis, checked as ioredis will read it; errors name it only redacted. */
function redisUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new ConfigError('options.rateLimit.redis must be a redis:// or rediss:// URL')
  }
  const where = `options.rateLimit.redis (${redactUrl(text)})`
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ConfigError(`${where} must be a redis:// or rediss:// URL`)
  if (url.hostname === '') throw new ConfigError(`${where} names no host`)
  if (!/^\/?(\d{1,5})?$/.test(url.pathname)) throw new ConfigError(`${where}: the path is the database number, e.g. /0`)
  return text
}
