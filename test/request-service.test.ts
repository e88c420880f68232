// The request plugin end to end through the service (request-plugin.md §5, http.md §3–§4): a
// refused redirect is 422 RedirectRefused with the raw Location; a connection failure is a 500 with
// its detail hidden (and logged); a redirecting canary is 503; an EXTENSIONS module that follows
// resolves a trailing-slash 301. Real upstreams on 127.0.0.1, the service through buildServer; the
// stock surface refuses private destinations, so it is built as a deployment with
// REQUEST_ALLOW_HOSTS=127.0.0.1 gets it (the refusal itself: request-hardening.test.ts). Load
// shedding is off: a loaded machine's event-loop delay must not answer 503 for what these tests are
// about.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { capturedLog } from './log-support.js'
import type { MappingDocument } from '../engine/index.js'
import { stockExtensions } from '../extensions/stock.js'
import { buildServer, configFromEnvironment } from '../server.js'
import { loadExtensions } from '../sources/extensions.js'
import { upstream } from './request-support.js'
import { freePort, tempTree } from './startup-support.js'

/** `/article` answers 301 to `/article/` (relative, as servers do); `/article/` answers JSON. */
function articleSite(req: IncomingMessage, res: ServerResponse): void {
  if (req.url === '/article') {
    res.writeHead(301, { location: '/article/', 'content-type': 'text/html' })
    res.end('<a href="/article/">moved</a>')
    return
  }
  if (req.url === '/article/') {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ title: 'Trailing slashes', words: 1200 }))
    return
  }
  res.writeHead(404, { 'content-type': 'application/json' })
  res.end('{"error":"not found"}')
}

/** A mapping that fetches `origin + pathname` with the `request` plugin and keeps the JSON body. */
const fetching = (id: string, origin: string, pathname: string): MappingDocument =>
  ({ $id: id, mapping: { '/article': { request: { origin, pathname, pointer: '/json' } } } }) as MappingDocument

async function serve(t: { teardown(fn: () => unknown): void }, config: NonNullable<Parameters<typeof buildServer>[0]>): Promise<FastifyInstance> {
  const stock = stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' })
  const app = await buildServer({ extensions: stock, ...config, options: { logging: { level: 'silent' }, underPressure: false, ...config.options } })
  t.teardown(() => app.close())
  return app
}

t.test('stock request plugin: an upstream 301 is 422 RedirectRefused with the raw Location', async (t) => {
  const up = await upstream(t, articleSite)
  const app = await serve(t, { mappings: [fetching('article', up.origin, '/article')] })
  const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'article', input: {} } })
  t.equal(response.statusCode, 422)
  const body = response.json() as Record<string, string>
  t.strictSame(Object.keys(body), ['code', 'message', 'location', 'requestId'], 'key order: code, message, location, requestId')
  t.equal(body.code, 'RedirectRefused')
  t.equal(body.location, '/article/', 'the raw Location header, not resolved')
  t.match(body.message, 'Redirect refused')
  t.equal(body.message, `Redirect refused: ${up.origin}/article responded 301 to /article/`)
  t.equal(body.requestId, response.headers['x-request-id'])
  t.strictSame(up.hits, ['GET /article'], 'the redirect was not followed')
})

t.test('stock request plugin: the explicit form refuses the same way', async (t) => {
  const up = await upstream(t, articleSite)
  const app = await serve(t, { options: { logging: { level: 'silent' }, map: { explicit: true } } })
  const { $id: _id, ...document } = fetching('inline', up.origin, '/article')
  const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: document } })
  t.equal(response.statusCode, 422)
  t.match(response.json(), { code: 'RedirectRefused', location: '/article/', message: /Redirect refused/ })
})

t.test('stock request plugin: an absolute Location is reported as sent, its query values redacted', async (t) => {
  const up = await upstream(t, (req, res) => {
    res.writeHead(302, { location: 'https://elsewhere.example.test/a?b=c' })
    res.end()
  })
  const app = await serve(t, { mappings: [fetching('away', up.origin, '/go')] })
  const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'away' } })
  t.equal(response.statusCode, 422)
  t.match(response.json(), { code: 'RedirectRefused', location: 'https://elsewhere.example.test/a?b=REDACTED' })
})

