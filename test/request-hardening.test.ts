// Hostile destinations and bodies (request-plugin.md, docs/request-plugin.md "Hardening"): the
// stock surface refuses private and special-purpose destinations however they are spelt, with
// REQUEST_ALLOW_HOSTS / `allowHosts` as the named exceptions; every upstream request carries the
// hop header and the service refuses requests that carry it, so a mapping calling its own service
// goes one level deep; JSON and XML bodies nested deeper than MAX_RESPONSE_DEPTH are refused
// before parsing, HTML ones while parsing; the scraper's patterns run under patternInput. Real
// upstreams on 127.0.0.1 only.
import { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { load } from 'cheerio'
import type { AnyNode } from 'domhandler'
import Fastify, { type FastifyInstance } from 'fastify'
import fc from 'fast-check'
import t from 'tap'
import mapperService from '../app.js'
import { Mapper, type MappingDocument, type Plugin } from '../engine/index.js'
import { stockExtensions } from '../extensions/stock.js'
import { errorsPlugin } from '../http/plugins/errors.js'
import { hopPlugin, LOOP_REFUSED } from '../http/plugins/hop.js'
import { requestIdPlugin } from '../http/plugins/request-id.js'
import { createRequest, HOP_HEADER, MAX_RESPONSE_DEPTH, ResponseTooDeepError } from '../extensions/request/index.js'
import { jsonNestsDeeper } from '../engine/index.js'
import { xmlNestsDeeper } from '../extensions/request/depth.js'
import { loadHtml } from '../extensions/request/html.js'
import { buildServer } from '../server.js'
import { listening, watchingHealth } from './attack-support.js'
import { upstream, type Upstream } from './request-support.js'

const ok = (_req: IncomingMessage, res: ServerResponse): void => {
  res.setHeader('content-type', 'application/json')
  res.end('{"ok":true}')
}

/** The stock `request` plugin as a deployment with this environment gets it. */
const stockRequest = (env: NodeJS.ProcessEnv = {}): Plugin => stockExtensions(env).plugins!.request!

/** Fetch `url` (taken from the input) with `plugin` and return the whole envelope. */
async function fetchWith(plugin: Plugin, url: string): Promise<Record<string, unknown>> {
  const mapper = new Mapper({}, { plugins: { request: plugin } })
  const result = await mapper.map({ mapping: { '/r': { request: { url: { input: '/url' } } } } }, { url })
  return result.r as Record<string, unknown>
}

t.test('SSRF: the stock surface refuses every spelling of a private destination before connecting', async (t) => {
  const up = await upstream(t, ok)
  const { port } = new URL(up.origin)
  const plugin = stockRequest()
  const spellings = [
    '127.0.0.1',
    'localhost',
    '[::1]',
    '0.0.0.0',
    '127.1',
    '127.0.1',
    '2130706433',
    '0x7f.1',
    '0x7f000001',
    '0177.0.0.1',
    '[::]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[::ffff:0:7f00:1]',
    '[::127.0.0.1]',
    '[64:ff9b::7f00:1]',
    '[64:ff9b::127.0.0.1]',
    '[64:ff9b:1::7f00:1]',
    '[2002:7f00:1::]',
  ]
  for (const host of spellings) {
    await t.rejects(fetchWith(plugin, `http://${host}:${port}/x`), { name: 'PrivateNetworkRefusedError', code: 'E_PRIVATE_NETWORK' }, host)
  }
  t.strictSame(up.hits, [], 'no connection reached the upstream')
})

t.test('SSRF: numeric host spellings reach the check as the address they mean (WHATWG URL parsing)', async (t) => {
  for (const host of ['127.1', '127.0.1', '2130706433', '0x7f.1', '0x7f000001', '0177.0.0.1', '0x7F.0.0.1']) {
    t.equal(new URL(`http://${host}/`).hostname, '127.0.0.1', host)
  }
  t.equal(new URL('http://[::ffff:127.0.0.1]/').hostname, '[::ffff:7f00:1]')
  t.equal(new URL('http://[64:ff9b::127.0.0.1]/').hostname, '[64:ff9b::7f00:1]')
})

t.test('SSRF: the other special-purpose ranges, IPv4 and IPv6, are refused before any connection is tried', async (t) => {
  const plugin = stockRequest()
  for (const host of ['10.0.0.1', '172.16.0.1', '192.168.0.1', '169.254.169.254', '100.64.0.1', '192.0.0.8', '192.0.2.1', '198.18.0.1', '198.51.100.1', '203.0.113.1', '224.0.0.1', '240.0.0.1', '255.255.255.255', '[fe80::1]', '[fd00::1]', '[ff02::1]', '[100::1]', '[2001:db8::1]']) {
    await t.rejects(fetchWith(plugin, `http://${host}/`), { code: 'E_PRIVATE_NETWORK' }, host)
  }
})

t.test('allowHosts: exactly the named host goes through, every other private one is still refused', async (t) => {
  const up = await upstream(t, ok)
  const { port } = new URL(up.origin)
  const byAddress = stockRequest({ REQUEST_ALLOW_HOSTS: '127.0.0.1' })
  t.match(await fetchWith(byAddress, `${up.origin}/a`), { status: 200, json: { ok: true } })
  // 127.1 is 127.0.0.1 once parsed; the other spellings name other addresses or a host name.
  t.match(await fetchWith(byAddress, `http://127.1:${port}/b`), { status: 200 })
  for (const host of ['localhost', '[::ffff:127.0.0.1]', '127.0.0.2', '[::1]']) {
    await t.rejects(fetchWith(byAddress, `http://${host}:${port}/refused`), { code: 'E_PRIVATE_NETWORK' }, host)
  }
  t.strictSame(up.hits, ['GET /a', 'GET /b'])

  const byName = stockRequest({ REQUEST_ALLOW_HOSTS: ' upstream.internal.test , localhost ,' })
  t.match(await fetchWith(byName, `http://localhost:${port}/c`), { status: 200 }, 'a name is allowed whatever it resolves to')
  await t.rejects(fetchWith(byName, `${up.origin}/refused`), { code: 'E_PRIVATE_NETWORK' }, 'the address behind it is not')
  t.strictSame(up.hits, ['GET /a', 'GET /b', 'GET /c'])

  const library = createRequest({ denyPrivateNetworks: true, allowHosts: ['127.0.0.1'] })
  t.match(await fetchWith(library, `${up.origin}/d`), { status: 200 }, 'the same option for library users')
})

t.test('REQUEST_ALLOW_HOSTS: a wrong entry fails when the stock surface is built, naming the variable', async (t) => {
  t.throws(() => stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1,internal:8080' }), {
    name: 'ConfigError',
    message: 'REQUEST_ALLOW_HOSTS: allowHosts entry "internal:8080" is not a host name or IP address (no scheme, port, path or credentials)',
  })
  t.throws(() => stockExtensions({ REQUEST_ALLOW_HOSTS: 'http://internal' }), { name: 'ConfigError' })
  t.type(stockExtensions({ REQUEST_ALLOW_HOSTS: '' }).plugins?.request, 'function', 'empty means none')
})

