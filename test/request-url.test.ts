// Where a request goes (request-plugin.md §1): origin + pathname with encoded `{{name}}` segments,
// `search` in both forms, and `url` through each scope — against a real upstream on 127.0.0.1. A
// URL that cannot be built, or whose protocol is refused, sends nothing and is the caller's fault:
// the service answers 422 (http.md §3).
import { type IncomingMessage, type ServerResponse } from 'node:http'
import t from 'tap'
import { Mapper, type EvaluationContext, type MappingDocument } from '../engine/index.js'
import { createRequest, InvalidUrlError, ProtocolRefusedError } from '../extensions/request/index.js'
import { stockExtensions } from '../extensions/stock.js'
import { buildServer } from '../server.js'
import { upstream } from './request-support.js'

/** Answers every request with `{ path }` as JSON. */
const echoPath = (req: IncomingMessage, res: ServerResponse): void => {
  res.setHeader('content-type', 'application/json')
  res.end(JSON.stringify({ path: req.url }))
}

/** Run `fn` inside a plugin call, with the live context the engine hands to plugins. */
async function withContext<T>(input: unknown, fn: (context: EvaluationContext) => Promise<T>): Promise<T> {
  let result: T | undefined
  const mapper = new Mapper({}, {
    plugins: {
      probe: async (_options: unknown, _value: unknown, context: EvaluationContext) => {
        result = await fn(context)
        return undefined
      },
    },
  })
  await mapper.map({ mapping: { '/x': { probe: {} } } }, input)
  return result as T
}

t.test('origin + pathname: {{name}} is filled from the pipeline value, encoded as one segment', async (t) => {
  const up = await upstream(t, echoPath)
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const result = await mapper.map(
    {
      mapping: {
        '/params/id': '/request/bookId',
        '/book': { output: '/params', request: { origin: up.origin, pathname: '/books/{{id}}', pointer: '/json' } },
        '/odd': { source: '/odd', request: { origin: up.origin, pathname: '/things/{{id}}/{{n}}', pointer: '/json/path' } },
      },
    },
    { request: { bookId: 'b1' }, odd: { id: 'a/../b c', n: 7 } }
  )
  t.same(result.book, { path: '/books/b1' })
  t.equal(result.odd, '/things/a%2F..%2Fb%20c/7', 'slashes, dots and spaces stay inside the segment')
  t.same(up.hits, ['GET /books/b1', 'GET /things/a%2F..%2Fb%20c/7'])
})

t.test('a {{name}} value of exactly . or .. is refused and never sent', async (t) => {
  const up = await upstream(t, echoPath)
  const request = createRequest()
  for (const id of ['.', '..']) {
    await t.rejects(
      withContext({}, (context) => request({ origin: up.origin, pathname: '/things/{{id}}/secret' }, { id }, context) as Promise<unknown>),
      { message: `pathname placeholder {{id}} refused: the value "${id}" is a dot segment` }
    )
  }
  t.same(up.hits, [], 'the upstream saw nothing')
})

t.test('a {{name}} with no value, or an object value, is refused', async (t) => {
  const up = await upstream(t, echoPath)
  const request = createRequest()
  await t.rejects(
    withContext({}, (context) => request({ origin: up.origin, pathname: '/things/{{id}}' }, {}, context) as Promise<unknown>),
    { message: 'pathname placeholder {{id}} has no value: the pipeline value has no id' }
  )
  await t.rejects(
    withContext({}, (context) => request({ origin: up.origin, pathname: '/things/{{id}}' }, { id: { a: 1 } }, context) as Promise<unknown>),
    { message: 'pathname placeholder {{id}} must be a string, number or boolean' }
  )
  await t.rejects(
    withContext({}, (context) => request({ origin: up.origin, pathname: '/things/{{id}}' }, { id: Number.NaN }, context) as Promise<unknown>),
    { message: 'pathname placeholder {{id}} must be a string, number or boolean' }
  )
  t.same(up.hits, [])
})

t.test('search, literal form: the pipeline value\'s field, else the literal; form-encoded', async (t) => {
  const up = await upstream(t, echoPath)
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const result = await mapper.map(
    {
      mapping: {
        '/r': {
          source: '/params',
          request: { origin: up.origin, pathname: '/things', search: { q: 'term', limit: 10, sort: 'title', tag: 'tags' }, pointer: '/json/path' },
        },
      },
    },
    { params: { term: 'maps & more', tags: ['a', 'b'] } }
  )
  t.equal(result.r, '/things?q=maps+%26+more&limit=10&sort=title&tag=a&tag=b')
})

