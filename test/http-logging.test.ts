// Logging (http.md §7): one line per completed request with requestId, method, path (no query),
// status and durationMs; `error` with the real error for 5xx, `warn` "slow request" above the
// threshold, `info` otherwise; the bearer token never appears in the log output, at any level.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildServer, type BuildConfig } from '../server.js'
import { ECHO, SECRET, bearer, call } from './http-support.js'
import { capturedLog, type CapturedLog } from './log-support.js'

interface Captured extends CapturedLog {
  readonly app: FastifyInstance
}

/** A server whose pino logger writes into memory. */
async function capturing(t: { teardown(fn: () => unknown): void }, build: BuildConfig, level = 'info'): Promise<Captured> {
  const log = capturedLog(level)
  const app = await buildServer({ mappings: [ECHO], ...build, logger: log.logger })
  t.teardown(() => app.close())
  return { ...log, app }
}

const requestLines = (lines: Array<Record<string, any>>) => lines.filter((line) => 'status' in line)

const explode = {
  transformers: {
    explode: () => {
      throw new Error('kaboom: the real cause')
    },
  },
}
const boom = { $id: 'boom', mapping: { '/x': { source: '/a', transform: 'explode' } } }

t.test('one line per request with requestId, method, path without query, status, durationMs', async (t) => {
  const { app, text, lines } = await capturing(t, { options: { logging: { slowThreshold: 60000 } } })
  const responses = [
    await app.inject({ method: 'GET', url: '/health?probe=1' }),
    await app.inject({ method: 'POST', url: '/map?debug=true', payload: { mapping: 'echo', input: { a: 1 } } }),
    await app.inject({ method: 'GET', url: '/nope?x=y' }),
    await app.inject({ method: 'OPTIONS', url: '/map' }),
    await app.inject({ method: 'POST', url: '/map', payload: '{bad' }),
  ]
  const logged = requestLines(lines())
  t.equal(logged.length, responses.length, 'one line each')
  const expected = [
    ['GET', '/health', 200],
    ['POST', '/map', 200],
    ['GET', '/nope', 404],
    ['OPTIONS', '/map', 204],
    ['POST', '/map', 400],
  ] as const
  logged.forEach((line, i) => {
    const [method, path, status] = expected[i]!
    t.match(line, { requestId: responses[i]!.headers['x-request-id'], method, path, status, level: 30, msg: 'request completed' }, `${method} ${path}`)
    t.equal(typeof line.durationMs, 'number')
  })
  for (const line of text().split('\n').filter((l) => l.includes('"status"'))) {
    t.equal(line.match(/"requestId"/g)?.length, 1, 'the requestId key appears once per line')
  }
  t.notOk(text().includes('probe=1') || text().includes('debug=true'), 'no query string is logged')
})

t.test('5xx at error level with the real error, while the client sees the hidden message', async (t) => {
  const { app, lines } = await capturing(t, { mappings: [boom], extensions: explode, options: { health: { mapping: 'nope' } } })
  const response = await call(app, { method: 'POST', url: '/map', payload: { mapping: 'boom', input: { a: 1 } } })
  t.equal(response.data.message, 'An unexpected error occurred')
  const canary = await call(app, { method: 'GET', url: '/health/mapping' })
  t.equal(canary.statusCode, 503)
  const [failed, unavailable] = requestLines(lines())
  t.match(failed, { level: 50, status: 500, method: 'POST', path: '/map', requestId: response.data.requestId })
  t.match(failed?.err, { type: 'Error', message: 'kaboom: the real cause' })
  t.match(failed?.err.stack, /kaboom: the real cause/)
  t.match(unavailable, { level: 50, status: 503, path: '/health/mapping' })
  t.match(unavailable?.err, { message: 'Health canary "nope" is not a registered mapping' })
})

t.test('slow requests at warn with message "slow request"; 4xx below the threshold at info', async (t) => {
  const wait = async (_options: unknown, value: unknown): Promise<unknown> => {
    await new Promise((resolve) => setTimeout(resolve, 5))
    return value
  }
  const slow = { $id: 'slow', mapping: { '/v': { constant: 1, wait: {} } } }
  const { app, lines } = await capturing(t, { mappings: [slow], extensions: { plugins: { wait } }, options: { logging: { slowThreshold: 0 } } })
  await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'slow' } })
  t.match(requestLines(lines()), [{ level: 40, msg: 'slow request', status: 200, path: '/map' }])

  const relaxed = await capturing(t, { options: { logging: { slowThreshold: 60000 } } })
  await relaxed.app.inject({ method: 'GET', url: '/nope' })
  await relaxed.app.inject({ method: 'POST', url: '/map', payload: { mapping: 'nope' } })
  t.match(requestLines(relaxed.lines()), [
    { level: 30, status: 404, msg: 'request completed' },
    { level: 30, status: 404, msg: 'request completed' },
  ])
})

t.test('a logger at level error writes only the 5xx lines', async (t) => {
  const { app, lines } = await capturing(t, { mappings: [boom], extensions: explode }, 'error')
  await app.inject({ method: 'GET', url: '/health' })
  await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'boom', input: { a: 1 } } })
  t.match(requestLines(lines()), [{ level: 50, status: 500 }])
})

t.test('the Authorization token never appears in the log output, at any level', async (t) => {
  const observe = async (_options: unknown, value: unknown): Promise<unknown> => value
  const observed = { $id: 'observed', mapping: { '/v': { constant: 1, observe: {} } } }
  const { app, text, lines } = await capturing(
    t,
    {
      mappings: [ECHO, boom, observed],
      extensions: { ...explode, plugins: { observe } },
      options: { auth: { secret: SECRET }, errorDetail: 'full', logging: { slowThreshold: 0 } },
    },
    'trace'
  )
  const good = bearer({ sub: 'alice', role: 'admin' })
  const forged = bearer({ sub: 'mallory' }, { key: 'not-the-secret-but-long-enough-0123456789' })
  const requests = [
    { method: 'GET', url: '/mappings', headers: good },
    { method: 'POST', url: '/map', payload: { mapping: 'echo', input: { a: 1 } }, headers: good },
    { method: 'POST', url: '/map', payload: { mapping: 'boom', input: { a: 1 } }, headers: good },
    { method: 'POST', url: '/map', payload: { mapping: 'observed' }, headers: good },
    { method: 'POST', url: '/map', payload: { mapping: 'echo' }, headers: forged },
    { method: 'GET', url: '/nope', headers: forged },
    { method: 'POST', url: '/map', payload: '{bad', headers: good },
    { method: 'GET', url: '/health', headers: good },
    { method: 'OPTIONS', url: '/map', headers: good },
  ] as const
  for (const request of requests) await app.inject(request)
  t.equal(requestLines(lines()).length, requests.length)
  const output = text()
  for (const header of [good, forged]) {
    const jwt = header.authorization.slice('Bearer '.length)
    t.notOk(output.includes(jwt), 'the token')
    t.notOk(output.includes(jwt.split('.')[2]!), 'its signature')
    t.notOk(output.includes(jwt.split('.')[1]!), 'its payload segment')
  }
  t.notOk(output.includes(SECRET), 'the secret')
  t.notOk(/bearer /i.test(output), 'no Authorization value at all')
})