t.test('the hop header goes upstream on every request, redirects included', async (t) => {
  const seen: Array<string | undefined> = []
  const up = await upstream(t, (req, res) => {
    seen.push(req.headers[HOP_HEADER] as string | undefined)
    if (req.url === '/moved') {
      res.writeHead(301, { location: '/here' })
      res.end()
      return
    }
    ok(req, res)
  })
  await fetchWith(stockRequest({ REQUEST_ALLOW_HOSTS: '127.0.0.1' }), `${up.origin}/x`)
  await fetchWith(createRequest({ redirect: 'follow' }), `${up.origin}/moved`)
  t.strictSame(seen, ['1', '1', '1'])
  t.strictSame(up.hits, ['GET /x', 'GET /moved', 'GET /here'])
})

/** A minimal host app: request ids, the service's error body, the hop plugin and one route. */
async function hopApp(t: { teardown(fn: () => unknown): void }, handled: string[]): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(requestIdPlugin, { prefix: 'req_', trust: false, serverIds: false })
  await app.register(errorsPlugin, { maxBodyBytes: 1024, errorDetail: 'minimal' })
  await app.register(hopPlugin)
  app.post('/map', async () => {
    handled.push('map')
    return { ok: true }
  })
  return app
}

t.test('http/plugins/hop.ts: a request carrying the hop header is 403 Forbidden before any handler runs', async (t) => {
  const handled: string[] = []
  const app = await hopApp(t, handled)
  for (const value of ['1', '', 'anything']) {
    const response = await app.inject({ method: 'POST', url: '/map', headers: { [HOP_HEADER]: value }, payload: {} })
    t.equal(response.statusCode, 403, JSON.stringify(value))
    t.strictSame(response.json(), { code: 'Forbidden', message: LOOP_REFUSED, requestId: response.headers['x-request-id'] })
  }
  const unknown = await app.inject({ method: 'GET', url: '/nowhere', headers: { 'X-Mapper-Hop': '1' } })
  t.equal(unknown.statusCode, 403, 'whatever the route, whatever the case of the name')
  t.strictSame(handled, [])
  t.equal((await app.inject({ method: 'POST', url: '/map', payload: {} })).statusCode, 200, 'without the header the route answers')
  t.strictSame(handled, ['map'])
})