t.test('search, mapping form: evaluated against the pipeline value into a fresh target', async (t) => {
  const up = await upstream(t, echoPath)
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const result = await mapper.map(
    {
      mapping: {
        '/r': {
          source: '/params',
          request: {
            origin: up.origin,
            pathname: '/search',
            search: { mapping: { '/q': '/query', '/limit': { constant: '10' }, '/lang': { input: '/lang' } } },
            pointer: '/json/path',
          },
        },
      },
    },
    { params: { query: 'deno' }, lang: 'en' }
  )
  t.equal(result.r, '/search?q=deno&limit=10&lang=en')
  t.same(Object.keys(result).sort(), ['errors', 'r', 'valid'], 'the search mapping wrote nothing into the output')
})

t.test('search mapping that short-circuits: nothing is sent, its errors are reported', async (t) => {
  const up = await upstream(t, echoPath)
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const result = await mapper.map(
    { mapping: { '/r': { request: { origin: up.origin, search: { mapping: { '/q': { source: '/missing', required: true } } } } } } },
    {}
  )
  t.equal(result.valid, false)
  t.match(result.errors, [{ message: 'required value' }])
  t.same(up.hits, [])
})

t.test('url as a bare string: a pointer into the root output', async (t) => {
  const up = await upstream(t, echoPath)
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const result = await mapper.map(
    { mapping: { '/link': '/link', '/next': { request: { url: '/link', pointer: '/json/path' } } } },
    { link: `${up.origin}/next?page=2` }
  )
  t.equal(result.next, '/next?page=2')
})

t.test('url scopes: source, target, input and output', async (t) => {
  const up = await upstream(t, echoPath)
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const result = await mapper.map(
    {
      mapping: {
        '/link': { constant: `${up.origin}/from-output` },
        '/fromOutput': { request: { url: { output: '/link' }, pointer: '/json/path' } },
        '/fromInput': { request: { url: { input: '/URL' }, pointer: '/json/path' } },
        '/fromSource': { source: '/item', request: { url: { source: '/URL' }, pointer: '/json/path' } },
        '/whole': { source: '/plain', request: { url: { source: '' }, pointer: '/json/path' } },
        '/nested': {
          mapping: {
            '/URL': { constant: `${up.origin}/from-target` },
            '/got': { request: { url: { target: '/URL' }, pointer: '/json/path' } },
          },
        },
      },
    },
    { URL: `${up.origin}/from-input`, item: { URL: `${up.origin}/vol-137/article.html?seq=2` }, plain: `${up.origin}/plain` }
  )
  t.equal(result.fromOutput, '/from-output')
  t.equal(result.fromInput, '/from-input')
  t.equal(result.fromSource, '/vol-137/article.html?seq=2')
  t.equal(result.whole, '/plain', '{ source: "" } is the pipeline value itself')
  t.same(result.nested, { URL: `${up.origin}/from-target`, got: '/from-target' })
})

t.test('url objects that are not exactly one scope are refused with the contract message', async (t) => {
  const request = createRequest()
  const invalid: unknown[] = [
    {},
    { source: '/a', output: '/b' },
    { pointer: '/a' },
    { source: '/a', pointer: '/b' },
    { source: 1 },
    42,
    null,
    ['/a'],
  ]
  for (const url of invalid) {
    await t.rejects(
      withContext({}, (context) => request({ url }, {}, context) as Promise<unknown>),
      { message: 'Invalid url: exactly one of source, target, input, or output' },
      JSON.stringify(url)
    )
  }
})

t.test('a url that does not resolve to an absolute URL string is refused', async (t) => {
  const request = createRequest()
  await t.rejects(
    withContext({ URL: 7 }, (context) => request({ url: { input: '/URL' } }, {}, context) as Promise<unknown>),
    { message: 'request url from the url option must be a string, got number' }
  )
  await t.rejects(
    withContext({}, (context) => request({ url: { input: '/missing' } }, {}, context) as Promise<unknown>),
    { message: 'request url from the url option must be a string, got undefined' }
  )
  await t.rejects(
    withContext({ URL: '/relative/only' }, (context) => request({ url: { input: '/URL' } }, {}, context) as Promise<unknown>),
    { message: 'Invalid URL: /relative/only' }
  )
  await t.rejects(
    withContext({}, (context) => request({ url: { input: 'no-slash' } }, {}, context) as Promise<unknown>),
    { message: /^Invalid url pointer "no-slash" \(input\)/ }
  )
})

t.test('url together with origin, pathname or search is refused', async (t) => {
  const request = createRequest()
  await t.rejects(
    withContext({}, (context) => request({ url: '/a', origin: 'http://127.0.0.1' }, {}, context) as Promise<unknown>),
    { message: 'request option url replaces origin, pathname and search: use one or the other' }
  )
  await t.rejects(withContext({}, (context) => request({ pathname: '/a' }, {}, context) as Promise<unknown>), {
    message: 'request needs url, or origin (a string) with an optional pathname and search',
  })
})

