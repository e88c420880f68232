// Bad caller input is a 4xx, never a 500 (issue 30): the options a document writes under `request`
// are checked by validation (rules REQ-1 … REQ-10, request-plugin.md §1, through the plugin's
// `validateOptions`, which the engine's validation calls), so `/validate` reports them, an explicit
// `/map` refuses them with 422 InvalidMappingDocument and a registered mapping fails start-up; a
// document no validation saw (a library caller's) fails its call with 422 InvalidRequestOptions;
// what the input gives that cannot become a URL (an object as a search value …) is 422 InvalidUrl.
// Nothing of it reaches an upstream. Real upstreams on 127.0.0.1, the stock surface, the service
// through buildServer with its default isolation (so worker threads validate too).
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { Mapper, type MappingDocument } from '../engine/index.js'
import { checkCallOptions, createRequest, InvalidRequestOptionsError } from '../extensions/request/index.js'
import { stockExtensions } from '../extensions/stock.js'
import { buildServer } from '../server.js'
import { upstream, type Upstream } from './request-support.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const ORIGIN = 'http://127.0.0.1:9'

/** Malformed options: the rule each breaks and where (below the options). */
const MALFORMED: Array<[name: string, options: unknown, rule: string, at: string]> = [
  ['not an object', 5, 'REQ-1', ''],
  ['a list', [ORIGIN], 'REQ-1', ''],
  ['an unknown option', { origin: ORIGIN, timeoutMs: 5 }, 'REQ-2', '/timeoutMs'],
  ['neither url nor origin', { pathname: '/x' }, 'REQ-3', ''],
  ['origin not a string', { origin: 5 }, 'REQ-3', '/origin'],
  ['origin not a URL', { origin: 'api.example.test' }, 'REQ-3', '/origin'],
  ['url beside origin', { url: '/u', origin: ORIGIN }, 'REQ-3', '/url'],
  ['url of two scopes', { url: { input: '/a', output: '/b' } }, 'REQ-4', '/url'],
  ['url of an unknown scope', { url: { env: '/a' } }, 'REQ-4', '/url'],
  ['url pointer not a string', { url: { input: 5 } }, 'REQ-4', '/url/input'],
  ['url pointer that does not parse', { url: 'no-slash' }, 'REQ-4', '/url'],
  ['pathname not a string', { origin: ORIGIN, pathname: ['a'] }, 'REQ-5', '/pathname'],
  ['search not an object', { origin: ORIGIN, search: 'q=1' }, 'REQ-6', '/search'],
  ['a search value that is an object', { origin: ORIGIN, search: { q: { nested: 1 } } }, 'REQ-6', '/search/q'],
  ['a search value that is null', { origin: ORIGIN, search: { q: null } }, 'REQ-6', '/search/q'],
  ['a search mapping that is malformed', { origin: ORIGIN, search: { mapping: 5 } }, 'KW-mapping-1', '/search/mapping'],
  ['method CONNECT', { origin: ORIGIN, method: 'CONNECT' }, 'REQ-7', '/method'],
  ['method trace, any case', { origin: ORIGIN, method: 'trace' }, 'REQ-7', '/method'],
  ['method not a token', { origin: ORIGIN, method: 'GET /x' }, 'REQ-7', '/method'],
  ['method not a string', { origin: ORIGIN, method: 1 }, 'REQ-7', '/method'],
  ['headers not an object', { origin: ORIGIN, headers: ['accept'] }, 'REQ-8', '/headers'],
  ['a header value not a string', { origin: ORIGIN, headers: { accept: 1 } }, 'REQ-8', '/headers/accept'],
  ['a header value with a line break', { origin: ORIGIN, headers: { accept: 'a\r\nx-evil: 1' } }, 'REQ-8', '/headers/accept'],
  ['a header name not a token', { origin: ORIGIN, headers: { 'bad name': 'x' } }, 'REQ-8', '/headers/bad name'],
  ['a framing header', { origin: ORIGIN, headers: { 'Content-Length': '1' } }, 'REQ-8', '/headers/Content-Length'],
  ['the hop header', { origin: ORIGIN, headers: { 'X-Mapper-Hop': '0' } }, 'REQ-8', '/headers/X-Mapper-Hop'],
  ['body not a mapping', { origin: ORIGIN, method: 'POST', body: 'text' }, 'REQ-9', '/body'],
  ['body with GET', { origin: ORIGIN, body: { mapping: { '/a': '/a' } } }, 'REQ-9', '/body'],
  ['a body mapping that is malformed', { origin: ORIGIN, method: 'POST', body: { mapping: { '/a': { source: 5 } } } }, 'KW-locate-1', '/body/mapping/~1a/source'],
  ['scraper not an object', { origin: ORIGIN, scraper: 'h1' }, 'REQ-10', '/scraper'],
  ['a scraper selector that does not parse', { origin: ORIGIN, scraper: { t: { selector: 'h1[' } } }, 'REQ-10', '/scraper'],
  ['a scraper pattern the screen refuses', { origin: ORIGIN, scraper: { t: { match: '(a+)+$' } } }, 'REQ-10', '/scraper'],
  ['an unknown scraper key', { origin: ORIGIN, scraper: { t: { selektor: 'h1' } } }, 'REQ-10', '/scraper'],
]

