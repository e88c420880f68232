// Where a request goes (request-plugin.md §1): origin + pathname with encoded `{{name}}` segments,
// `search` in both forms, and `url` through each scope — against a real upstream on 127.0.0.1.
import { type IncomingMessage, type ServerResponse } from 'node:http'
import t from 'tap'
import { Mapper, type EvaluationContext } from '../engine/index.js'
import { createRequest } from '../extensions/request/index.js'
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