/** The service on 127.0.0.1 with the hop plugin, counting the requests that reach it. */
async function loopingService(t: { teardown(fn: () => unknown): void }, arrivals: string[]): Promise<string> {
  const loop = {
    $id: 'loop',
    mapping: {
      '/inner': {
        source: '',
        request: { url: { input: '/self' }, method: 'POST', body: { mapping: { '/mapping': { constant: 'loop' }, '/input/self': '/self' } } },
      },
    },
  } as unknown as MappingDocument
  const app = Fastify()
  t.teardown(() => app.close())
  app.addHook('onRequest', (request, _reply, done) => {
    arrivals.push(`${request.method} ${request.url} ${request.headers[HOP_HEADER] ?? '-'}`)
    done()
  })
  await app.register(hopPlugin)
  await app.register(mapperService, {
    mappings: [loop],
    extensions: stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' }),
    // Load shedding off: a loaded machine's 503 (to the caller or the nested call) is not the refusal asserted.
    options: { logging: { level: 'silent' }, underPressure: false },
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/map`
}

t.test('a mapping that calls its own service goes exactly one level deep', async (t) => {
  const arrivals: string[] = []
  const self = await loopingService(t, arrivals)
  const response = await fetch(self, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mapping: 'loop', input: { self } }),
    signal: AbortSignal.timeout(10_000),
  })
  t.equal(response.status, 200)
  const envelope = (await response.json()) as { inner: { status: number; json: Record<string, unknown> } }
  t.equal(envelope.inner.status, 403, 'the nested call was refused')
  t.match(envelope.inner.json, { code: 'Forbidden', message: LOOP_REFUSED })
  t.strictSame(arrivals, ['POST /map -', 'POST /map 1'], 'two requests in all: the caller\'s and one nested')
})

t.test('the service with the stock surface and no REQUEST_ALLOW_HOSTS refuses a loopback upstream', async (t) => {
  const up = await upstream(t, ok)
  const previous = process.env.REQUEST_ALLOW_HOSTS
  delete process.env.REQUEST_ALLOW_HOSTS
  t.teardown(() => {
    if (previous !== undefined) process.env.REQUEST_ALLOW_HOSTS = previous
  })
  const app = await buildServer({
    mappings: [{ $id: 'inward', mapping: { '/r': { request: { origin: up.origin, pointer: '/json' } } } } as MappingDocument],
    options: { logging: { level: 'silent' }, errorDetail: 'full' },
  })
  t.teardown(() => app.close())
  const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'inward', input: {} } })
  t.ok(response.statusCode >= 400, `refused (${response.statusCode})`)
  t.match(response.json(), { message: /^Refused destination 127\.0\.0\.1: a private network address/ })
  t.strictSame(up.hits, [])
})

// Deep bodies. Each upstream answers one fixed body; the plugin gets the default policy.

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const nestedJson = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth)
const nestedXml = (depth: number): string => '<a>'.repeat(depth) + '</a>'.repeat(depth)

/** A JSON body nested a million levels deep (2 MB), built once for the two tests that send it. */
const MILLION_DEEP_JSON = nestedJson(1_000_000)

async function serving(t: { teardown(fn: () => unknown): void }, type: string, body: string): Promise<Upstream> {
  return upstream(t, (_req, res) => {
    res.setHeader('content-type', type)
    res.end(body)
  })
}

/** Nesting depth of a parsed JSON value (a scalar is 0). */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0
  return 1 + Math.max(0, ...Object.values(value).map(depthOf))
}

async function refusedQuickly(t: Tap, url: string, format: string): Promise<void> {
  const started = performance.now()
  const error = (await t.rejects(fetchWith(createRequest(), url), {
    name: 'ResponseTooDeepError',
    code: 'E_RESPONSE_TOO_DEEP',
    message: `${format} in the response from ${url} nests deeper than ${MAX_RESPONSE_DEPTH} levels`,
  })) as unknown
  t.ok(error instanceof ResponseTooDeepError)
  // A bound, not a benchmark: the quadratic parse this replaces took seconds to minutes.
  t.ok(performance.now() - started < 5000, 'refused within 5 s')
}

t.test('a JSON body nested a million levels deep is refused before parsing', async (t) => {
  const up = await serving(t, 'application/json', MILLION_DEEP_JSON)
  await refusedQuickly(t, `${up.origin}/deep`, 'JSON')
})

t.test('an XML body nested 200k levels deep is refused before parsing', async (t) => {
  const up = await serving(t, 'application/xml', nestedXml(200_000))
  await refusedQuickly(t, `${up.origin}/deep`, 'XML')
})

t.test('XML closing tags that name no open element do not hide the depth', async (t) => {
  const up = await serving(t, 'text/xml', '<a></z>'.repeat(MAX_RESPONSE_DEPTH + 1))
  await refusedQuickly(t, `${up.origin}/mismatched`, 'XML')
})

t.test('an HTML body nested 200k levels deep is refused while parsing', async (t) => {
  const up = await serving(t, 'text/html', '<div>'.repeat(200_000) + '</div>'.repeat(200_000))
  await refusedQuickly(t, `${up.origin}/deep`, 'HTML')
})

t.test('a JSON-LD block nested too deep in an HTML page is refused like a JSON body', async (t) => {
  const up = await serving(t, 'text/html', `<html><head><script type="application/ld+json">${nestedJson(100_000)}</script></head></html>`)
  await refusedQuickly(t, `${up.origin}/page`, 'JSON-LD')
})

t.test(`bodies at the limit (${MAX_RESPONSE_DEPTH} levels) still parse; one more level is refused`, async (t) => {
  const json = await serving(t, 'application/json', nestedJson(MAX_RESPONSE_DEPTH))
  t.equal(depthOf((await fetchWith(createRequest(), `${json.origin}/`)).json), MAX_RESPONSE_DEPTH)
  const xml = await serving(t, 'application/xml', nestedXml(MAX_RESPONSE_DEPTH))
  t.equal(depthOf((await fetchWith(createRequest(), `${xml.origin}/`)).json), MAX_RESPONSE_DEPTH, 'the root element is one level')
  const page = await serving(t, 'text/html', `<script type="application/ld+json">${nestedJson(MAX_RESPONSE_DEPTH)}</script>`)
  t.equal(depthOf((await fetchWith(createRequest(), `${page.origin}/`)).ld), MAX_RESPONSE_DEPTH)

  const overJson = await serving(t, 'application/json', nestedJson(MAX_RESPONSE_DEPTH + 1))
  await t.rejects(fetchWith(createRequest(), `${overJson.origin}/`), { code: 'E_RESPONSE_TOO_DEEP' })
  const overXml = await serving(t, 'application/xml', nestedXml(MAX_RESPONSE_DEPTH + 1))
  await t.rejects(fetchWith(createRequest(), `${overXml.origin}/`), { code: 'E_RESPONSE_TOO_DEEP' })
})

t.test('brackets and tags that are not structure do not count', async (t) => {
  const deep = '['.repeat(MAX_RESPONSE_DEPTH * 2)
  const json = await serving(t, 'application/json', JSON.stringify({ text: `${deep}"\\${deep}`, list: [deep] }))
  t.match((await fetchWith(createRequest(), `${json.origin}/`)).json, { text: `${deep}"\\${deep}` })

  const tags = '<a>'.repeat(MAX_RESPONSE_DEPTH * 2)
  const xml = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e "x">]><!-- ${tags} --><r t="${tags}" u='${tags}'><![CDATA[${tags}]]>${'<b/>'.repeat(MAX_RESPONSE_DEPTH * 2)}<?pi data?></r>`
  const up = await serving(t, 'application/xml', xml)
  const envelope = await fetchWith(createRequest(), `${up.origin}/`)
  t.equal((envelope.json as { r: { b: string[] } }).r.b.length, MAX_RESPONSE_DEPTH * 2)
})

// The attacks through a real listening server: the status, /health answering throughout (the
// server is in this process, so a blocked event loop shows as a late health answer), and the
// process still serving afterwards.

const DEEP_HTML: Array<[name: string, body: string]> = [
  ['<div> x32,000, closed (352 KB; used to take 7.4 s)', '<div>'.repeat(32_000) + '</div>'.repeat(32_000)],
  ['<div> x200,000, closed (2.2 MB; used to take minutes)', '<div>'.repeat(200_000) + '</div>'.repeat(200_000)],
  ['unclosed <b x=…> x100,000', '<b x=1>'.repeat(100_000)],
  ['<table><tr><td> x50,000', '<table><tr><td>'.repeat(50_000)],
]

/** A page whose heading is 2,000 characters of text, for the scraper's patterns. */
const LONG_PAGE = `<html><body><h1>${'word '.repeat(400)}</h1><p class="n">12345</p></body></html>`

interface StockService {
  readonly app: FastifyInstance
  readonly origin: string
  /** The upstream of the deep JSON body (mapping `deep`). */
  readonly deep: Upstream
  /** The upstream of each DEEP_HTML page (mapping `page-<i>`); LONG_PAGE's is mapping `scrape`'s. */
  readonly pages: readonly Upstream[]
}

let stockServing: Promise<StockService> | undefined

/**
 * The service with the stock surface allowed to reach 127.0.0.1 (errorDetail full, patternInput
 * 1000 for the scraper's patterns), listening, with one registered mapping per upstream body its
 * tests send it: built on first use and closed when the file ends. Each mapping reads its own
 * upstream and the evaluations keep nothing, so the tests share it (a build each, before).
 */
function stockService(): Promise<StockService> {
  stockServing ??= (async () => {
    const deep = await serving(t, 'application/json', MILLION_DEEP_JSON)
    const pages: Upstream[] = []
    for (const [, html] of DEEP_HTML) pages.push(await serving(t, 'text/html', html))
    const long = await serving(t, 'text/html', LONG_PAGE)
    const mappings = [
      { $id: 'deep', mapping: { '/r': { request: { origin: deep.origin, pointer: '/json' } } } },
      ...pages.map((up, i) => ({ $id: `page-${i}`, mapping: { '/r': { request: { origin: up.origin, pathname: '/page', pointer: '/meta' } } } })),
      { $id: 'scrape', mapping: { '/t': { request: { origin: long.origin, scraper: { t: { selector: 'h1', match: 'w\\w+' } } }, pointer: '/data/t' } } },
    ] as MappingDocument[]
    const app = await buildServer({
      mappings,
      extensions: stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' }),
      options: { logging: { level: 'silent' }, errorDetail: 'full', limits: { patternInput: 1000 } },
    })
    return { app, origin: await listening(t, app), deep, pages }
  })()
  return stockServing
}

t.test('the service answers a deep upstream body with a well-formed error body', async (t) => {
  const { app, deep: up } = await stockService()
  const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'deep', input: {} } })
  t.ok(response.statusCode >= 400)
  const body = response.json() as unknown
  t.type(body, 'object', 'one JSON object, not an encoded string')
  t.match(body, { message: `JSON in the response from ${up.origin}/ nests deeper than ${MAX_RESPONSE_DEPTH} levels` })
})

async function postMap(origin: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${origin}/map`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  })
  return { status: response.status, body: await response.json() }
}

