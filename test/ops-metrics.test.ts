// GET /metrics (options.metrics): the Prometheus text of a listening server, parsed, and each series
// moved by exactly what the requests before the scrape did — registered and explicit evaluations,
// valid: false, refused documents by rule id, a budget trip, a cache hit, request-plugin calls with
// their upstream status (a real upstream on 127.0.0.1), reloads published on their channel — with
// the label sets bounded however many documents and paths callers send.
//
// A build costs a few hundred milliseconds and a worker pool (explicit documents) a second more, so
// the tests of registered mappings share one server, and those of explicit documents (the budget
// trip among them) and of registered mappings run isolated another (one pool), each in a group
// that closes it; a test on a shared server measures what its own requests moved (the series after
// them less the series before). Load shedding is off: a loaded machine's event-loop delay must not
// answer 503 for what these tests are about.
import { channel, hasSubscribers } from 'node:diagnostics_channel'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { stockExtensions } from '../extensions/stock.js'
import { Reloader } from '../service/reloader.js'
import { buildServer } from '../server.js'
import { ECHO, SECRET, STRICT, bearer, originOf, refusingOrigin, serve, upstream } from './http-support.js'
import { untyped } from './startup-support.js'

interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** The samples of a Prometheus text exposition (comments and blank lines skipped). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, name, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[name!] = value!.replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c))
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) })
  }
  return samples
}

/** A listening server and what its /metrics says now. */
interface Scraped {
  readonly app: FastifyInstance
  readonly origin: string
  /** The value of one series (0 when it does not exist yet). */
  value(name: string, labels?: Record<string, string>): Promise<number>
  samples(): Promise<Sample[]>
  /** From now on: how much a series moved since this call. */
  since(): Promise<(name: string, labels?: Record<string, string>) => Promise<number>>
  post(body: unknown): Promise<{ status: number; text: string }>
}

/** The sum of the samples of `name` that carry `labels`. */
const total = (samples: readonly Sample[], name: string, labels: Record<string, string>): number =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0)

