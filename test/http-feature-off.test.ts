// Answers given because a feature is off name the option that turns it on (there are no per-option
// environment variables: options come from OPTIONS, OPTIONS_FILE or the plugin's options): the
// explicit form (403, /map and /map/stream), explain traces (403), and the 404 of the playground,
// the OpenAPI document and the metrics when they are not served, standalone and under a plugin's
// prefix. Where the feature is on, nothing changes; a path that is no feature's stays a plain 404.
import t from 'tap'
import Fastify from 'fastify'
import mapperService from '../app.js'
import { ECHO, call, serve, sharedByOptions } from './http-support.js'

const WHERE = "(in OPTIONS, OPTIONS_FILE or the plugin's options)"
const server = sharedByOptions(t)

t.test('the explicit form off: 403 naming map.explicit, on /map and /map/stream', async (t) => {
  const app = await server()
  const refused = await call(app, { method: 'POST', url: '/map', payload: { mapping: { mapping: { '/b': '/a' } }, input: { a: 1 } } })
  t.equal(refused.statusCode, 403)
  t.equal(refused.data.code, 'Forbidden')
  t.equal(refused.data.message, `The explicit mapping form is not enabled on this deployment: the option map.explicit turns this on ${WHERE}`)
  const stream = await app.inject({ method: 'POST', url: '/map/stream', headers: { 'content-type': 'application/x-ndjson' }, payload: '{"mapping":{"mapping":{"/b":"/a"}}}\n{"a":1}\n' })
  t.equal(stream.statusCode, 403)
  t.match(stream.body, /the option map\.explicit turns this on/)
})

t.test('explain off: 403 naming map.explain, whichever form is asked', async (t) => {
  for (const options of [{}, { map: { explicit: true, explain: false } }]) {
    const refused = await call(await server(options), { method: 'POST', url: '/map', payload: { mapping: 'echo', input: 1, explain: true } })
    t.equal(refused.statusCode, 403, JSON.stringify(options))
    t.equal(refused.data.message, `Explain traces are not enabled on this deployment: the option map.explain turns this on ${WHERE}`)
  }
})

t.test('a path served only with an option on: its 404 names the option', async (t) => {
  const app = await serve(t, { options: { openapi: false, metrics: false } })
  const cases: Array<[string, string]> = [
    ['/playground', 'the playground is not enabled on this deployment; the option playground'],
    ['/playground/playground.js', 'the playground is not enabled on this deployment; the option playground'],
    ['/openapi.json', 'the OpenAPI document is not enabled on this deployment; the option openapi'],
    ['/metrics', 'the metrics are off on this deployment, or served at another path (metrics.path); the option metrics'],
  ]
  for (const [url, says] of cases) {
    for (const method of ['GET', 'HEAD'] as const) {
      const response = await app.inject({ method, url })
      t.equal(response.statusCode, 404, `${method} ${url}`)
      if (method === 'GET') t.equal(response.json().message, `No route for GET ${url}: ${says} turns this on ${WHERE}`)
    }
  }
  // Another method would not be served with the feature on either (405 then): no option to name.
  t.equal((await call(app, { method: 'POST', url: '/playground', payload: {} })).data.message, 'No route for POST /playground')
  t.equal((await call(app, { method: 'GET', url: '/playgrounds' })).data.message, 'No route for GET /playgrounds', 'only the path and below it')
  t.equal((await call(app, { method: 'GET', url: '/nope' })).data.message, 'No route for GET /nope')
})

t.test('on, or moved: the feature answers, and a 404 below it names no option', async (t) => {
  const app = await serve(t, { options: { playground: true, metrics: { path: '/ops/metrics' } } })
  t.equal((await app.inject({ method: 'GET', url: '/playground' })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/openapi.json' })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/ops/metrics' })).statusCode, 200)
  t.equal((await call(app, { method: 'GET', url: '/playground/nothing.js' })).data.message, 'No route for GET /playground/nothing.js')
  t.match((await call(app, { method: 'GET', url: '/metrics' })).data.message, /served at another path \(metrics\.path\); the option metrics/, 'moved: says where to look')
})

t.test('the plugin form: the same under its prefix, the host untouched', async (t) => {
  const host = Fastify({ logger: false })
  await host.register(mapperService, { prefix: '/mapper', mappings: [ECHO], options: { logging: { level: 'silent' } } })
  t.teardown(() => host.close())
  const playground = await call(host, { method: 'GET', url: '/mapper/playground' })
  t.equal(playground.statusCode, 404)
  t.equal(playground.data.message, `No route for GET /mapper/playground: the playground is not enabled on this deployment; the option playground turns this on ${WHERE}`)
  const explicit = await call(host, { method: 'POST', url: '/mapper/map', payload: { mapping: { mapping: {} } } })
  t.equal(explicit.statusCode, 403)
  t.match(explicit.data.message, /the option map\.explicit turns this on/)
  const outside = await host.inject({ method: 'GET', url: '/playground' })
  t.equal(outside.statusCode, 404, "the host's own 404 outside the prefix")
  t.notMatch(outside.body, /option playground/)
})