/** Well-formed options of every form: no finding. */
const WELL_FORMED: unknown[] = [
  { origin: ORIGIN },
  { origin: ORIGIN, pathname: '/books/{{id}}', search: { q: 'title', page: 2, all: true }, pointer: '/json' },
  { origin: ORIGIN, search: { mapping: { '/q': '/title' } } },
  { url: '/target' },
  { url: { source: '' } },
  { url: { input: '/url' } },
  { origin: ORIGIN, method: 'post', headers: { Accept: 'application/json' }, body: { mapping: { '/a': '/a' } } },
  { origin: ORIGIN, method: 'DELETE' },
  { origin: ORIGIN, scraper: { title: { selector: 'h1', trim: true }, links: { selector: 'a', attr: 'href', list: true } } },
]

/** The options with ORIGIN (a closed port) replaced by a live upstream's origin. */
function local(options: unknown, origin: string): unknown {
  const isRecord = typeof options === 'object' && options !== null && !Array.isArray(options)
  return isRecord && (options as Record<string, unknown>).origin === ORIGIN ? { ...options, origin } : options
}

const wrapped = (options: unknown): MappingDocument => ({ mapping: { '/got': { request: options } } }) as MappingDocument

t.test('validation reports each malformed option under its rule, at its place; well-formed options pass', async (t) => {
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  for (const [name, options, rule, at] of MALFORMED) {
    const report = mapper.validate(wrapped(options))
    t.equal(report.valid, false, `${name}: invalid`)
    t.match(report.errors, [{ rule, pointer: `/mapping/~1got/request${at}` }], `${name}: ${rule} at ${at || '/'}`)
  }
  for (const options of WELL_FORMED) {
    t.same(mapper.validate(wrapped(options)).errors, [], JSON.stringify(options))
  }
  // Validation at the document level knows no plugin: only an engine instance asks the plugin.
  t.same(new Mapper({}).validate(wrapped(5)).errors, [], 'no request plugin registered: an inert key (a warning, not an error)')
})

t.test('every finding is reported, each with only the part of the options it is about', async (t) => {
  const issues = checkCallOptions({ origin: 5, method: 'CONNECT', headers: { a: 1, b: 2 }, extra: 1, more: 2 })
  t.same(issues.map((issue) => issue.rule).sort(), ['REQ-2', 'REQ-2', 'REQ-3', 'REQ-7', 'REQ-8', 'REQ-8'])
  const report = new Mapper({}, { plugins: { request: createRequest() } }).validate(wrapped({ origin: ORIGIN, headers: { a: 1 }, extra: 'x' }))
  t.same(report.errors.map((error) => [error.rule, error.pointer, error.descriptor]), [
    ['REQ-2', '/mapping/~1got/request/extra', 'x'],
    ['REQ-8', '/mapping/~1got/request/headers/a', 1],
  ])
})

t.test('a document no validation saw: its call fails with InvalidRequestOptionsError (422) and sends nothing', async (t) => {
  const up = await upstream(t, (_req, res) => res.end('{}'))
  const request = createRequest()
  const context = { signal: undefined } as never
  for (const [name, options, rule] of MALFORMED.filter(([, , rule]) => rule.startsWith('REQ-'))) {
    const given = local(options, up.origin)
    await t.rejects(Promise.resolve().then(() => request(given, {}, context)), { name: 'InvalidRequestOptionsError', statusCode: 422, responseCode: 'InvalidRequestOptions', rule }, name)
  }
  t.same(up.hits, [], 'nothing reached the upstream')
  const error = new InvalidRequestOptionsError('x', 'REQ-1')
  t.ok(error instanceof TypeError, 'a TypeError, as the plugin\'s refusals were')
  t.same(error.responseFields, { rule: 'REQ-1' })
})