async function listening(t: Parameters<typeof serve>[0], build: Parameters<typeof serve>[1] = {}): Promise<Scraped> {
  const app = await serve(t, { ...build, options: { underPressure: false, ...build.options } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = originOf(app)
  const samples = async (): Promise<Sample[]> => {
    const response = await fetch(`${origin}/metrics`)
    if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`)
    return parseExposition(await response.text())
  }
  return {
    app,
    origin,
    samples,
    async value(name, labels = {}) {
      return total(await samples(), name, labels)
    },
    async since() {
      const before = await samples()
      return async (name, labels = {}) => total(await samples(), name, labels) - total(before, name, labels)
    },
    async post(body) {
      const response = await fetch(`${origin}/map`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      return { status: response.status, text: await response.text() }
    },
  }
}

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const EXPLICIT = { map: { explicit: true } }

t.test('registered mappings, on one server', async (t) => {
  // No explicit form and no reloader: its cache and reload series stay at zero whatever the tests do.
  const shared = await listening(t, { mappings: [ECHO, STRICT] })

  t.test('GET /metrics is Prometheus text, public, with process metrics and zeroed cache and reload series', async (t) => {
    const server = shared
    const response = await fetch(`${server.origin}/metrics`)
    t.equal(response.status, 200)
    t.match(response.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
    const samples = parseExposition(await response.text())
    t.ok(samples.some((s) => s.name === 'process_cpu_user_seconds_total'), 'the default process metrics')
    t.ok(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds'), 'the default Node.js metrics')
    for (const result of ['hit', 'miss']) t.equal(await server.value('mapper_explicit_cache_lookups_total', { result }), 0)
    for (const result of ['ok', 'failed']) t.equal(await server.value('mapper_reloads_total', { result }), 0)
  })

  t.test('a registered evaluation: its request, its evaluation, its duration and its printed bytes', async (t) => {
    const server = shared
    const moved = await server.since()
    const answer = await server.post({ mapping: 'echo', input: { hello: 'wörld' } })
    t.equal(answer.status, 200)
    t.equal(await moved('http_requests_total', { method: 'POST', route: '/map', status: '200' }), 1)
    t.equal(await moved('http_request_duration_seconds_count', { method: 'POST', route: '/map', status: '200' }), 1)
    t.equal(await moved('mapper_evaluations_total', { mapping: 'echo', result: 'valid' }), 1)
    t.equal(await moved('mapper_evaluation_duration_seconds_count', { mapping: 'echo' }), 1)
    t.equal(await moved('mapper_output_bytes_sum', { mapping: 'echo' }), Buffer.byteLength(answer.text), 'the bytes of the envelope sent')
    t.equal(await moved('mapper_envelope_errors_total'), 0)
    // The scrapes themselves are requests too, on their one route.
    t.ok((await server.value('http_requests_total', { method: 'GET', route: '/metrics', status: '200' })) >= 1)
  })

  t.test('valid: false is counted as invalid, with its error objects', async (t) => {
    const server = shared
    const moved = await server.since()
    t.equal((await server.post({ mapping: 'strict', input: { name: 42 } })).status, 200)
    t.equal((await server.post({ mapping: 'strict', input: { name: 'ok' } })).status, 200)
    t.equal(await moved('mapper_evaluations_total', { mapping: 'strict', result: 'invalid' }), 1)
    t.equal(await moved('mapper_evaluations_total', { mapping: 'strict', result: 'valid' }), 1)
    t.equal(await moved('mapper_envelope_errors_total', { mapping: 'strict' }), 1)
  })

  t.test('two instances in one process keep their own series', async (t) => {
    const one = shared
    const two = await listening(t)
    const moved = await one.since()
    t.equal((await one.post({ mapping: 'echo', input: 1 })).status, 200)
    t.equal((await one.post({ mapping: 'echo', input: 2 })).status, 200)
    t.equal((await two.post({ mapping: 'echo', input: 3 })).status, 200)
    t.equal(await moved('mapper_evaluations_total', { mapping: 'echo' }), 2)
    t.equal(await two.value('mapper_evaluations_total', { mapping: 'echo' }), 1)
  })

  t.test('/metrics is left out of the OpenAPI document', async (t) => {
    const document = JSON.parse((await shared.app.inject({ method: 'GET', url: '/openapi.json' })).body) as { paths: Record<string, unknown> }
    t.ok(document.paths['/map'])
    t.notOk(document.paths['/metrics'])
  })

  t.test('labels stay bounded: an id that is not served is counted under one value, however many a caller makes up (inline)', async (t) => {
    await madeUpIds(t, shared, 'inline')
  })
})

t.test('with map.invalidStatus, valid: false is still an invalid evaluation (answered 4xx)', async (t) => {
  const server = await listening(t, { mappings: [ECHO, STRICT], options: { map: { invalidStatus: 422 } } })
  t.equal((await server.post({ mapping: 'strict', input: { name: 42 } })).status, 422)
  t.equal(await server.value('mapper_evaluations_total', { mapping: 'strict', result: 'invalid' }), 1)
  t.equal(await server.value('http_requests_total', { route: '/map', status: '422' }), 1)
})

t.test('explicit documents, and registered mappings run isolated, on one server (and its worker pool)', async (t) => {
  // With a fanOut budget for the budget trip, and isolation.registered for the made-up ids sent to
  // registered routes (last: until then the server sees explicit documents only): one worker pool
  // for every isolated test.
  const explicit = await listening(t, { options: { ...EXPLICIT, limits: { explicit: { fanOut: 10 } }, isolation: { registered: true } } })

  t.test('an invalid explicit document: its validation errors by rule id, and no evaluation', async (t) => {
    const server = explicit
    const moved = await server.since()
    const unknownTransformer = { mapping: { '/slug': { source: '/title', transform: 'slugify' } } }
    t.equal((await server.post({ mapping: unknownTransformer, input: {} })).status, 422)
    t.equal((await server.post({ mapping: { mapping: 42 }, input: {} })).status, 422)
    t.equal((await server.post({ mapping: { mapping: 42 }, input: {} })).status, 422)
    t.equal(await moved('mapper_document_errors_total', { rule: 'KW-transform-1' }), 1)
    t.equal(await moved('mapper_document_errors_total', { rule: 'KW-mapping-1' }), 2)
    t.equal(await moved('mapper_evaluations_total'), 0, 'a refused document is never evaluated')
    t.equal(await moved('http_requests_total', { route: '/map', status: '422' }), 3)
  })

  t.test('the same explicit document again is a cache hit', async (t) => {
    const server = explicit
    const moved = await server.since()
    const document = { mapping: { '/copy': '/value' } }
    for (let i = 0; i < 3; i++) t.equal((await server.post({ mapping: document, input: { value: i } })).status, 200)
    t.equal((await server.post({ mapping: { mapping: { '/other': '/value' } }, input: { value: 1 } })).status, 200)
    t.equal(await moved('mapper_explicit_cache_lookups_total', { result: 'miss' }), 2)
    t.equal(await moved('mapper_explicit_cache_lookups_total', { result: 'hit' }), 2)
    t.equal(await moved('mapper_evaluations_total', { mapping: '(explicit)', result: 'valid' }), 4)
  })

  t.test('the cache is keyed by the document as sent: the same text is a hit whatever the input, other spacing a miss with the same answer', async (t) => {
    for (const isolation of [undefined, false]) {
    // Isolated: the group's server (none of its other tests sends these texts); inline: one of its own.
      const server = isolation === false ? await listening(t, { options: { ...EXPLICIT, isolation } }) : explicit
      const moved = await server.since()
      const send = async (body: string): Promise<unknown> => {
        const response = await fetch(`${server.origin}/map`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        t.equal(response.status, 200, body)
        return response.json()
      }
      const where = isolation === false ? 'inline' : 'isolated'
      t.same(await send('{"mapping":{"mapping":{"/x":{"source":"/v","as":"string"}}},"input":{"v":1}}'), { x: '1', valid: true, errors: [] }, where)
      t.same(await send('{"input":{"v":2},"mapping":{"mapping":{"/x":{"source":"/v","as":"string"}}}}'), { x: '2', valid: true, errors: [] }, `${where}: the same text after the input`)
      t.same(await send('{"input":{"v":3},"\\u006dapping":{"mapping":{"/x":{"source":"/v","as":"string"}}}}'), { x: '3', valid: true, errors: [] }, `${where}: its name escaped`)
      t.same(await send('{ "mapping" : { "mapping": { "/x": { "source": "/v", "as": "string" } } }, "input": {"v": 4} }'), { x: '4', valid: true, errors: [] }, `${where}: spaced`)
      t.equal(await moved('mapper_explicit_cache_lookups_total', { result: 'hit' }), 2, `${where}: the same text twice more`)
      t.equal(await moved('mapper_explicit_cache_lookups_total', { result: 'miss' }), 2, `${where}: the first text, then the spaced one`)
      // Documents JSON.stringify would print alike are sent as different texts.
      t.same(await send('{"mapping":{"mapping":{"/x":{"constant":1e400,"as":"string"}}}}'), { x: 'Infinity', valid: true, errors: [] })
      t.same(await send('{"mapping":{"mapping":{"/x":{"constant":null,"as":"string"}}}}'), { x: 'null', valid: true, errors: [] })
      t.same(await send('{"mapping":{"mapping":{"/x":{"constant":-0,"as":"json"}}},"mapping":{"mapping":{"/x":{"constant":2}}}}'), { x: 2, valid: true, errors: [] }, `${where}: the last of a repeated member, as JSON.parse reads it`)
    }
  })

  t.test('labels stay bounded: explicit documents share one mapping value, unknown paths one route value', async (t) => {
  // The group's server has seen explicit documents only, on /map, and scrapes: the label sets below
  // are every value it ever used.
    const server = explicit
    const moved = await server.since()
    for (let i = 0; i < 25; i++) t.equal((await server.post({ mapping: { mapping: { [`/k${i}`]: '/v' } }, input: { v: i } })).status, 200)
    for (let i = 0; i < 25; i++) t.equal((await fetch(`${server.origin}/nowhere/${i}?q=${i}`)).status, 404)
    // A scrape is counted once it is answered: the second one sees the first.
    await server.samples()
    const samples = await server.samples()
    const mappings = new Set(samples.filter((s) => s.labels.mapping !== undefined).map((s) => s.labels.mapping))
    t.same([...mappings], ['(explicit)'], '25 documents, one mapping label value')
    t.equal(await moved('mapper_evaluations_total', { mapping: '(explicit)' }), 25)
    const routes = new Set(samples.filter((s) => s.name === 'http_requests_total').map((s) => s.labels.route))
    t.same([...routes].sort(), ['(unmatched)', '/map', '/metrics'].sort(), 'route patterns only, never a raw URL')
    t.equal(await moved('http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' }), 25)
  })

  t.test('a budget trip: a failed evaluation, its code and its budget', async (t) => {
    // The group's server has limits.explicit.fanOut 10; none of its other tests fans out.
    const server = explicit
    const moved = await server.since()
    // Its static bound (one `each`) is within the budget; its input is not.
    const fanning = { mapping: { '/all': { input: '/list', each: { '/v': '/' } } } }
    const answer = await server.post({ mapping: fanning, input: { list: Array.from({ length: 50 }, (_, i) => i) } })
    t.equal(answer.status, 422)
    t.equal(JSON.parse(answer.text).code, 'BudgetExceeded')
    t.equal(await moved('mapper_budget_exceeded_total', { mapping: '(explicit)', budget: 'fanOut' }), 1)
    t.equal(await moved('mapper_evaluation_failures_total', { mapping: '(explicit)', code: 'BudgetExceeded' }), 1)
    t.equal(await moved('mapper_evaluations_total', { mapping: '(explicit)', result: 'failed' }), 1)
  })

  t.test('labels stay bounded: an id that is not served is counted under one value, however many a caller makes up (isolated)', async (t) => {
    await madeUpIds(t, explicit, 'isolated')
  })
})

t.test('request-plugin calls per mapping, with the status each upstream answered', async (t) => {
  const up = await upstream(t, (req, res) => {
    const status = req.url === '/missing' ? 404 : 200
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ path: req.url }))
  })
  const down = await refusingOrigin()
  const fetching = (id: string, origin: string, pathname: string) => ({ $id: id, mapping: { '/got': { request: { origin, pathname, pointer: '/json' } } } })
  const server = await listening(t, {
    mappings: [ECHO, fetching('found', up.origin, '/here'), fetching('lost', up.origin, '/missing'), fetching('down', down, '/')],
    extensions: stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' }),
  })
  t.equal((await server.post({ mapping: 'found', input: {} })).status, 200)
  t.equal((await server.post({ mapping: 'found', input: {} })).status, 200)
  t.equal((await server.post({ mapping: 'lost', input: {} })).status, 200, 'a 404 upstream is data')
  t.equal((await server.post({ mapping: 'down', input: {} })).status, 500)
  t.equal((await server.post({ mapping: 'echo', input: {} })).status, 200)
  t.same(up.hits, ['GET /here', 'GET /here', 'GET /missing'])
  t.equal(await server.value('mapper_plugin_calls_total', { mapping: 'found', plugin: 'request' }), 2)
  t.equal(await server.value('mapper_plugin_calls_total', { mapping: 'lost', plugin: 'request' }), 1)
  t.equal(await server.value('mapper_plugin_calls_total', { mapping: 'down', plugin: 'request' }), 1)
  t.equal(await server.value('mapper_plugin_calls_total', { mapping: 'echo' }), 0)
  t.equal(await server.value('mapper_upstream_responses_total', { mapping: 'found', status: '200' }), 2)
  t.equal(await server.value('mapper_upstream_responses_total', { mapping: 'lost', status: '404' }), 1)
  t.equal(await server.value('mapper_upstream_responses_total', { mapping: 'down', status: 'error' }), 1)
  t.equal(await server.value('mapper_evaluation_failures_total', { mapping: 'down', code: 'InternalError' }), 1)
})

/** Made-up ids on both routes of `server`: no series added, none of them a label value, each counted under (unknown). */
async function madeUpIds(t: Tap, server: Scraped, where: string): Promise<void> {
  const moved = await server.since()
  const instance = async (): Promise<Sample[]> => (await server.samples()).filter((s) => s.name.startsWith('mapper_') || s.name.startsWith('http_'))
  const post = (url: string, body: unknown): Promise<Response> => fetch(`${server.origin}${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  // The first made-up id (on each route) adds the series every later one shares; two scrapes count the scrape itself.
  t.equal((await server.post({ mapping: 'made-up-0', input: {} })).status, 404)
  t.equal((await post('/map/made-up-0', { input: {} })).status, 404)
  await instance()
  const before = await instance()
  const ids = Array.from({ length: 5 }, (_, i) => `made-up-${i + 1}-${'x'.repeat(i * 15)}`)
  for (const id of ids) {
    t.equal((await server.post({ mapping: id, input: {} })).status, 404, `${where}: POST /map`)
    t.equal((await post(`/map/${encodeURIComponent(id)}`, { input: {} })).status, 404, `${where}: POST /map/{id}`)
  }
  const after = await instance()
  t.equal(after.length, before.length, `${where}: five made-up ids on two routes add no series`)
  const labels = new Set(after.flatMap((s) => Object.values(s.labels)))
  t.notOk(ids.some((id) => labels.has(id)) || labels.has('made-up-0'), `${where}: no made-up id is a label value`)
  t.equal(await moved('mapper_evaluation_failures_total', { mapping: '(unknown)', code: 'NotFound' }), 12, `${where}: counted under (unknown)`)
  t.equal((await server.post({ mapping: 'echo', input: {} })).status, 200)
  t.equal(await moved('mapper_evaluations_total', { mapping: 'echo', result: 'valid' }), 1, `${where}: a served id keeps its own label`)
}

t.test("reload attempts are counted by the instance they reload, never another's; off-contract upstream messages are ignored", async (t) => {
  const reloader = new Reloader()
  const server = await listening(t, { reloader })
  const other = await listening(t)
  // Another service's reloads in this process pass on the same channel: they are not this one's.
  channel('mapper-service:reload').publish({ ok: true, mappings: 1 })
  t.strictSame(await reloader.reload(() => [ECHO, STRICT]), { ok: true, mappings: 2 })
  t.strictSame(await reloader.reload(() => [ECHO]), { ok: true, mappings: 1 })
  t.equal((await reloader.reload(() => [{ $id: 'broken', mapping: { '/x': { source: 'not-a-pointer' } } }])).ok, false)
  t.equal(await server.value('mapper_reloads_total', { result: 'ok' }), 2)
  t.equal(await server.value('mapper_reloads_total', { result: 'failed' }), 1)
  t.equal(await other.value('mapper_reloads_total'), 0, 'the other instance counted none of them')
  for (const junk of [null, 42, { context: null, status: 200 }, { context: { evaluation: { mapping: 'forged' } }, status: 200 }]) {
    channel('mapper-service:request:upstream').publish(junk)
  }
  t.equal(await server.value('mapper_upstream_responses_total'), 0)
  await server.app.close()
  await other.app.close()
  t.notOk(hasSubscribers('mapper-service:request:upstream'), 'unsubscribed on close')
})

t.test('options.metrics: false, another path, claims', async (t) => {
  const off = await serve(t, { options: { metrics: false, underPressure: false } })
  t.equal((await off.inject({ method: 'GET', url: '/metrics' })).statusCode, 404)
  t.equal((await off.inject({ method: 'POST', url: '/map', payload: { mapping: 'echo', input: 1 } })).statusCode, 200, 'the service works without metrics')

  const moved = await serve(t, { options: { metrics: { path: '/ops/metrics' }, underPressure: false } })
  t.equal((await moved.inject({ method: 'GET', url: '/ops/metrics' })).statusCode, 200)
  t.equal((await moved.inject({ method: 'GET', url: '/metrics' })).statusCode, 404)

  const gated = await serve(t, { options: { auth: { secret: SECRET }, metrics: { claims: { scope: 'ops' } }, underPressure: false } })
  t.equal((await gated.inject({ method: 'GET', url: '/metrics' })).statusCode, 401)
  t.equal((await gated.inject({ method: 'GET', url: '/metrics', headers: bearer({ scope: 'read' }) })).statusCode, 403)
  const allowed = await gated.inject({ method: 'GET', url: '/metrics', headers: bearer({ scope: 'ops' }) })
  t.equal(allowed.statusCode, 200)
  t.match(allowed.body, /mapper_evaluations_total/)

  const open = await serve(t, { options: { auth: { secret: SECRET }, underPressure: false } })
  t.equal((await open.inject({ method: 'GET', url: '/metrics' })).statusCode, 200, 'public by default, like /health, even with auth on')
})

t.test('options.metrics mistakes fail the build', async (t) => {
  await t.rejects(buildServer({ options: { metrics: { path: '/health' } } }), { name: 'ConfigError', message: 'options.metrics.path: /health is already a route of this service' })
  await t.rejects(buildServer({ options: { metrics: { claims: { scope: 'ops' } } } }), { name: 'ConfigError', message: /options\.metrics\.claims needs options\.auth/ })
  await t.rejects(buildServer({ options: { metrics: { path: 'metrics' } } }), { name: 'ConfigError', message: /^options\.metrics/ })
  await t.rejects(buildServer({ options: untyped({ metrics: { every: 5 } }) }), { name: 'ConfigError', message: /^options\.metrics/ })
})
