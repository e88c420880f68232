// Shared fixtures of the auth-*.test.ts files: keys made per run with node:crypto, tokens signed with
// fast-jwt (or by hand, for the attacks), a quiet service built around them, and a JWKS server on
// 127.0.0.1 whose key set a test can change while it runs.
import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createSigner } from 'fast-jwt'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import pino from 'pino'
import t from 'tap'
import type { Extensions, MappingDocument } from '../engine/index.js'
import { buildServer } from '../server.js'

/** The test object tap hands to a subtest. */
export type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/** A shared secret of the minimum length (32 characters). */
export const SECRET = 'a-shared-secret-of-32-characters'

export interface KeyPair {
  readonly privateKey: KeyObject
  readonly publicKey: KeyObject
  /** SPKI PEM, as `auth.publicKey` takes it. */
  readonly publicPem: string
  /** PKCS#8 PEM, for the signer. */
  readonly privatePem: string
}

function pair(keys: { privateKey: KeyObject; publicKey: KeyObject }): KeyPair {
  return {
    ...keys,
    publicPem: keys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privatePem: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  }
}

export const rsaKeys = (): KeyPair => pair(generateKeyPairSync('rsa', { modulusLength: 2048 }))
export const ecKeys = (curve = 'P-256'): KeyPair => pair(generateKeyPairSync('ec', { namedCurve: curve }))
export const edKeys = (): KeyPair => pair(generateKeyPairSync('ed25519'))

export const nowSeconds = (): number => Math.floor(Date.now() / 1000)

export interface SignOptions {
  /** A secret string or a private key PEM. */
  readonly key: string
  readonly algorithm?: 'HS256' | 'HS384' | 'HS512' | 'RS256' | 'ES256' | 'ES384' | 'EdDSA' | 'PS256'
  readonly kid?: string
  /** Leave out the `iat` claim (fast-jwt adds it by default). */
  readonly noTimestamp?: boolean
  /** Leave out the `exp` claim the helper adds when the payload has none (auth.requireExp refuses such a token). */
  readonly noExpiry?: boolean
}

/**
 * A token signed with fast-jwt; `exp`, `nbf`, `iss`, `aud` go in the payload as given. Without an
 * `exp` of its own the token expires in an hour, as an identity provider's would: the service
 * refuses tokens without one by default (auth.requireExp).
 */
export function sign(payload: Record<string, unknown>, { key, algorithm = 'HS256', kid, noTimestamp, noExpiry }: SignOptions): string {
  const signer = createSigner({ key, algorithm, ...(kid === undefined ? {} : { kid }), ...(noTimestamp === true ? { noTimestamp } : {}) })
  const expiring = noExpiry === true || Object.hasOwn(payload, 'exp') ? payload : { ...payload, exp: nowSeconds() + 3600 }
  return signer(expiring)
}

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

/** A hand-made HMAC token: any header, any key bytes (the algorithm-confusion attack). */
export function hmacToken(header: Record<string, unknown>, payload: Record<string, unknown>, key: string | Buffer): string {
  const input = `${base64url(header)}.${base64url(payload)}`
  const hash = String(header.alg ?? 'HS256').replace('HS', 'sha')
  return `${input}.${createHmac(hash, key).update(input).digest('base64url')}`
}

/** An unsigned token (`alg: none`), with an empty or a made-up signature segment. */
export function unsignedToken(payload: Record<string, unknown>, signature = '', alg = 'none'): string {
  return `${base64url({ alg, typ: 'JWT' })}.${base64url(payload)}.${signature}`
}

/** The mappings every auth test serves: `echo` and `whoami` (what the token said, via an extension). */
export const MAPPINGS: MappingDocument[] = [
  { $id: 'echo', mapping: { '/echo': '/' } } as MappingDocument,
  { $id: 'whoami', mapping: { '/identity': { whoami: {} } } } as MappingDocument,
]

/** A test extension surface whose plugin returns `context.identity`. */
export const EXTENSIONS: Extensions = {
  plugins: { whoami: (_options: unknown, _value: unknown, context) => context.identity },
}

export const quietLogger = (): pino.Logger => pino({ level: 'silent' })