async function stockService(t: Pick<Tap, 'teardown'>, config: Parameters<typeof buildServer>[0] = {}): Promise<FastifyInstance> {
  const app = await buildServer({
    extensions: stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' }),
    ...config,
    options: { logging: { level: 'silent' }, underPressure: false, map: { explicit: true }, ...config.options },
  })
  t.teardown(() => app.close())
  return app
}

/**
 * The stock service, no mappings of its own: the tests that send it explicit documents share it (and
 * its worker pool, seconds to start on a loaded machine); each has an upstream of its own.
 */
const explicitService = await stockService(t)

t.test('through the service: /validate reports them, an explicit /map refuses them with 422, nothing is sent', async (t) => {
  const up = await upstream(t, (_req, res) => res.end('{}'))
  const app = explicitService
  for (const [name, options, rule, at] of MALFORMED) {
    const given = local(options, up.origin)
    const validated = await app.inject({ method: 'POST', url: '/validate', payload: { mapping: wrapped(given) } })
    t.equal(validated.statusCode, 200, `${name}: /validate answers`)
    t.match(validated.json(), { valid: false, errors: [{ rule, pointer: `/mapping/~1got/request${at}` }] }, `${name}: /validate reports ${rule}`)
    const mapped = await app.inject({ method: 'POST', url: '/map', payload: { mapping: wrapped(given), input: {} } })
    t.equal(mapped.statusCode, 422, `${name}: /map 422`)
    t.match(mapped.json(), { code: 'InvalidMappingDocument', report: { valid: false, errors: [{ rule }] } }, `${name}: InvalidMappingDocument`)
  }
  t.same(up.hits, [], 'nothing reached the upstream')
})

t.test('a registered mapping with malformed request options fails start-up, naming the rule', async (t) => {
  const mappings = [{ $id: 'broken', mapping: { '/got': { request: { origin: ORIGIN, method: 'CONNECT' } } } } as MappingDocument]
  await t.rejects(stockService(t, { mappings }), { name: 'RegistrationError', message: /mapping "broken".* REQ-7 at \/mapping\/~1got\/request\/method: request method CONNECT is not supported/ })
})

/** The input's faults, for a registered mapping whose options are fine: each a 422 with nothing sent. */
async function inputFaults(t: Tap, up: Upstream, app: FastifyInstance): Promise<void> {
  const cases: Array<[name: string, mapping: string, input: unknown]> = [
    ['a search value that is an object', 'search', { q: { $gt: '' } }],
    ['a search value that is a list holding an object', 'search', { q: ['a', { b: 1 }] }],
    ['a search value that is a list of lists of an object', 'search', { q: [[{ b: 1 }]] }],
    ['a pathname value that is an object', 'path', { id: { a: 1 } }],
    ['a pathname value that is a dot segment', 'path', { id: '..' }],
    ['a pathname value that is missing', 'path', {}],
    ['a url that is a number', 'byUrl', { url: 5 }],
    ['a url that is an object', 'byUrl', { url: { href: up.origin } }],
    ['a url that does not parse', 'byUrl', { url: 'http://[::1' }],
    ['a url that is missing', 'byUrl', {}],
    ['a url of a refused protocol', 'byUrl', { url: 'file:///etc/passwd' }],
  ]
  for (const [name, mapping, input] of cases) {
    const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping, input } })
    t.equal(response.statusCode, 422, `${name}: 422`)
    t.match(response.json(), { code: /^(InvalidUrl|ProtocolRefused)$/ }, `${name}: ${response.json().code}`)
  }
  t.same(up.hits, [], 'nothing reached the upstream')
  const fine = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'search', input: { q: ['a', 2, true] } } })
  t.equal(fine.statusCode, 200, 'a list of primitives is sent as repeated keys')
  t.same(up.hits, ['GET /find?q=a&q=2&q=true'])
}

t.test('registered mappings: what the input gives that cannot become a URL is 422, never 500', async (t) => {
  const up = await upstream(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"ok":true}')
  })
  const mappings = [
    { $id: 'search', mapping: { '/got': { source: '', request: { origin: up.origin, pathname: '/find', search: { q: 'q' }, pointer: '/json' } } } },
    { $id: 'path', mapping: { '/got': { source: '', request: { origin: up.origin, pathname: '/items/{{id}}', pointer: '/json' } } } },
    { $id: 'byUrl', mapping: { '/got': { request: { url: { input: '/url' }, pointer: '/json' } } } },
  ] as MappingDocument[]
  await inputFaults(t, up, await stockService(t, { mappings }))
})