for (const [i, [name]] of DEEP_HTML.entries()) {
  t.test(`attack: upstream HTML ${name} is refused while /health keeps answering`, async (t) => {
    const { origin, pages } = await stockService()
    const up = pages[i]!
    const watched = await watchingHealth(origin, () => postMap(origin, { mapping: `page-${i}`, input: {} }))
    // The status JSON and XML bodies nested too deep get: an upstream failure, the message in the log
    // (here, with errorDetail full, in the body too).
    t.equal(watched.result.status, 500)
    t.match(watched.result.body, { code: 'InternalError', message: `HTML in the response from ${up.origin}/page nests deeper than ${MAX_RESPONSE_DEPTH} levels` })
    t.ok(watched.attackMs < 5000, `refused in ${Math.round(watched.attackMs)} ms (bound 5 s)`)
    t.ok(watched.health.length > 0 && watched.health.every((status) => status === 200), `/health answered 200 throughout (${watched.health.length} times)`)
    t.ok(watched.worstMs < 5000, `the slowest /health took ${Math.round(watched.worstMs)} ms (bound 5 s)`)
    const alive = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(10_000) })
    t.equal(alive.status, 200, 'the process lives and answers')
  })
}

t.test('a body parsed off the event loop gives the envelope it gives inline, scraper and pattern budget included', async (t) => {
  const page = `<html><head><meta name="__proto__" content="p"><script type="application/ld+json">{"a":[1,2]}</script></head><body><h1>${'word '.repeat(50)}</h1><ul><li>1</li><li>2</li></ul></body></html>`
  const up = await serving(t, 'text/html; charset=utf-8', page)
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const scraper = { title: { selector: 'h1', match: 'w\\w+' }, items: { selector: 'li', list: true, int: true } }
  const result = await mapper.map({ mapping: { '/r': { request: { origin: up.origin, scraper } } } }, {})
  const envelope = result.r as Record<string, unknown>
  t.same(envelope.data, { title: 'word', items: [1, 2] })
  t.same(envelope.ld, { a: [1, 2] })
  t.equal(envelope.html, page)
  t.ok(Object.hasOwn(envelope.meta as object, '__proto__'), 'a meta name __proto__ crosses back as an own member')
  t.equal(Object.getPrototypeOf(envelope.meta), Object.prototype)
  await t.rejects(
    mapper.map({ mapping: { '/r': { request: { origin: up.origin, scraper } } } }, {}, undefined, { limits: { patternInput: 100 } }),
    { name: 'BudgetExceeded', budget: 'patternInput', limit: 100, used: 250 },
    'the pattern inputs the worker met are counted against the evaluation, as inline'
  )
  const deep = await serving(t, 'text/html', '<div>'.repeat(MAX_RESPONSE_DEPTH + 1))
  await t.rejects(fetchWith(createRequest(), `${deep.origin}/`), ResponseTooDeepError, 'the depth refusal keeps its class across the thread')
})

