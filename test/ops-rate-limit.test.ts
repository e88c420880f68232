// Rate limiting (options.rateLimit) through a real listening server: the request over the limit is
// 429 with the error body and Retry-After; the bucket is the verified token subject when auth is
// on (a forged token never reaches, nor picks, one) and the client IP otherwise; health is never
// limited; off by default. Load shedding is off: a loaded machine's event-loop delay must not answer
// 503 for what these tests are about.
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import pino from 'pino'
import t from 'tap'
import { ConfigError, resolveConfig } from '../config/resolve.js'
import { authPlugin } from '../http/plugins/auth/index.js'
import { resolveRateLimitOptions, type RateLimitConfig } from '../http/plugins/rate-limit/options.js'
import { buildServer } from '../server.js'
import { ECHO, SECRET, token } from './http-support.js'

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: any
}

/** One exchange on a fresh connection, optionally from another loopback address. */
function send(port: number, method: string, path: string, { headers = {}, from }: { headers?: Record<string, string>; from?: string } = {}): Promise<Answer> {
  const text = method === 'POST' ? JSON.stringify({ mapping: 'echo', input: { n: 1 } }) : undefined
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        localAddress: from,
        headers: { ...headers, ...(text === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }) },
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: body === '' ? undefined : JSON.parse(body) }))
      }
    )
    req.on('error', reject)
    req.end(text)
  })
}