/** The service with the given options (auth and claims), closed at teardown. */
export async function service(t: Pick<Tap, 'teardown'>, options: Record<string, unknown>): Promise<FastifyInstance> {
  // EXTENSIONS are functions: they run inline (isolation needs them from a module; isolation.test.ts).
  const app = await buildServer({ options: { isolation: false, ...options }, mappings: MAPPINGS, extensions: EXTENSIONS, logger: quietLogger() })
  t.teardown(() => app.close())
  return app
}

/**
 * Services shared by the tests of one file: one per distinct options (plain data, compared as
 * JSON), built on first use and closed when the file ends (`t` is the file's root test). For
 * strategies that keep no state between requests (a secret, a public key): a JWKS is fetched and
 * cached per service, so its tests build their own.
 */
export function sharedServices(t: Pick<Tap, 'teardown'>): (options: Record<string, unknown>) => Promise<FastifyInstance> {
  const services = new Map<string, Promise<FastifyInstance>>()
  return (options) => {
    const key = JSON.stringify(options)
    let app = services.get(key)
    if (app === undefined) services.set(key, (app = service(t, options)))
    return app
  }
}

export interface Call {
  readonly method?: 'GET' | 'POST' | 'OPTIONS' | 'HEAD' | 'PUT' | 'DELETE'
  readonly url?: string
  readonly token?: string
  /** The whole Authorization header, when the test needs an odd one. */
  readonly authorization?: string
  readonly body?: unknown
}

/** One injected request; POST /map of the registered `echo` mapping by default. */
export function call(app: FastifyInstance, { method = 'POST', url = '/map', token, authorization, body }: Call = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = {}
  if (authorization !== undefined) headers.authorization = authorization
  else if (token !== undefined) headers.authorization = `Bearer ${token}`
  const payload = body ?? (method === 'POST' ? { mapping: 'echo', input: { a: 1 } } : undefined)
  return app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
}

/** Asserts the 401 of http.md §3 and §5: status, `WWW-Authenticate: Bearer`, the error body. */
export function assertUnauthorized(t: Tap, response: LightMyRequestResponse, message: string): void {
  t.equal(response.statusCode, 401, `401 (${message})`)
  t.equal(response.headers['www-authenticate'], 'Bearer')
  const body = response.json() as Record<string, unknown>
  t.same(Object.keys(body), ['code', 'message', 'requestId'])
  t.same(body, { code: 'Unauthorized', message, requestId: response.headers['x-request-id'] })
  t.match(body.requestId, /^req_[0-9a-f]{16}$/)
}

/** Asserts a 200 from the `echo` mapping. */
export function assertMapped(t: Tap, response: LightMyRequestResponse): void {
  t.equal(response.statusCode, 200, response.body)
  t.same(response.json(), { echo: { a: 1 }, valid: true, errors: [] })
}

export interface JwksServer {
  /** The origin, `http://127.0.0.1:<port>`. */
  readonly origin: string
  /** The JWK set served at `path`; replace it to rotate keys. */
  keys: Array<Record<string, unknown>>
  /** The paths requested so far. */
  readonly hits: string[]
}

/** A JWKS endpoint on 127.0.0.1 serving `server.keys` at `path`; 404 elsewhere; closed at teardown. */
export async function jwksServer(t: Pick<Tap, 'teardown'>, path = '/.well-known/jwks.json'): Promise<JwksServer> {
  const state: { keys: Array<Record<string, unknown>>; hits: string[] } = { keys: [], hits: [] }
  const server = createServer((req, res) => {
    state.hits.push(req.url ?? '')
    if (req.method !== 'GET' || req.url !== path) {
      res.statusCode = 404
      res.end()
      return
    }
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ keys: state.keys }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return Object.assign(state, { origin })
}

/** A public key as a JWK with its kid (and `alg`, `use`), as an identity provider publishes it. */
export function jwk(keys: KeyPair, kid: string, alg?: string): Record<string, unknown> {
  return { ...keys.publicKey.export({ format: 'jwk' }), kid, use: 'sig', ...(alg === undefined ? {} : { alg }) }
}