t.test('unknown options, policy keys included, are refused', async (t) => {
  const request = createRequest()
  for (const key of ['timeoutMs', 'redirect', 'query']) {
    await t.rejects(
      withContext({}, (context) => request({ origin: 'http://127.0.0.1', [key]: 1 }, {}, context) as Promise<unknown>),
      { message: new RegExp(`^${key} is not a request option`) }
    )
  }
  await t.rejects(withContext({}, (context) => request(null, {}, context) as Promise<unknown>), {
    message: 'request options must be an object',
  })
})

// Refused protocols and URLs that do not parse or cannot be built: 422 with a code of their own,
// the message naming what was refused, and nothing sent (request-plugin.md §2 `allowedProtocols`,
// §3; http.md §3).

const URL_REFUSALS: Array<[name: string, input: Record<string, unknown>, code: string, message: string | RegExp]> = [
  ['file:', { url: 'file:///etc/passwd' }, 'ProtocolRefused', 'Refused protocol file: for file:///etc/passwd: allowed protocols are http:, https:'],
  ['data:', { url: 'data:text/plain,secret' }, 'ProtocolRefused', 'Refused protocol data: for data:text/plain,secret: allowed protocols are http:, https:'],
  ['javascript:', { url: 'javascript:alert(1)' }, 'ProtocolRefused', /^Refused protocol javascript: for javascript:alert\(1\)/],
  ['ftp:', { url: 'ftp://files.example.test/a' }, 'ProtocolRefused', /^Refused protocol ftp: /],
  ['a relative URL', { url: '/relative/only' }, 'InvalidUrl', 'Invalid URL: /relative/only'],
  ['a URL without a host', { url: 'http://' }, 'InvalidUrl', 'Invalid URL: http://'],
  ['a host with a space', { url: 'http://exa mple.test/' }, 'InvalidUrl', 'Invalid URL: http://exa mple.test/'],
  ['an unclosed IPv6 literal', { url: 'http://[::1/' }, 'InvalidUrl', 'Invalid URL: http://[::1/'],
  ['a number', { url: 7 }, 'InvalidUrl', 'request url from the url option must be a string, got number'],
  ['nothing', {}, 'InvalidUrl', 'request url from the url option must be a string, got undefined'],
  ['a dot segment in a placeholder', { id: '..' }, 'InvalidUrl', 'pathname placeholder {{id}} refused: the value ".." is a dot segment'],
  ['a placeholder without a value', { other: 1 }, 'InvalidUrl', 'pathname placeholder {{id}} has no value: the pipeline value has no id'],
]

t.test('the service answers 422 for a refused protocol or an invalid upstream URL, and sends nothing', async (t) => {
  const up = await upstream(t, echoPath)
  const app = await buildServer({
    mappings: [
      { $id: 'byUrl', mapping: { '/r': { request: { url: { input: '/url' } } } } },
      { $id: 'byPath', mapping: { '/r': { source: '', request: { origin: up.origin, pathname: '/things/{{id}}' } } } },
    ] as MappingDocument[],
    extensions: stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' }),
    options: { logging: { level: 'silent' } },
  })
  t.teardown(() => app.close())
  for (const [name, input, code, message] of URL_REFUSALS) {
    const mapping = 'url' in input || Object.keys(input).length === 0 ? 'byUrl' : 'byPath'
    const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping, input } })
    t.equal(response.statusCode, 422, `${name}: 422`)
    const body = response.json() as Record<string, unknown>
    t.strictSame(Object.keys(body), ['code', 'message', 'requestId'], `${name}: the error body`)
    t.equal(body.code, code, `${name}: ${code}`)
    t.match(body.message, message, `${name}: the message names what was refused`)
  }
  t.same(up.hits, [], 'nothing reached the upstream')
  // A URL that parses and is allowed still goes out.
  const fine = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'byUrl', input: { url: `${up.origin}/fine` } } })
  t.equal(fine.statusCode, 200)
})

t.test('the refusals are errors of their own that declare their answer', async (t) => {
  const request = createRequest({ allowedProtocols: ['https:'] })
  const protocol = (await t.rejects(withContext({ url: 'http://127.0.0.1:9/' }, (context) => request({ url: { input: '/url' } }, {}, context) as Promise<unknown>))) as unknown
  t.ok(protocol instanceof ProtocolRefusedError)
  t.match(protocol, { name: 'ProtocolRefusedError', code: 'E_PROTOCOL_REFUSED', statusCode: 422, responseCode: 'ProtocolRefused', protocol: 'http:', message: 'Refused protocol http: for http://127.0.0.1:9/: allowed protocols are https:' })
  const invalid = (await t.rejects(withContext({ url: 'nope' }, (context) => request({ url: { input: '/url' } }, {}, context) as Promise<unknown>))) as unknown
  t.ok(invalid instanceof InvalidUrlError)
  t.ok(invalid instanceof TypeError, 'still a TypeError, as before')
  t.match(invalid, { name: 'InvalidUrlError', code: 'E_INVALID_URL', statusCode: 422, responseCode: 'InvalidUrl', message: 'Invalid URL: nope' })
})