// The scraper's patterns run on page text: under patternInput like the pattern keyword's input
// (LONG_PAGE, above).

t.test('scraper match and replace: text longer than patternInput trips the budget, shorter text matches', async (t) => {
  const up = await serving(t, 'text/html', LONG_PAGE)
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const scrape = (scraper: unknown, patternInput: number): Promise<Record<string, unknown>> =>
    mapper.map({ mapping: { '/d': { request: { origin: up.origin, scraper, pointer: '/data' } } } }, {}, undefined, { limits: { patternInput } })
  const rows: Array<[name: string, scraper: unknown, patternInput: number, used: number]> = [
    ['match on 2,000 characters of heading', { title: { selector: 'h1', match: 'w\\w+' } }, 1000, 2000],
    ['replace on 2,000 characters of heading', { title: { selector: 'h1', replace: [['word', 'w']] } }, 1000, 2000],
    // Each step may lengthen the text (5, 53, 485 characters): every step's input is counted, so a
    // chain cannot grow it unmetered.
    ['a replace chain that lengthens the text', { n: { selector: 'p.n', replace: [['', '12345678'], ['', '12345678'], ['', '12345678']] } }, 100, 485],
  ]
  for (const [name, scraper, patternInput, used] of rows) {
    await t.rejects(scrape(scraper, patternInput), { name: 'BudgetExceeded', budget: 'patternInput', limit: patternInput, used, pointer: '/mapping/~1d' }, name)
  }
  t.same(await scrape({ n: { selector: 'p.n', match: '\\d+', int: true } }, 5), { d: { n: 12345 }, valid: true, errors: [] }, 'five characters within patternInput 5')
  await t.rejects(scrape({ n: { selector: 'p.n', match: '\\d+' } }, 4), { name: 'BudgetExceeded', budget: 'patternInput', used: 5 }, 'one over')
})

