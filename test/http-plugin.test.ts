// The plugin form (http.md §1): a host Fastify app registers `mapperService` under a prefix next to
// its own routes, hooks, content-type parser and error handler. The service's hooks, error handler,
// 404 handler, body parser, body limit and CORS policy stay inside its prefix; the host's stay the
// host's, and the service's routes answer under the prefix exactly as in the standalone server.
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import mapperService from '../app.js'
import { ECHO, GENERATED_ID, GREETINGS, JSON_TYPE, call } from './http-support.js'
import { untyped } from './startup-support.js'

/** A host with its own hook, text parser, error handler and routes, and the service under /mapper. */
async function build(t: { teardown(fn: () => unknown): void }): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, bodyLimit: 1000 })
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('x-host-hook', 'ran')
  })
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => done(null, { text: body }))
  app.setErrorHandler((error: Error, _request, reply) => reply.code(418).send({ host: true, message: error.message }))
  app.get('/ping', async () => ({ pong: true }))
  app.post('/echo', async (request) => ({ received: request.body }))
  app.get('/fail', async () => {
    throw new Error('host failure')
  })
  await app.register(mapperService, {
    prefix: '/mapper',
    mappings: [ECHO, GREETINGS],
    options: { logging: { level: 'silent' }, cors: { origin: '*' }, maxBodyBytes: 100, map: { explicit: true } },
  })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

/**
 * The tests of one host share it (a build costs a few hundred milliseconds): they only send requests,
 * which leave nothing behind. Built on first use, closed when the file ends.
 */
let shared: Promise<FastifyInstance> | undefined
const host = (): Promise<FastifyInstance> => (shared ??= build(t))

t.test("the host's routes keep the host's behaviour", async (t) => {
  const app = await host()
  const ping = await app.inject({ method: 'GET', url: '/ping', headers: { origin: 'https://app.example' } })
  t.equal(ping.statusCode, 200)
  t.same(JSON.parse(ping.body), { pong: true })
  t.equal(ping.headers['x-host-hook'], 'ran')
  t.notOk(ping.headers['x-request-id'], 'no request id hook on the host')
  t.notOk(ping.headers['cache-control'], 'no no-store on the host')
  t.notOk(ping.headers['access-control-allow-origin'], 'no CORS policy on the host')
})

t.test("the host's own JSON parser, text parser and body limit", async (t) => {
  const app = await host()
  const json = await call(app, { method: 'POST', url: '/echo', payload: '{"a":1}', headers: { 'content-type': 'application/json' } })
  t.same(json.data, { received: { a: 1 } })
  const text = await call(app, { method: 'POST', url: '/echo', payload: 'hello', headers: { 'content-type': 'text/plain' } })
  t.same(text.data, { received: { text: 'hello' } })
  const broken = await call(app, { method: 'POST', url: '/echo', payload: '{"a":', headers: { 'content-type': 'application/json' } })
  t.equal(broken.statusCode, 418, "the host's error handler")
  t.equal(broken.data.host, true)
  const unknownType = await app.inject({ method: 'POST', url: '/echo', payload: '{"a":1}', headers: { 'content-type': 'application/x-custom' } })
  t.equal(unknownType.statusCode, 418, 'the host still refuses types it has no parser for')
  const large = await call(app, { method: 'POST', url: '/echo', payload: 'x'.repeat(500), headers: { 'content-type': 'text/plain' } })
  t.equal(large.statusCode, 200, "the service's 100-byte limit does not apply to the host")
})

t.test("the host's error handler and 404 handler", async (t) => {
  const app = await host()
  const failed = await call(app, { method: 'GET', url: '/fail' })
  t.equal(failed.statusCode, 418)
  t.same(failed.data, { host: true, message: 'host failure' })
  const missing = await call(app, { method: 'GET', url: '/nope' })
  t.equal(missing.statusCode, 404)
  t.equal(missing.data.message, 'Route GET:/nope not found', "Fastify's default 404, not the service's")
  t.notOk(missing.data.code === 'NotFound')
  const wrongMethod = await call(app, { method: 'DELETE', url: '/ping' })
  t.equal(wrongMethod.statusCode, 404)
  t.notOk(wrongMethod.headers.allow)
})