t.test('stock request plugin: connection refused is 500 with the detail hidden, and logged', async (t) => {
  const closed = await freePort()
  const log = capturedLog()
  const app = await serve(t, { mappings: [fetching('down', `http://127.0.0.1:${closed}`, '/article')], logger: log.logger })
  const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'down', input: {} } })
  t.equal(response.statusCode, 500)
  const body = response.json() as Record<string, string>
  t.strictSame(Object.keys(body), ['code', 'message', 'requestId'])
  t.equal(body.code, 'InternalError')
  t.equal(body.message, 'An unexpected error occurred')
  t.notMatch(response.body, /127\.0\.0\.1|ECONNREFUSED|refused/i, 'no upstream detail reaches the client')
  const line = log.lines().find((entry) => entry.requestId === body.requestId && entry.status === 500)
  t.ok(line, 'the request line is logged')
  t.equal(line?.level, 50, 'at level error')
  t.match(JSON.stringify(line), /ECONNREFUSED/, 'with the real error')
})

t.test('stock request plugin: errorDetail full shows the real message of a connection failure', async (t) => {
  const closed = await freePort()
  const app = await serve(t, { mappings: [fetching('down', `http://127.0.0.1:${closed}`, '/article')], options: { logging: { level: 'silent' }, errorDetail: 'full' } })
  const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'down' } })
  t.equal(response.statusCode, 500)
  t.not((response.json() as { message: string }).message, 'An unexpected error occurred')
})

t.test('a canary that redirects is 503, never 422', async (t) => {
  const up = await upstream(t, articleSite)
  const app = await serve(t, { mappings: [fetching('canary', up.origin, '/article')], options: { logging: { level: 'silent' }, health: { mapping: 'canary' } } })
  const response = await app.inject({ method: 'GET', url: '/health/mapping' })
  t.equal(response.statusCode, 503)
  t.strictSame(Object.keys(response.json() as object), ['code', 'message', 'requestId'], 'no location: not a RedirectRefused body')
  t.match(response.json(), { code: 'Unavailable', message: 'An unexpected error occurred' }, '5xx detail hidden by default')
  t.strictSame(up.hits, ['GET /article'])
  const liveness = await app.inject({ method: 'GET', url: '/health' })
  t.equal(liveness.statusCode, 200, 'liveness does not touch the engine')

  const full = await serve(t, { mappings: [fetching('canary', up.origin, '/article')], options: { logging: { level: 'silent' }, errorDetail: 'full', health: { mapping: 'canary' } } })
  const detailed = await full.inject({ method: 'GET', url: '/health/mapping' })
  t.equal(detailed.statusCode, 503)
  t.match(detailed.json(), { code: 'Unavailable', message: 'Mapping-path health check failed' }, 'with errorDetail full')
})

t.test('a canary that fetches without redirect is 200', async (t) => {
  const up = await upstream(t, articleSite)
  const app = await serve(t, { mappings: [fetching('canary', up.origin, '/article/')], options: { logging: { level: 'silent' }, health: { mapping: 'canary' } } })
  const response = await app.inject({ method: 'GET', url: '/health/mapping' })
  t.equal(response.statusCode, 200)
  t.match(response.json(), { status: 'ok', mapping: 'canary' })
})

const FOLLOWING_EXTENSIONS = `import { createRequest } from '${new URL('../extensions/request/index.ts', import.meta.url).href}'

export default {
  plugins: { request: createRequest({ allowHeaders: [], redirect: 'follow' }) },
}
`

t.test('an EXTENSIONS module that follows redirects resolves a trailing-slash 301', async (t) => {
  const up = await upstream(t, articleSite)
  const tree = tempTree(t, { 'package.json': '{ "type": "module" }', 'extensions.ts': FOLLOWING_EXTENSIONS })
  const extensions = await loadExtensions(tree.path('extensions.ts'))
  const app = await serve(t, { mappings: [fetching('article', up.origin, '/article')], extensions })
  const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'article', input: {} } })
  t.equal(response.statusCode, 200)
  t.strictSame(response.json(), { article: { title: 'Trailing slashes', words: 1200 }, valid: true, errors: [] })
  t.strictSame(up.hits, ['GET /article', 'GET /article/'], 'one hop, same origin')
  t.strictSame((await app.inject({ method: 'GET', url: '/extensions' })).json(), { initializers: [], transformers: [], plugins: ['request'] })
})

t.test('the same module through the environment (EXTENSIONS and MAPPINGS)', async (t) => {
  const up = await upstream(t, articleSite)
  const tree = tempTree(t, {
    'package.json': '{ "type": "module" }',
    'extensions.ts': FOLLOWING_EXTENSIONS,
    'mappings/article.json': JSON.stringify(fetching('article', up.origin, '/article')),
  })
  const { port: _port, ...build } = await configFromEnvironment(
    { OPTIONS: '{"logging":{"level":"silent"}}', MAPPINGS: tree.path('mappings'), EXTENSIONS: tree.path('extensions.ts') },
    () => {}
  )
  const app = await serve(t, build)
  const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'article' } })
  t.equal(response.statusCode, 200)
  t.match(response.json(), { article: { title: 'Trailing slashes' }, valid: true })
})
