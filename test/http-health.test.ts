// GET /health (liveness) and GET /health/mapping (the canary through the full engine, within
// health.timeout, whose expiry aborts the canary's signal); neither is ever authenticated.
import t from 'tap'
import { stockExtensions } from '../extensions/stock.js'
import type { EvaluationContext } from '../engine/index.js'
import { ECHO, SECRET, call, serve, settlesWithin, shared, upstream } from './http-support.js'

const health = { method: 'GET', url: '/health' } as const
const canary = { method: 'GET', url: '/health/mapping' } as const

/** The tests of the default options share one server (a build costs a few hundred milliseconds). */
const plain = shared(t)

t.test('GET /health: 200 { status: ok }', async (t) => {
  const app = await plain()
  const response = await call(app, health)
  t.equal(response.statusCode, 200)
  t.equal(response.body, '{"status":"ok"}')
})

t.test('GET /health/mapping: the built-in echo canary, with an empty registry', async (t) => {
  const app = await serve(t, { mappings: [] })
  const response = await call(app, canary)
  t.equal(response.statusCode, 200)
  t.same(Object.keys(response.data), ['status', 'mapping', 'durationMs'])
  t.equal(response.data.status, 'ok')
  t.equal(response.data.mapping, 'echo')
  t.equal(typeof response.data.durationMs, 'number')
  t.ok(response.data.durationMs >= 0)
})

t.test('GET /health/mapping: a registered canary runs with input { health: check }', async (t) => {
  const inputs: unknown[] = []
  const record = async (_options: unknown, value: unknown, context: EvaluationContext): Promise<unknown> => {
    inputs.push(context.input)
    return value
  }
  const app = await serve(t, {
    mappings: [ECHO, { $id: 'probe', mapping: { '/seen': { source: '/health', record: {} } } }],
    extensions: { plugins: { record } },
    options: { health: { mapping: 'probe' } },
  })
  const response = await call(app, canary)
  t.equal(response.statusCode, 200)
  t.equal(response.data.mapping, 'probe')
  t.same(inputs, [{ health: 'check' }])
})

t.test('GET /health/mapping: a canary result with valid: false still completes: 200', async (t) => {
  const app = await serve(t, { mappings: [{ $id: 'strict', mapping: { '/n': { source: '/health', type: 'number' } } }], options: { health: { mapping: 'strict' } } })
  t.equal((await call(app, canary)).statusCode, 200)
})

t.test('health.mapping not registered: 503 Unavailable', async (t) => {
  const hidden = await serve(t, { options: { health: { mapping: 'nope' } } })
  const response = await call(hidden, canary)
  t.equal(response.statusCode, 503)
  t.same(response.data, { code: 'Unavailable', message: 'An unexpected error occurred', requestId: response.headers['x-request-id'] })
  const full = await serve(t, { options: { health: { mapping: 'nope' }, errorDetail: 'full' } })
  t.equal((await call(full, canary)).data.message, 'Health canary "nope" is not a registered mapping')
})

t.test('a canary whose plugin hangs: 503 after health.timeout, and the plugin sees context.signal abort', async (t) => {
  let sawAbort!: (reason: unknown) => void
  const aborted = new Promise((resolve) => (sawAbort = resolve))
  const signals: Array<AbortSignal | undefined> = []
  const hang = (_options: unknown, _value: unknown, context: EvaluationContext): Promise<unknown> =>
    new Promise((resolve) => {
      signals.push(context.signal)
      context.signal?.addEventListener('abort', () => {
        sawAbort(context.signal?.reason)
        resolve(null)
      }, { once: true })
    })
  const app = await serve(t, {
    mappings: [{ $id: 'hanging', mapping: { '/x': { constant: 1, hang: {} } } }],
    extensions: { plugins: { hang } },
    options: { health: { mapping: 'hanging', timeout: 50 }, errorDetail: 'full' },
  })
  const response = await call(app, canary)
  t.equal(response.statusCode, 503)
  t.equal(response.data.code, 'Unavailable')
  t.equal(response.data.message, 'Mapping-path health check timed out after 50 ms')
  t.equal(signals.length, 1)
  t.ok(signals[0] instanceof AbortSignal, 'the plugin received a signal')
  t.ok(await settlesWithin(aborted, 5000), 'the signal fired')
  t.equal(signals[0]?.aborted, true)
})

t.test('a canary that fails, or meets a refused redirect: 503, never 422', async (t) => {
  const fail = async (): Promise<never> => {
    throw new Error('broken canary')
  }
  const failing = await serve(t, {
    mappings: [{ $id: 'failing', mapping: { '/x': { constant: 1, fail: {} } } }],
    extensions: { plugins: { fail } },
    options: { health: { mapping: 'failing' }, errorDetail: 'full' },
  })
  const failed = await call(failing, canary)
  t.equal(failed.statusCode, 503)
  t.equal(failed.data.message, 'Mapping-path health check failed')

  const up = await upstream(t, (_req, res) => {
    res.statusCode = 302
    res.setHeader('location', '/elsewhere')
    res.end()
  })
  const redirecting = await serve(t, {
    mappings: [{ $id: 'fetching', mapping: { '/data': { request: { origin: up.origin, pathname: '/moved' } } } }],
    extensions: stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' }),
    options: { health: { mapping: 'fetching' } },
  })
  const refused = await call(redirecting, canary)
  t.equal(refused.statusCode, 503)
  t.equal(refused.data.code, 'Unavailable')
  t.same(up.hits, ['GET /moved'])
})

t.test('never authenticated, even with auth on', async (t) => {
  const app = await serve(t, { options: { auth: { secret: SECRET } } })
  t.equal((await call(app, health)).statusCode, 200)
  t.equal((await call(app, canary)).statusCode, 200)
  t.equal((await call(app, { method: 'GET', url: '/health', headers: { authorization: 'Bearer not-a-token' } })).statusCode, 200, 'a bad token is ignored')
})

t.test('other methods: 405 Use GET; HEAD answers without a body', async (t) => {
  const app = await plain()
  for (const url of ['/health', '/health/mapping']) {
    const response = await call(app, { method: 'POST', url, payload: {} })
    t.equal(response.statusCode, 405, url)
    t.equal(response.data.message, 'Use GET')
    t.equal(response.headers.allow, 'GET, HEAD, OPTIONS')
    const head = await app.inject({ method: 'HEAD', url })
    t.equal(head.statusCode, 200)
    t.equal(head.body, '')
  }
})