t.test('scraper patterns through the service: 422 BudgetExceeded (patternInput), the process answering', async (t) => {
  const { origin } = await stockService()
  const watched = await watchingHealth(origin, () => postMap(origin, { mapping: 'scrape', input: {} }))
  t.equal(watched.result.status, 422)
  t.match(watched.result.body, { code: 'BudgetExceeded', budget: 'patternInput', limit: 1000, used: 2000, pointer: '/mapping/~1t', mapping: 'scrape' })
  t.ok(watched.health.every((status) => status === 200), '/health answered 200 throughout')
})

// The scans against the parsers they stand in front of.

t.test('property: the JSON scan finds exactly the depth JSON.parse builds', async (t) => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 8 }), fc.boolean(), (value, pretty) => {
      const text = JSON.stringify(value, null, pretty ? 2 : undefined)
      const depth = depthOf(JSON.parse(text))
      return !jsonNestsDeeper(text, depth) && (depth === 0 || jsonNestsDeeper(text, depth - 1))
    }),
    { numRuns: 500 }
  )
  t.pass('500 documents')
})

/** The element depth of the tree cheerio's XML mode builds. */
function xmlDomDepth(xml: string): number {
  const depth = (node: AnyNode): number =>
    'children' in node ? (node.type === 'tag' ? 1 : 0) + Math.max(0, ...node.children.map(depth)) : 0
  return depth(load(xml, { xml: true }).root()[0]!)
}