t.test("the service's routes under the prefix, with the service's behaviour", async (t) => {
  const app = await host()
  const health = await call(app, { method: 'GET', url: '/mapper/health', headers: { origin: 'https://app.example' } })
  t.equal(health.statusCode, 200)
  t.same(health.data, { status: 'ok' })
  t.match(health.headers['x-request-id'], GENERATED_ID)
  t.equal(health.headers['cache-control'], 'no-store')
  t.equal(health.headers['content-type'], JSON_TYPE)
  t.equal(health.headers['access-control-allow-origin'], '*')

  const mapped = await call(app, { method: 'POST', url: '/mapper/map', payload: '{"mapping":"greet","input":{"message":"hi"}}', headers: { 'content-type': 'text/plain' } })
  t.same(mapped.data, { text: 'hi', valid: true, errors: [] }, 'JSON whatever the Content-Type, under the prefix')
  const explicit = await call(app, { method: 'POST', url: '/mapper/map', payload: { mapping: { mapping: { '/t': '/m' } }, input: { m: 1 } } })
  t.same(explicit.data, { t: 1, valid: true, errors: [] })
  t.same((await call(app, { method: 'GET', url: '/mapper/mappings' })).data, { echo: ECHO, greet: GREETINGS.mappings.greet })
  t.same((await call(app, { method: 'GET', url: '/mapper/extensions' })).data, { initializers: [], transformers: [], plugins: ['request'] })
  t.same(Object.keys((await call(app, { method: 'GET', url: '/mapper/health/mapping' })).data), ['status', 'mapping', 'durationMs'])
  t.equal((await call(app, { method: 'POST', url: '/mapper/validate', payload: { mapping: 'echo' } })).statusCode, 200)
  t.equal((await call(app, { method: 'GET', url: '/mapper/openapi.json' })).data.openapi, '3.1.0')
})

t.test("the service's errors under the prefix use the service's error body", async (t) => {
  const app = await host()
  const checks: Array<[Parameters<typeof call>[1], number, string, string]> = [
    [{ method: 'POST', url: '/mapper/map', payload: '{"mapping":' }, 400, 'BadRequest', 'Body must be valid JSON (line 1, column 12): unexpected end of input'],
    [{ method: 'POST', url: '/mapper/map', payload: `{"mapping":"echo","input":"${'x'.repeat(200)}"}` }, 413, 'PayloadTooLarge', 'Request body exceeds the 100-byte limit'],
    [{ method: 'GET', url: '/mapper/map' }, 405, 'MethodNotAllowed', 'Use POST'],
    [{ method: 'GET', url: '/mapper/nope' }, 404, 'NotFound', 'No route for GET /mapper/nope'],
    [{ method: 'PUT', url: '/mapper/mappings/x', payload: '{}' }, 404, 'NotFound', 'No route for PUT /mapper/mappings/x'],
    [{ method: 'POST', url: '/mapper/map', payload: { mapping: 'nope' } }, 404, 'NotFound', 'No mapping registered as "nope"'],
  ]
  for (const [request, status, code, message] of checks) {
    const response = await call(app, request)
    t.equal(response.statusCode, status, `${request.method} ${request.url}`)
    t.same(response.data, { code, message, requestId: response.headers['x-request-id'] })
    t.match(response.headers['x-request-id'], GENERATED_ID)
  }
  const preflight = await app.inject({ method: 'OPTIONS', url: '/mapper/map', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } })
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers.allow, 'POST, OPTIONS')
  t.equal(preflight.headers['access-control-allow-methods'], 'GET, POST, OPTIONS')
})

t.test('two instances side by side keep their own registries and options', async (t) => {
  const app = Fastify({ logger: false })
  await app.register(mapperService, { prefix: '/a', mappings: [ECHO], options: { logging: { level: 'silent' }, requestIdPrefix: 'a-' } })
  await app.register(mapperService, { prefix: '/b', mappings: [GREETINGS], options: { logging: { level: 'silent' }, map: { explicit: true } } })
  t.teardown(() => app.close())
  t.same(Object.keys((await call(app, { method: 'GET', url: '/a/mappings' })).data), ['echo'])
  t.same(Object.keys((await call(app, { method: 'GET', url: '/b/mappings' })).data), ['greet'])
  const a = await call(app, { method: 'POST', url: '/a/map', payload: { mapping: { mapping: {} } } })
  t.equal(a.statusCode, 403, 'explicit off in /a')
  t.match(a.headers['x-request-id'], /^a-[0-9a-f]{16}$/)
  const b = await call(app, { method: 'POST', url: '/b/map', payload: { mapping: { mapping: { '/v': { constant: 1 } } } } })
  t.same(b.data, { v: 1, valid: true, errors: [] })
  t.match(b.headers['x-request-id'], GENERATED_ID)
})

t.test('the service refuses invalid options at registration', async (t) => {
  const app = Fastify({ logger: false })
  app.register(mapperService, { prefix: '/mapper', options: untyped({ errorDetail: 'everything' }) })
  await t.rejects(async () => app.ready(), /errorDetail/)
  await app.close()
})
