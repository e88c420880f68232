// Bearer-token authentication (http.md §5) with @fastify/jwt: one key strategy (a shared secret,
// an SPKI public key, or a JWKS fetched, cached and rotated by kid), an algorithm allowlist that
// never admits `none` nor mixes HMAC with public keys, issuer, audience and clock skew. Every route
// but the public ones authenticates before anything else happens, unknown paths included (a request
// there with two Authorization headers is refused 400); the verified payload becomes
// `request.identity` (and `context.identity` for mappings). A route states the claims it requires in
// its config (`config: { claims }`); one preHandler checks them once the body has passed its schema.
// The plugin owns its options: given options.auth as the schema admitted it, it checks and resolves
// it as it is registered (./options.ts), so a mistake fails registration, and the start, in one line.
import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto'
import type fastifyJwt from '@fastify/jwt'
import type { TokenOrHeader } from '@fastify/jwt'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { algorithmsForKey, resolveAuthOptions } from './options.js'
import { isObject } from '../../../engine/index.js'
import { BadRequest, MESSAGES, Unauthorized, lacksClaims } from '../../../service/errors.js'
import { redactUrl } from '../../../support/redact.js'
import type { AuthOptions, Claims } from '../../../config/options-schema.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified token payload, or null when authentication is off. */
    identity: Record<string, unknown> | null
  }
  interface FastifyContextConfig {
    /** Never authenticated: health, OpenAPI, OPTIONS. */
    public?: boolean
    /**
     * With `public`: a request that carries an Authorization header is authenticated all the same
     * (a bad token is 401), so the route can answer more to an identified caller (GET /openapi.json).
     */
    identifies?: boolean
    /** The claims the route requires; absent or `required: undefined` asks for none. */
    claims?: RouteClaims
  }
}

interface RouteClaims {
  /** What the claims guard, as the 403 names it: `Caller lacks the claims required for <for>`. */
  readonly for: string
  readonly required: Claims | undefined
}

const BEARER = /^bearer +(\S+) *$/i

/**
 * How many Authorization headers a request carries. Node keeps the first one in `headers` and drops
 * the others; a proxy in front may check the last: with two, they need not have checked the same.
 */
function authorizationCount(rawHeaders: readonly string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    if (name.length === 13 && name.toLowerCase() === 'authorization') count += 1
  }
  return count
}

/** How long a JWKS fetch may take. */
const JWKS_TIMEOUT_MS = 5000
/** How long a fetched key set is trusted before it is fetched again. */
const JWKS_TTL_MS = 10 * 60 * 1000
/** After a fetch that failed or did not hold the kid asked for, no other fetch for this long. */
const JWKS_COOLDOWN_MS = 10 * 1000

type Algorithm = NonNullable<NonNullable<Parameters<typeof fastifyJwt>[1]['verify']>['algorithms']>[number]

/** A token refused for a reason this plugin decided itself; the message is the 401 message. */
class TokenRefused extends Error {}

/** The key set could not be read: not the caller's fault, so it surfaces as a 500 (and is logged). */
class JwksUnavailable extends Error {
  override readonly name = 'JwksUnavailable'
}

/** The 401 message for a verification failure, by the error's code (and, for claims, its text). */
function verificationMessage(error: { code?: string; message?: string }): string {
  if (error instanceof TokenRefused) return error.message
  const code = error.code ?? ''
  const text = error.message ?? ''
  // fast-jwt's requiredClaims refusal, "The <claim> claim is required." (iss and aud below).
  if (/\bexp claim is required\b/.test(text)) return 'Token has no expiry'
  if (/\biat claim is required\b/.test(text)) return 'Token has no issue time'
  if (code === 'FST_JWT_AUTHORIZATION_TOKEN_EXPIRED' || code === 'FAST_JWT_EXPIRED') return 'Token expired'
  if (code === 'FAST_JWT_INACTIVE') return 'Token not yet valid'
  if (code === 'FAST_JWT_INVALID_ALGORITHM' || code === 'FST_JWT_AUTHORIZATION_TOKEN_UNSIGNED' || code === 'FAST_JWT_MISSING_SIGNATURE') {
    return 'Unsupported algorithm'
  }
  if (/\biss\b/.test(text) && /claim/.test(text)) return 'Invalid issuer'
  if (/\baud\b/.test(text) && /claim/.test(text)) return 'Invalid audience'
  if (code === 'FAST_JWT_INVALID_SIGNATURE' || /signature/i.test(text)) return 'Invalid token signature'
  return 'Malformed token'
}

interface SetKey {
  readonly kid: string | undefined
  /** SPKI PEM, as the verifier takes a fetched key. */
  readonly pem: string
  /** The allowed algorithms this key verifies (narrowed by its `alg`, when it names one). */
  readonly algorithms: readonly string[]
}