// The class: any options whatever. Validation and the call agree (a finding is exactly what makes
// the call refuse, with the first finding's rule), and the service never answers them with a 5xx.
const anyValue = fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }))
const optionsArbitrary = fc.oneof(
  { weight: 1, arbitrary: anyValue },
  {
    weight: 6,
    arbitrary: fc.record(
      {
        origin: fc.oneof(fc.constant(ORIGIN), fc.constant(''), fc.constant('nope'), anyValue),
        pathname: fc.oneof(fc.constant('/p/{{id}}'), anyValue),
        search: fc.oneof(fc.dictionary(fc.constantFrom('q', 'page', '__proto__', 'a b'), anyValue, { maxKeys: 3 }), fc.constant({ mapping: { '/q': '/q' } }), fc.constant({ mapping: 5 }), anyValue),
        url: fc.oneof(fc.constantFrom('/u', '', 'u', '#/u', { input: '/u' }, { source: '' }, { input: '/u', output: '/v' }, { env: '/u' }), anyValue),
        method: fc.oneof(fc.constantFrom('GET', 'post', 'HEAD', 'CONNECT', 'track', 'GET /', ''), anyValue),
        headers: fc.oneof(fc.dictionary(fc.constantFrom('accept', 'Host', 'x-mapper-hop', 'bad name', 'x-a'), fc.oneof(fc.constantFrom('v', 'a\nb'), anyValue), { maxKeys: 3 }), anyValue),
        body: fc.oneof(fc.constant({ mapping: { '/a': '/a' } }), fc.constant({ mapping: { '/a': { source: 1 } } }), anyValue),
        pointer: fc.constantFrom('/json', '/status'),
        scraper: fc.oneof(fc.constant({ t: { selector: 'h1' } }), fc.constant({ t: { selector: 'h1[' } }), fc.constant({ t: { index: 'x' } }), anyValue),
        timeoutMs: fc.integer(),
      },
      { requiredKeys: [] }
    ),
  }
)

t.test('any options: validation and the call agree on every finding', async (t) => {
  const request = createRequest()
  const mapper = new Mapper({}, { plugins: { request } })
  await fc.assert(
    fc.asyncProperty(optionsArbitrary, async (options) => {
      const given = structuredClone(options)
      const issues = checkCallOptions(given)
      const report = mapper.validate(wrapped(given))
      // Every finding of the plugin is an error of the report (the report may hold the engine's own, too).
      for (const issue of issues) {
        if (!report.errors.some((error) => error.rule === issue.rule && error.message === issue.message)) return false
      }
      let refused: unknown
      // Sent nowhere: the origin is a closed port of 127.0.0.1, and the options are checked first.
      await Promise.resolve()
        .then(() => request(given, {}, { signal: AbortSignal.abort(), output: {}, target: {}, input: {} } as never))
        .catch((error: unknown) => {
          refused = error
        })
      if (issues.length === 0) return !(refused instanceof InvalidRequestOptionsError)
      return refused instanceof InvalidRequestOptionsError && refused.rule === issues[0]!.rule && refused.message === issues[0]!.message
    }),
    { numRuns: 300 }
  )
})

t.test('any options through the service: never a 5xx, and refused as a document exactly when validation finds fault', async (t) => {
  const up = await upstream(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"ok":true}')
  })
  const app = explicitService
  await fc.assert(
    fc.asyncProperty(optionsArbitrary, async (options) => {
      const given = local(options, up.origin)
      const faulty = checkCallOptions(given).length > 0
      const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: wrapped(given), input: { u: `${up.origin}/u`, id: 'b1', q: 'x', a: 1 } } })
      if (response.statusCode >= 500) throw new Error(`${response.statusCode} ${response.body} for ${JSON.stringify(given)}`)
      // Refused as a document exactly when the options are at fault (the body parser may refuse
      // some first: a `__proto__` key is a 400 before any document is read).
      const refusedDocument = response.statusCode === 422 && response.json().code === 'InvalidMappingDocument'
      return faulty ? refusedDocument || response.statusCode === 400 : !refusedDocument
    }),
    { numRuns: 80 }
  )
})
