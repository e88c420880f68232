// options.auth (http.md §5, §8), resolved by the auth plugin itself as it is registered: the
// options schema (config/options-schema.ts) has checked its shape, this checks what a schema cannot
// state — exactly one key strategy, an algorithm allowlist that never admits `none` nor mixes HMAC
// with public keys, a secret long enough, a public key that is one and verifies those algorithms, a
// JWKS URL without credentials, maxAge as a duration — and fills in the defaults. A mistake is a
// ConfigError naming the setting, so registration (and with it the start) fails in one line.
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto'
import type { AuthOptions } from '../../../config/options-schema.js'
import { ConfigError } from '../../../support/config-error.js'
import { list } from '../../../support/list.js'

/** options.auth resolved: what the plugin verifies tokens with. */
export interface AuthConfig {
  readonly strategy: 'secret' | 'publicKey' | 'jwksUri'
  readonly key: string
  readonly algorithms: readonly string[]
  readonly issuer: string | string[] | undefined
  readonly audience: string | string[] | undefined
  readonly clockSkew: number
  /** Tokens without `exp` are refused (the default). */
  readonly requireExp: boolean
  /** Tokens whose `iat` is older than this many seconds, or that have no `iat`, are refused. */
  readonly maxAge: number | undefined
}

const HMAC = new Set(['HS256', 'HS384', 'HS512'])
const ASYMMETRIC = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'])
/** The shortest shared secret accepted: HS256 wants at least 256 bits of key. */
export const MIN_SECRET_LENGTH = 32

const EC_ALGORITHMS: Readonly<Record<string, string>> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }

/** The JWS algorithms a public key can verify (none for a key type the verifier does not support). */
export function algorithmsForKey(key: KeyObject): string[] {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']
    case 'ec': {
      const algorithm = EC_ALGORITHMS[key.asymmetricKeyDetails?.namedCurve ?? '']
      return algorithm === undefined ? [] : [algorithm]
    }
    case 'ed25519':
    case 'ed448':
      return ['EdDSA']
    default:
      return []
  }
}

/** Describes a key for messages: `the RSA key`, `the EC secp384r1 key`. */
function describeKey(key: KeyObject): string {
  const curve = key.asymmetricKeyDetails?.namedCurve
  return `the ${(key.asymmetricKeyType ?? 'unknown').toUpperCase()}${curve === undefined ? '' : ` ${curve}`} key`
}

/** The SPKI PEM of `auth.publicKey`, checked; returns the configured algorithms this key can verify. */
function publicKeyAlgorithms(pem: string, algorithms: readonly string[]): string[] {
  let isPrivate = true
  try {
    createPrivateKey({ key: pem, format: 'pem' })
  } catch {
    isPrivate = false
  }
  if (isPrivate) throw new ConfigError('options.auth.publicKey holds a private key; configure its public key (SPKI PEM) instead')
  let key: KeyObject
  try {
    key = createPublicKey({ key: pem, format: 'pem' })
  } catch {
    throw new ConfigError('options.auth.publicKey must be a public key in SPKI PEM form')
  }
  const usable = algorithmsForKey(key)
  if (usable.length === 0) throw new ConfigError(`options.auth.publicKey: ${describeKey(key)} is not supported (use RSA, EC P-256/P-384/P-521 or Ed25519)`)
  const fitting = algorithms.filter((algorithm) => usable.includes(algorithm))
  if (fitting.length === 0) {
    throw new ConfigError(`options.auth.algorithm: ${algorithms.join(', ')} cannot be verified with ${describeKey(key)} in options.auth.publicKey (it verifies ${usable.join(', ')})`)
  }
  return fitting
}

/** The longest `auth.maxAge`: a year, beyond which the setting bounds nothing a deployment means. */
export const MAX_TOKEN_AGE_SECONDS = 365 * 24 * 3600

const DURATION = /^\s*(\d+)\s*([smhd]?)\s*$/
const UNIT_SECONDS: Readonly<Record<string, number>> = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }

/** `auth.maxAge` in seconds: whole seconds, or `<n>s|m|h|d`; a ConfigError names anything else. */
function readMaxAge(given: number | string | undefined): number | undefined {
  if (given === undefined) return undefined
  let seconds = Number.NaN
  if (typeof given === 'number') seconds = given
  else {
    const parsed = DURATION.exec(given)
    if (parsed !== null) seconds = Number(parsed[1]) * UNIT_SECONDS[parsed[2]!]!
  }
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > MAX_TOKEN_AGE_SECONDS) {
    throw new ConfigError(
      `options.auth.maxAge must be a whole number of seconds or a duration such as "90s", "15m", "1h" or "7d", from 1 second to 365 days (got ${JSON.stringify(given)})`
    )
  }
  return seconds
}

/** options.auth, checked and completed; throws a ConfigError naming the setting at fault. */
export function resolveAuthOptions(auth: AuthOptions): AuthConfig {
  const strategies = (['secret', 'publicKey', 'jwksUri'] as const).filter((key) => auth[key] !== undefined)
  if (strategies.length !== 1) {
    throw new ConfigError(
      strategies.length === 0
        ? 'options.auth must name exactly one key strategy: secret, publicKey or jwksUri'
        : `options.auth must name exactly one key strategy, not ${strategies.join(' and ')}`
    )
  }
  const strategy = strategies[0]!
  const key = auth[strategy]!
  const algorithms = auth.algorithm === undefined ? (strategy === 'secret' ? ['HS256'] : ['RS256', 'ES256', 'EdDSA']) : [...new Set(list(auth.algorithm))]
  if (algorithms.length === 0) throw new ConfigError('options.auth.algorithm must name at least one algorithm')
  for (const algorithm of algorithms) {
    if (algorithm.toLowerCase() === 'none') throw new ConfigError('options.auth.algorithm: "none" (unsigned tokens) is never accepted')
    if (!HMAC.has(algorithm) && !ASYMMETRIC.has(algorithm)) {
      throw new ConfigError(`options.auth.algorithm: unsupported algorithm ${algorithm} (allowed: ${[...HMAC, ...ASYMMETRIC].join(', ')})`)
    }
    if (strategy === 'secret' && !HMAC.has(algorithm)) {
      throw new ConfigError(`options.auth.algorithm: ${algorithm} cannot be verified with a shared secret; use HS256, HS384 or HS512`)
    }
    if (strategy !== 'secret' && HMAC.has(algorithm)) {
      throw new ConfigError(`options.auth.algorithm: ${algorithm} with options.auth.${strategy} would let a public key act as an HMAC secret`)
    }
  }
  if (strategy === 'secret' && key.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(`options.auth.secret must be at least ${MIN_SECRET_LENGTH} characters`)
  }
  if (strategy === 'jwksUri') {
    let url: URL | undefined
    try {
      url = new URL(key)
    } catch {
      url = undefined
    }
    if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      throw new ConfigError('options.auth.jwksUri must be an http(s) URL')
    }
    if (url.username !== '' || url.password !== '') throw new ConfigError('options.auth.jwksUri must not carry credentials')
  }
  return {
    strategy,
    key,
    // A public key verifies only its own family: an ES256 token never meets an RSA key.
    algorithms: strategy === 'publicKey' ? publicKeyAlgorithms(key, algorithms) : algorithms,
    issuer: auth.issuer,
    audience: auth.audience,
    clockSkew: auth.clockSkew ?? 0,
    requireExp: auth.requireExp ?? true,
    maxAge: readMaxAge(auth.maxAge),
  }
}