/** The usable signing keys of a JSON Web Key Set body; anything else in it is skipped. */
function readKeySet(body: unknown, allowed: readonly string[]): SetKey[] {
  const members = body !== null && typeof body === 'object' ? (body as { keys?: unknown }).keys : undefined
  if (!Array.isArray(members)) throw new Error('the response is not a JSON Web Key Set (no "keys" array)')
  const keys: SetKey[] = []
  for (const jwk of members as unknown[]) {
    if (!isObject(jwk)) continue
    const { kid, use, alg } = jwk
    if (use !== undefined && use !== 'sig') continue
    let key: KeyObject
    try {
      key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' })
    } catch {
      continue
    }
    const algorithms = algorithmsForKey(key).filter((a) => allowed.includes(a) && (alg === undefined || a === alg))
    if (algorithms.length === 0) continue
    keys.push({ kid: typeof kid === 'string' ? kid : undefined, pem: key.export({ type: 'spki', format: 'pem' }).toString(), algorithms })
  }
  return keys
}

/**
 * The keys of a JWKS, fetched when first needed and again after a TTL, or when a token names a kid
 * the set does not hold (a rotation). A fetch replaces the whole set, so a key the provider removed
 * is forgotten; concurrent lookups share one fetch; after a fetch that failed or missed, unknown
 * kids are refused without fetching for a cooldown (made-up kids cannot make us flood the provider).
 * While the provider is down, the last good set keeps serving.
 */
class JwksKeys {
  #keys: SetKey[] = []
  #loadedAt = Number.NEGATIVE_INFINITY
  #missedAt = Number.NEGATIVE_INFINITY
  #failure: unknown = null
  #loading: Promise<void> | null = null

  constructor(
    private readonly url: string,
    private readonly allowed: readonly string[]
  ) {}

  /** The PEM of the key that verifies a token with this header; refuses (401) or throws JwksUnavailable. */
  async keyFor(kid: string | undefined, alg: string): Promise<string> {
    const now = Date.now()
    const stale = now - this.#loadedAt > JWKS_TTL_MS
    if ((stale || !this.#holds(kid)) && now - this.#missedAt > JWKS_COOLDOWN_MS) {
      await (this.#loading ??= this.#load().finally(() => {
        this.#loading = null
      }))
      if (!this.#holds(kid)) this.#missedAt = Date.now()
    }
    const candidates = this.#keys.filter((key) => (kid === undefined || key.kid === kid) && key.algorithms.includes(alg))
    // Without a kid, the key must be the only one that fits.
    const key = kid === undefined && candidates.length > 1 ? undefined : candidates[0]
    if (key !== undefined) return key.pem
    if (this.#failure !== null) {
      throw new JwksUnavailable(`JWKS ${redactUrl(this.url)} is not available: ${this.#failure instanceof Error ? this.#failure.message : String(this.#failure)}`, {
        cause: this.#failure,
      })
    }
    throw new TokenRefused('Invalid token signature')
  }

  #holds(kid: string | undefined): boolean {
    return kid === undefined ? this.#keys.length > 0 : this.#keys.some((key) => key.kid === kid)
  }

  async #load(): Promise<void> {
    try {
      const response = await fetch(this.url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(JWKS_TIMEOUT_MS) })
      if (!response.ok) {
        await response.body?.cancel()
        throw new Error(`status ${response.status}`)
      }
      this.#keys = readKeySet(await response.json(), this.allowed)
      this.#loadedAt = Date.now()
      this.#failure = null
    } catch (error) {
      this.#failure = error
      this.#missedAt = Date.now()
    }
  }
}

/** A claim matches when the token's value (or any element of it) is allowed; `scope`/`scp` split on spaces. */
export function claimsSatisfied(identity: Record<string, unknown> | null, claims: Claims | undefined): boolean {
  if (claims === undefined) return true
  if (identity === null) return false
  for (const [name, allowed] of Object.entries(claims)) {
    const allowedList: unknown[] = Array.isArray(allowed) ? allowed : [allowed]
    const raw = Object.hasOwn(identity, name) ? identity[name] : undefined
    let actual: unknown[] = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]
    if ((name === 'scope' || name === 'scp') && typeof raw === 'string') actual = raw.split(' ').filter((s) => s !== '')
    if (!actual.some((value) => allowedList.includes(value))) return false
  }
  return true
}

/** Refuses (403) a caller whose token lacks `claims`; `what` is named in the message. */
export function requireClaims(identity: Record<string, unknown> | null, claims: Claims | undefined, what: string): void {
  if (!claimsSatisfied(identity, claims)) throw lacksClaims(what)
}