const XML_PIECES = ['<a>', '</a>', '<b>', '</b>', '<a/>', '<a x="/>">', "<b y='<a>'>", '<a z=/>', '</ a>', '</a/>', '<a / >', '<!--', '-->', '<!-->', '<![CDATA[', ']]>', '<!x>', '<?p?>', '<!DOCTYPE d [<!ENTITY e "<a>">]>', '"', "'", '=', ' ', '/', '>', '<', '&amp;', 'a', 'b']

t.test('property: the XML scan never finds less depth than the parser builds', async (t) => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...XML_PIECES), { maxLength: 60 }), (pieces) => {
      const xml = pieces.join('')
      const depth = xmlDomDepth(xml)
      return depth === 0 || xmlNestsDeeper(xml, depth - 1)
    }),
    { numRuns: 2000 }
  )
  t.pass('2000 documents')
})

t.test('property: on well-formed XML the scan finds exactly the parser\'s depth', async (t) => {
  const element: fc.Memo<string> = fc.memo((n) =>
    n <= 1
      ? fc.constantFrom('<leaf/>', '<leaf a="1"/>', '<leaf>text</leaf>', '<leaf><![CDATA[<x>]]></leaf>')
      : fc.tuple(fc.constantFrom('e', 'f'), fc.array(element(n - 1), { maxLength: 3 })).map(([name, children]) => `<${name} k="v">${children.join('')}</${name}>`)
  )
  fc.assert(
    fc.property(element(6), (xml) => {
      const depth = xmlDomDepth(xml)
      return !xmlNestsDeeper(xml, depth) && xmlNestsDeeper(xml, depth - 1)
    }),
    { numRuns: 500 }
  )
  t.pass('500 documents')
})

// The HTML bound is kept while parsing, by the tree adapter: the tree it lets through is cheerio's
// own, node for node, and a tree deeper than the bound never gets through.

const HTML_PIECES = ['<div>', '</div>', '<p>', '</p>', '<b>', '</b>', '<i>', '</i>', '<a href=x>', '</a>', '<li>', '<ul>', '</ul>', '<table>', '<tr>', '<td>', '</table>', '<template>', '</template>', '<svg>', '<g>', '</svg>', '<select>', '<option>', '<br>', '<textarea>', '</textarea>', '<script>', '</script>', '<!--', '-->', 'text', ' ', '<']

