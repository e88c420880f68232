// CORS (http.md §6): '*', a string or a list (a listed Origin is echoed, any other gets no CORS
// header at all); preflights on the known paths with the configured methods and headers; the
// request id exposed to browsers; credentials never enabled; off when the option is omitted.
import t from 'tap'
import { SECRET, call, serve, shared } from './http-support.js'

const corsHeaders = (headers: Record<string, unknown>): string[] => Object.keys(headers).filter((name) => name.startsWith('access-control-'))
const preflight = (url: string, origin: string) => ({
  method: 'OPTIONS' as const,
  url,
  headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
})

/** The tests of `origin: '*'` share one server (a build costs a few hundred milliseconds). */
const anyOrigin = shared(t, { options: { cors: { origin: '*' } } })

t.test("origin '*': every response allows any origin and exposes X-Request-Id", async (t) => {
  const app = await anyOrigin()
  for (const request of [
    { method: 'GET', url: '/health' },
    { method: 'POST', url: '/map', payload: { mapping: 'echo', input: {} } },
    { method: 'GET', url: '/nope' },
    { method: 'POST', url: '/map', payload: '{bad' },
  ] as const) {
    const response = await app.inject({ ...request, headers: { origin: 'https://app.example' } })
    t.equal(response.headers['access-control-allow-origin'], '*', `${request.method} ${request.url}`)
    t.equal(response.headers['access-control-expose-headers'], 'X-Request-Id')
    t.notOk(response.headers['access-control-allow-credentials'], 'credentials are never enabled')
  }
})

t.test("origin '*': the preflight has the default methods and headers, Allow, and no body", async (t) => {
  const app = await anyOrigin()
  const response = await app.inject(preflight('/map', 'http://localhost:5173'))
  t.equal(response.statusCode, 204)
  t.equal(response.body, '')
  t.equal(response.headers.allow, 'POST, OPTIONS')
  t.equal(response.headers['access-control-allow-origin'], '*')
  t.equal(response.headers['access-control-allow-methods'], 'GET, POST, OPTIONS')
  t.equal(response.headers['access-control-allow-headers'], 'authorization, content-type')
  t.equal(response.headers['access-control-expose-headers'], 'X-Request-Id')
  t.notOk(response.headers['access-control-allow-credentials'])
  t.ok(response.headers['x-request-id'])
})

t.test('a list of origins: a listed Origin is echoed with Vary; an unlisted one gets no CORS headers', async (t) => {
  const app = await serve(t, { options: { cors: { origin: ['https://a.example', 'https://b.example'] } } })
  for (const origin of ['https://a.example', 'https://b.example']) {
    const simple = await app.inject({ method: 'GET', url: '/health', headers: { origin } })
    t.equal(simple.headers['access-control-allow-origin'], origin)
    t.equal(simple.headers['access-control-expose-headers'], 'X-Request-Id')
    t.match(String(simple.headers.vary), /Origin/i)
    const before = await app.inject(preflight('/validate', origin))
    t.equal(before.statusCode, 204)
    t.equal(before.headers['access-control-allow-origin'], origin)
    t.equal(before.headers['access-control-allow-methods'], 'GET, POST, OPTIONS')
  }
  for (const origin of ['https://c.example', 'https://a.example.evil', 'null']) {
    const simple = await app.inject({ method: 'GET', url: '/health', headers: { origin } })
    t.same(corsHeaders(simple.headers), [], `simple request from ${origin}`)
    t.equal(simple.statusCode, 200, 'still served: CORS is for browsers')
    const error = await app.inject({ method: 'GET', url: '/nope', headers: { origin } })
    t.same(corsHeaders(error.headers), [], `error from ${origin}`)
    const before = await app.inject(preflight('/map', origin))
    t.equal(before.statusCode, 204)
    t.same(corsHeaders(before.headers), [], `preflight from ${origin}`)
    t.equal(before.headers.allow, 'POST, OPTIONS')
  }
})

t.test('a single origin string, custom methods and headers', async (t) => {
  const app = await serve(t, { options: { cors: { origin: 'https://only.example', methods: ['POST'], headers: 'authorization, content-type, x-request-id' } } })
  const response = await app.inject(preflight('/map', 'https://only.example'))
  t.equal(response.headers['access-control-allow-origin'], 'https://only.example')
  t.equal(response.headers['access-control-allow-methods'], 'POST')
  t.equal(response.headers['access-control-allow-headers'], 'authorization, content-type, x-request-id')
  t.same(corsHeaders((await app.inject(preflight('/map', 'https://other.example'))).headers), [])
})

t.test('preflights are never authenticated; a 401 still carries the CORS headers', async (t) => {
  const app = await serve(t, { options: { auth: { secret: SECRET }, cors: { origin: '*' } } })
  const before = await app.inject(preflight('/map', 'https://app.example'))
  t.equal(before.statusCode, 204)
  t.equal(before.headers['access-control-allow-origin'], '*')
  const denied = await call(app, { method: 'POST', url: '/map', payload: { mapping: 'echo' }, headers: { origin: 'https://app.example' } })
  t.equal(denied.statusCode, 401)
  t.equal(denied.headers['access-control-allow-origin'], '*', 'the browser can read why')
  t.equal(denied.headers['access-control-expose-headers'], 'X-Request-Id')
})

t.test('a preflight on an unknown path is 404', async (t) => {
  const app = await anyOrigin()
  const response = await call(app, preflight('/nope', 'https://app.example'))
  t.equal(response.statusCode, 404)
  t.equal(response.data.code, 'NotFound')
  t.notOk(response.headers['access-control-allow-methods'])
})

t.test('CORS omitted: no CORS headers anywhere', async (t) => {
  const app = await serve(t)
  for (const request of [{ method: 'GET', url: '/health' }, preflight('/map', 'https://app.example'), { method: 'GET', url: '/nope' }] as const) {
    const response = await app.inject({ headers: { origin: 'https://app.example' }, ...request })
    t.same(corsHeaders(response.headers), [], `${request.method} ${request.url}`)
  }
})