/**
 * The route's `config.claims`, checked as a preHandler: after authentication and after the body
 * passed its schema (a malformed request is 400 whoever sends it), before the handler runs.
 */
function checkRouteClaims(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const claims = request.routeOptions.config.claims
  if (claims === undefined || claimsSatisfied(request.identity, claims.required)) return done()
  done(lacksClaims(claims.for))
}

interface AuthPluginOptions {
  /** options.auth as the options schema admitted it; null: authentication off. */
  readonly auth: AuthOptions | null
}

export const authPlugin = fp<AuthPluginOptions>(
  async (app, options) => {
    // First: a mistake in options.auth fails registration before anything is added.
    const auth = options.auth === null ? null : resolveAuthOptions(options.auth)
    app.decorateRequest('identity', null)
    // Without authentication no route has claims (config/resolve.ts refuses them): no hook per request.
    if (auth === null) return
    app.addHook('preHandler', checkRouteClaims)

    // A configured issuer or audience is required, not only checked when the token happens to carry
    // it. So is exp unless auth.requireExp is false (a token without it never expires), and iat under
    // auth.maxAge (fast-jwt checks the age only of a token that carries iat: leaving it out would
    // escape the limit).
    const required = [
      ...(auth.issuer === undefined ? [] : ['iss']),
      ...(auth.audience === undefined ? [] : ['aud']),
      ...(auth.requireExp ? ['exp'] : []),
      ...(auth.maxAge === undefined ? [] : ['iat']),
    ]
    const verify = {
      algorithms: [...auth.algorithms] as Algorithm[],
      ...(auth.issuer === undefined ? {} : { allowedIss: auth.issuer }),
      ...(auth.audience === undefined ? {} : { allowedAud: auth.audience }),
      ...(required.length === 0 ? {} : { requiredClaims: required }),
      // Seconds, as @fastify/jwt takes a number and hands fast-jwt milliseconds; counted from iat,
      // with no clock skew added.
      ...(auth.maxAge === undefined ? {} : { maxAge: auth.maxAge }),
      // clockSkew is in seconds; fast-jwt counts milliseconds.
      clockTolerance: auth.clockSkew * 1000,
      // The token is what the Authorization check below accepted (any run of spaces after the scheme).
      extractToken: (request: FastifyRequest) => BEARER.exec(request.headers.authorization ?? '')?.[1],
    }
    let secret: Parameters<typeof fastifyJwt>[1]['secret']
    if (auth.strategy === 'secret') secret = auth.key
    else if (auth.strategy === 'publicKey') secret = { public: auth.key }
    else {
      const keys = new JwksKeys(auth.key, auth.algorithms)
      secret = async (_request: FastifyRequest, token: TokenOrHeader) => {
        const { kid, alg } = ('header' in token ? token.header : token) as { kid?: unknown; alg?: unknown }
        // Checked before any fetch: `none`, HMAC and unlisted algorithms never reach the key set.
        if (typeof alg !== 'string' || !auth.algorithms.includes(alg)) throw new TokenRefused('Unsupported algorithm')
        if (kid !== undefined && typeof kid !== 'string') throw new TokenRefused('Malformed token')
        return keys.keyFor(kid, alg)
      }
    }
    // Loaded only when auth is on: most deployments without it never pay its start-up (~0.2 s).
    const { default: jwt } = await import('@fastify/jwt')
    await app.register(jwt, {
      secret,
      // The key callback needs the header (kid, alg), not only the payload.
      decode: { complete: true },
      verify,
      messages: { authorizationTokenInvalid: (error: Error) => error.message },
    })

    app.addHook('onRequest', async (request) => {
      const config = request.routeOptions.config
      if (request.method === 'OPTIONS' || (config.public === true && !(config.identifies === true && request.headers.authorization !== undefined))) return
      if (authorizationCount(request.raw.rawHeaders) > 1) throw new BadRequest('Only one Authorization header is allowed')
      const header = request.headers.authorization
      if (typeof header !== 'string' || !BEARER.test(header)) throw new Unauthorized(MESSAGES.missingToken)
      let identity: Record<string, unknown>
      try {
        identity = await request.jwtVerify<Record<string, unknown>>()
      } catch (error) {
        if (error instanceof JwksUnavailable) throw error
        throw new Unauthorized(verificationMessage(error as { code?: string; message?: string }))
      }
      // An age counted from an iat in the future would not run out in time: beyond the clock skew,
      // such a token is not valid yet (fast-jwt only checks that iat is not too old).
      if (auth.maxAge !== undefined && (identity.iat as number) > Date.now() / 1000 + auth.clockSkew) {
        throw new Unauthorized('Token not yet valid')
      }
      request.identity = identity
    })
  },
  { name: 'mapper-auth', fastify: '5.x' }
)