async function listening(t: { teardown(fn: () => unknown): void }, options: Record<string, unknown>): Promise<number> {
  const app = await buildServer({ mappings: [ECHO], options: { logging: { level: 'silent' }, underPressure: false, ...options } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  return (app.server.address() as AddressInfo).port
}

const bearer = (sub: string, key = SECRET): Record<string, string> => ({ authorization: `Bearer ${token({ sub }, { key })}` })

t.test('without auth: keyed by client IP; the request over the limit is 429 with the error body and Retry-After', async (t) => {
  const port = await listening(t, { rateLimit: { max: 3, timeWindow: 60000 } })
  for (let i = 1; i <= 3; i++) {
    const ok = await send(port, 'POST', '/map')
    t.equal(ok.status, 200, `request ${i} is served`)
    t.equal(ok.headers['x-ratelimit-remaining'], String(3 - i), 'the remaining count is announced')
  }
  const refused = await send(port, 'POST', '/map')
  t.equal(refused.status, 429)
  t.match(refused.body, { code: 'TooManyRequests', message: 'Rate limit exceeded: at most 3 requests per 1 minute' })
  t.strictSame(Object.keys(refused.body), ['code', 'message', 'requestId'], 'the error body, nothing else')
  t.equal(refused.body.requestId, refused.headers['x-request-id'], 'with the request id')
  const retryAfter = Number(refused.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After is the seconds left in the window (${retryAfter})`)

  // Without auth a token is not verified, so its subject cannot open another bucket.
  t.equal((await send(port, 'POST', '/map', { headers: bearer('someone-else') })).status, 429, 'an unverified subject shares the IP bucket')
  t.equal((await send(port, 'GET', '/mappings')).status, 429, 'every non-public route counts')
  t.equal((await send(port, 'GET', '/health')).status, 200, '/health is never limited')
  t.equal((await send(port, 'GET', '/health/mapping')).status, 200, '/health/mapping is never limited')

  // Another loopback address is another client.
  // Another loopback address is another client (Linux routes all of 127/8 to lo).
  t.equal((await send(port, 'POST', '/map', { from: '127.0.0.2' })).status, 200, 'another IP has its own bucket')
  // Without server.trustProxy a forwarded address is not believed: it cannot open another bucket.
  t.equal((await send(port, 'POST', '/map', { headers: { 'x-forwarded-for': '203.0.113.9' } })).status, 429, 'X-Forwarded-For is ignored by default')
})

t.test('behind a trusted proxy (server.trustProxy): keyed by the forwarded client address', async (t) => {
  const port = await listening(t, { rateLimit: { max: 1, timeWindow: 60000 }, server: { trustProxy: '127.0.0.1' } })
  const from = (client: string) => send(port, 'POST', '/map', { headers: { 'x-forwarded-for': client } })
  t.equal((await from('203.0.113.9')).status, 200, 'the first client is served')
  t.equal((await from('203.0.113.9')).status, 429, 'and then limited')
  t.equal((await from('203.0.113.10')).status, 200, 'another client behind the same proxy has its own bucket')
  // A proxy that is not trusted (127.0.0.2) is itself the client, whatever it forwards.
  t.equal((await send(port, 'POST', '/map', { from: '127.0.0.2', headers: { 'x-forwarded-for': '198.51.100.1' } })).status, 200, 'an untrusted peer is keyed by its own address')
  t.equal((await send(port, 'POST', '/map', { from: '127.0.0.2', headers: { 'x-forwarded-for': '198.51.100.2' } })).status, 429, 'whatever it forwards')

  const hops = resolveConfig({ server: { trustProxy: 1 } }).server.trustProxy
  t.equal(hops, 1, 'a hop count is kept as a count')
  t.strictSame(resolveConfig({ server: { trustProxy: '10.0.0.0/8, 127.0.0.1' } }).server.trustProxy, ['10.0.0.0/8', '127.0.0.1'], 'a list is split at commas')
  t.throws(() => resolveConfig({ server: { trustProxy: 0 } }), /options\.server\.trustProxy/, 'a hop count of 0 is refused')
})

t.test('with auth: keyed by the verified token subject', async (t) => {
  const port = await listening(t, { auth: { secret: SECRET }, rateLimit: { max: 2 } })
  t.equal((await send(port, 'POST', '/map', { headers: bearer('alice') })).status, 200)
  t.equal((await send(port, 'POST', '/map', { headers: bearer('alice') })).status, 200)
  const refused = await send(port, 'POST', '/map', { headers: bearer('alice') })
  t.equal(refused.status, 429, "alice's third request is refused")
  t.equal(refused.body.code, 'TooManyRequests')
  t.ok(refused.headers['retry-after'], 'Retry-After')

  t.equal((await send(port, 'POST', '/map', { headers: bearer('bob') })).status, 200, 'bob, from the same IP, has his own bucket')
  // A token bob did not get (wrong key) is refused by authentication and counts in no bucket.
  for (let i = 0; i < 3; i++) t.equal((await send(port, 'POST', '/map', { headers: bearer('bob', 'a-different-secret-also-long-enough-0123456789') })).status, 401)
  t.equal((await send(port, 'POST', '/map', { headers: bearer('bob') })).status, 200, "forged tokens did not use bob's bucket")
  t.equal((await send(port, 'POST', '/map', { headers: bearer('bob') })).status, 429, 'then bob is at his limit')
  t.equal((await send(port, 'GET', '/health')).status, 200, 'health is public and never limited')
})

/**
 * What start-up makes of options.rateLimit (app.ts): resolveConfig checks the options, then the
 * rate-limit plugin resolves what resolveConfig handed it. False: off.
 */
function limitOf(options: unknown): RateLimitConfig | false {
  const given = resolveConfig(options).rateLimit
  return given === false ? false : resolveRateLimitOptions(given)
}

t.test('off by default; true takes the defaults; the option is validated', async (t) => {
  const off = await listening(t, {})
  t.equal((await send(off, 'POST', '/map')).headers['x-ratelimit-limit'], undefined, 'no limit unless configured')
  const on = await listening(t, { rateLimit: true })
  t.equal((await send(on, 'POST', '/map')).headers['x-ratelimit-limit'], '100', 'true: 100 requests')
  t.strictSame(limitOf({ rateLimit: true }), { max: 100, timeWindow: 60000 })
  t.equal(limitOf({}), false)
  t.throws(() => limitOf({ rateLimit: { max: 0 } }), { name: 'ConfigError', message: /^options\.rateLimit/ })
  t.throws(() => limitOf({ rateLimit: { per: 'ip' } }), { name: 'ConfigError', message: /^options\.rateLimit/ })
})

t.test('the plugin checks options.rateLimit as it is registered: a mistake fails registration with the ConfigError', async (t) => {
  const rateLimit = { max: 5, redis: 'http://cache.example:6379' }
  const message = 'options.rateLimit.redis (http://cache.example:6379/) must be a redis:// or rediss:// URL'
  t.strictSame(resolveConfig({ rateLimit }).rateLimit, rateLimit, 'resolveConfig checks the shape only, and hands options.rateLimit on as given')
  await t.rejects(buildServer({ mappings: [ECHO], options: { logging: { level: 'silent' }, rateLimit } }), { name: 'ConfigError', message }, 'buildServer: the service\'s registration fails')
  // The plugin alone (after the auth plugin it depends on), on a bare instance.
  const { rateLimitPlugin } = await import('../http/plugins/rate-limit/index.js')
  const bare = Fastify({ loggerInstance: pino({ level: 'silent' }) })
  t.teardown(() => bare.close())
  const error = await bare.register(authPlugin, { auth: null }).register(rateLimitPlugin, { rateLimit }).ready().then(() => undefined, (error: unknown) => error)
  t.ok(error instanceof ConfigError, 'a ConfigError')
  t.equal((error as Error | undefined)?.message, message, 'the same one line')
})

t.test('the 429 message names the configured window, as people say it', async (t) => {
  const { describeWindow } = await import('../http/plugins/rate-limit/index.js')
  t.equal(describeWindow(60000), '1 minute')
  t.equal(describeWindow(90000), '90 seconds')
  t.equal(describeWindow(7_200_000), '2 hours')
  t.equal(describeWindow(86_400_000), '1 day')
  t.equal(describeWindow(1500), '1500 milliseconds')
})
