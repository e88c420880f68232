// Bearer-token authentication (http.md §5) with @fastify/jwt: one key strategy (a shared secret,
// an SPKI public key, or a JWKS fetched, cached and rotated by kid through get-jwks), an algorithm
// allowlist that never admits `none` nor mixes HMAC with public keys, issuer, audience and clock
// skew. Every route but the public ones authenticates before anything else happens, unknown paths
// included; the verified payload becomes `request.identity` (and `context.identity` for mappings).
import fastifyJwt, { type TokenOrHeader } from '@fastify/jwt'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import buildGetJwks from 'get-jwks'
import { MESSAGES, Unauthorized } from '../errors.js'
import type { Claims } from '../schemas/options.js'
import type { AuthConfig } from './config.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified token payload, or null when authentication is off. */
    identity: Record<string, unknown> | null
  }
  interface FastifyContextConfig {
    /** Never authenticated: health, OpenAPI, OPTIONS. */
    public?: boolean
  }
}

const BEARER = /^bearer +(\S+) *$/i

/** How long a JWKS fetch may take before the token is refused. */
const JWKS_TIMEOUT_MS = 5000

type Algorithm = NonNullable<NonNullable<Parameters<typeof fastifyJwt>[1]['verify']>['algorithms']>[number]

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`JWKS not available within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** The 401 message for a verification failure, by the error's code (and, for claims, its text). */
export function verificationMessage(error: { code?: string; message?: string }): string {
  const code = error.code ?? ''
  const text = error.message ?? ''
  if (code === 'FST_JWT_AUTHORIZATION_TOKEN_EXPIRED' || code === 'FAST_JWT_EXPIRED') return 'Token expired'
  if (code === 'FAST_JWT_INACTIVE') return 'Token not yet valid'
  if (code === 'FAST_JWT_INVALID_ALGORITHM' || code === 'FST_JWT_AUTHORIZATION_TOKEN_UNSIGNED' || code === 'FAST_JWT_MISSING_SIGNATURE') {
    return 'Unsupported algorithm'
  }
  if (/\biss\b/.test(text) && /claim/.test(text)) return 'Invalid issuer'
  if (/\baud\b/.test(text) && /claim/.test(text)) return 'Invalid audience'
  if (/signature/i.test(text)) return 'Invalid token signature'
  return 'Malformed token'
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

export interface AuthPluginOptions {
  readonly auth: AuthConfig | null
}

export const authPlugin = fp<AuthPluginOptions>(
  async (app, { auth }) => {
    app.decorateRequest('identity', null)
    if (auth === null) return

    const verify = {
      algorithms: [...auth.algorithms] as Algorithm[],
      ...(auth.issuer === undefined ? {} : { allowedIss: auth.issuer }),
      ...(auth.audience === undefined ? {} : { allowedAud: auth.audience }),
      clockTolerance: auth.clockSkew,
    }
    let secret: Parameters<typeof fastifyJwt>[1]['secret']
    if (auth.strategy === 'secret') secret = auth.key
    else if (auth.strategy === 'publicKey') secret = { public: auth.key }
    else {
      const jwksUrl = new URL(auth.key)
      // Keys are cached by kid; an unknown kid (a rotation) fetches the set again.
      const jwks = buildGetJwks({ jwksPath: jwksUrl.pathname + jwksUrl.search, max: 100, ttl: 10 * 60 * 1000 })
      secret = async (_request: FastifyRequest, token: TokenOrHeader) => {
        const { kid, alg } = 'header' in token ? token.header : token
        if (alg === undefined || !auth.algorithms.includes(alg)) {
          throw Object.assign(new Error('algorithm not allowed'), { code: 'FAST_JWT_INVALID_ALGORITHM' })
        }
        return withTimeout(jwks.getPublicKey({ domain: jwksUrl.origin, kid, alg }), JWKS_TIMEOUT_MS)
      }
    }
    await app.register(fastifyJwt, {
      secret,
      verify,
      messages: { authorizationTokenInvalid: (error: Error) => error.message },
    })

    app.addHook('onRequest', async (request) => {
      if (request.method === 'OPTIONS' || request.routeOptions.config.public === true) return
      const header = request.headers.authorization
      if (typeof header !== 'string' || !BEARER.test(header)) throw new Unauthorized(MESSAGES.missingToken)
      try {
        request.identity = await request.jwtVerify<Record<string, unknown>>()
      } catch (error) {
        throw new Unauthorized(verificationMessage(error as { code?: string; message?: string }))
      }
    })
  },
  { name: 'mapper-auth', fastify: '5.x' },
)