/** The element depth of the tree cheerio built (`load(html)`). */
function htmlDomDepth(dom: ReturnType<typeof load>): number {
  const depth = (node: AnyNode): number =>
    'children' in node ? (node.type === 'tag' || node.type === 'script' || node.type === 'style' ? 1 : 0) + Math.max(0, ...node.children.map(depth)) : 0
  return depth(dom.root()[0]!)
}

t.test('property: the bounded HTML parse builds cheerio\'s tree, or refuses exactly when it is too deep', async (t) => {
  const limit = 6
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...HTML_PIECES), { maxLength: 40 }), (pieces) => {
      const html = pieces.join('')
      // One parse by cheerio, read twice (its depth, its printed tree): reading changes nothing.
      const dom = load(html)
      const deep = htmlDomDepth(dom) > limit
      try {
        const bounded = loadHtml(html, 'http://upstream.test/', limit)
        return !deep && bounded.html() === dom.html()
      } catch (error) {
        return deep && error instanceof ResponseTooDeepError && error.format === 'HTML'
      }
    }),
    { numRuns: 2000 }
  )
  t.pass('2000 documents')
})

// Bodies whose parse is slow without being deep: parse5 checks each attribute against every earlier
// one, and foster-parents by searching its parent's children. On the event loop they took 68 s and
// about 30 s; off it, the call's deadline stops them. Last in the file: each attack ends with the
// parse thread its body was in terminated, and a test after them would start one again.
const WIDE_BODIES: Array<[name: string, type: string, body: string]> = [
  ['HTML, one element with 200,000 attributes (2.3 MB)', 'text/html', `<div ${Array.from({ length: 200_000 }, (_, i) => `a${i}="v"`).join(' ')}></div>`],
  ['HTML, <table><b> x256,000 (2.5 MB)', 'text/html', '<table><b>'.repeat(256_000)],
  ['XML, 1,400,000 elements (20 MB)', 'application/xml', `<r>${'<a x="1">t</a>'.repeat(1_400_000)}</r>`],
]

let wideServing: Promise<{ origin: string; upstreams: readonly Upstream[] }> | undefined

/**
 * The service with a request plugin whose calls have a 1.5 s deadline and room for the 20 MB body,
 * one registered mapping per wide body (`page-<i>`, each with its own upstream), listening: built on
 * first use and closed when the file ends (a build per attack, before).
 */
function wideService(): Promise<{ origin: string; upstreams: readonly Upstream[] }> {
  wideServing ??= (async () => {
    const upstreams: Upstream[] = []
    for (const [, type, body] of WIDE_BODIES) upstreams.push(await serving(t, type, body))
    const request = createRequest({ timeoutMs: 1500, maxResponseBytes: 32 * 1024 * 1024 })
    const app = await buildServer({
      mappings: upstreams.map((up, i) => ({ $id: `page-${i}`, mapping: { '/r': { request: { origin: up.origin, pathname: '/page' } } } })) as MappingDocument[],
      extensions: { plugins: { request } },
      options: { logging: { level: 'silent' }, errorDetail: 'full' },
    })
    return { origin: await listening(t, app), upstreams }
  })()
  return wideServing
}

for (const [i, [name]] of WIDE_BODIES.entries()) {
  t.test(`attack: upstream ${name} is parsed off the event loop and stopped at the call's deadline`, async (t) => {
    const { origin, upstreams } = await wideService()
    const up = upstreams[i]!
    const watched = await watchingHealth(origin, () => postMap(origin, { mapping: `page-${i}`, input: {} }))
    t.equal(watched.result.status, 500)
    t.match(watched.result.body, { code: 'InternalError', message: `Request timed out after 1500 ms: ${up.origin}/page` })
    t.ok(watched.health.length > 0 && watched.health.every((status) => status === 200), `/health answered 200 throughout (${watched.health.length} times)`)
    t.ok(watched.worstMs < 1000, `the slowest /health took ${Math.round(watched.worstMs)} ms (bound 1 s; the parse alone takes 30 s or more)`)
  })
}
