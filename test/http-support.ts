// What the HTTP tests share: a silenced server closed at teardown, the documents they register,
// signed bearer tokens, and local upstreams on 127.0.0.1 for the request plugin.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { createSigner } from 'fast-jwt'
import { buildServer, type BuildConfig } from '../server.js'

export interface Teardown {
  teardown(fn: () => unknown): void
}

export const ECHO = { $id: 'echo', description: 'Echo the whole input back under /echo.', mapping: { '/echo': '/' } }

/** A compound document whose one member `greet` maps /message to /text. */
export const GREETINGS = { $id: 'greetings', mappings: { greet: { $id: 'greet', mapping: { '/text': '/message' } } } }

/** Reports a type error for a non-string /name: `valid: false` at evaluation. */
export const STRICT = { $id: 'strict', mapping: { '/name': { source: '/name', type: 'string' } } }

/** The generated request id: the default prefix and 16 lowercase hex characters. */
export const GENERATED_ID = /^req_[0-9a-f]{16}$/

export const JSON_TYPE = 'application/json; charset=utf-8'

/** A server from `buildServer` with logging silenced (unless the options say otherwise), closed at teardown. */
export async function serve(t: Teardown, build: BuildConfig = {}): Promise<FastifyInstance> {
  const { options = {}, ...rest } = build
  const app = await buildServer({ mappings: [ECHO], ...rest, options: { logging: { level: 'silent' }, ...options } })
  t.teardown(() => app.close())
  return app
}

/**
 * A server shared by the tests of one file that need the same options, `serve`d when a test first
 * asks for it and closed when the file ends (`t` is the file's root test), listening on 127.0.0.1
 * when told. A build costs a few hundred milliseconds, and a worker pool (explicit documents,
 * /validate of a submitted one) a second more: tests that leave nothing behind for the next one
 * share them.
 */
export function shared(t: Teardown, build: BuildConfig = {}, { listen = false } = {}): () => Promise<FastifyInstance> {
  let app: Promise<FastifyInstance> | undefined
  return () =>
    (app ??= serve(t, build).then(async (built) => {
      if (listen) await built.listen({ port: 0, host: '127.0.0.1' })
      return built
    }))
}

/**
 * `shared` servers keyed by their options (plain data, compared as JSON), the rest of the build
 * (mappings, extensions) fixed: tests asking for the same options get the same server.
 */
export function sharedByOptions(t: Teardown, build: Omit<BuildConfig, 'options'> = {}): (options?: BuildConfig['options']) => Promise<FastifyInstance> {
  const servers = new Map<string, () => Promise<FastifyInstance>>()
  return (options = {}) => {
    const key = JSON.stringify(options)
    let server = servers.get(key)
    if (server === undefined) servers.set(key, (server = shared(t, { ...build, options })))
    return server()
  }
}

/** Inject and parse: the response with its JSON body (undefined when there is none). */
export async function call(app: FastifyInstance, options: InjectOptions): Promise<LightMyRequestResponse & { data: any }> {
  const response = await app.inject(options)
  const data = response.body === '' ? undefined : JSON.parse(response.body)
  return Object.assign(response, { data })
}

export const SECRET = 'an-hmac-secret-long-enough-for-hs256-0123456789'

export interface TokenOptions {
  key?: string
  algorithm?: 'HS256' | 'HS384' | 'HS512' | 'none'
  iss?: string
  aud?: string
}

/**
 * A signed JWT (HS256 with SECRET unless told otherwise), expiring in an hour unless the payload
 * says otherwise: the service refuses tokens without `exp` by default (auth.requireExp).
 */
export function token(payload: Record<string, unknown> = {}, options: TokenOptions = {}): string {
  const { key = SECRET, algorithm = 'HS256', ...claims } = options
  const sign = createSigner(algorithm === 'none' ? { algorithm, ...claims } : { key, algorithm, ...claims })
  return sign(Object.hasOwn(payload, 'exp') ? payload : { ...payload, exp: Math.floor(Date.now() / 1000) + 3600 })
}

export const bearer = (payload: Record<string, unknown> = {}, options: TokenOptions = {}): Record<string, string> => ({
  authorization: `Bearer ${token(payload, options)}`,
})

export { upstream, type Upstream } from './request-support.js'

/** An origin on 127.0.0.1 where nothing listens (its port was just released). */
export async function refusingOrigin(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return `http://127.0.0.1:${port}`
}

/** The origin of a server listening on 127.0.0.1. */
export function originOf(app: FastifyInstance): string {
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

/** Resolves true when `promise` settles within `ms`, false otherwise (a bound, not a timing claim). */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  try {
    return await Promise.race([promise.then(() => true), expired])
  } finally {
    clearTimeout(timer)
  }
}
