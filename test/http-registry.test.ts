// GET /mappings (registered documents as registered, $extend resolved, keyed by $id) and
// GET /extensions (names only, in registration order; the stock surface by default).
import t from 'tap'
import { stockExtensions } from '../extensions/stock.js'
import { bundledMappingsPath, loadMappings } from '../sources/mappings.js'
import { ECHO, GREETINGS, SECRET, bearer, call, serve, shared } from './http-support.js'

/** The tests of the default options share one server (a build costs a few hundred milliseconds). */
const plain = shared(t)

t.test('GET /mappings: every registered mapping keyed by $id, compound members by their own id', async (t) => {
  const app = await serve(t, {
    mappings: [ECHO, GREETINGS, { $id: 'base', mapping: { '/a': '/a' } }, { $id: 'derived', $extend: 'base', mapping: { '/b': '/b' } }],
  })
  const response = await call(app, { method: 'GET', url: '/mappings' })
  t.equal(response.statusCode, 200)
  t.same(response.data, {
    echo: ECHO,
    greet: { $id: 'greet', mapping: { '/text': '/message' } },
    base: { $id: 'base', mapping: { '/a': '/a' } },
    derived: { $id: 'derived', mapping: { '/a': '/a', '/b': '/b' } },
  })
  t.same(Object.keys(response.data), ['echo', 'greet', 'base', 'derived'], 'in registration order')
  t.notOk('greetings' in response.data, 'the compound wrapper is not a mapping')
})

t.test('GET /mappings: an empty registry is {}', async (t) => {
  const app = await serve(t, { mappings: [] })
  const response = await call(app, { method: 'GET', url: '/mappings' })
  t.equal(response.statusCode, 200)
  t.same(response.data, {})
})

t.test('GET /mappings: the bundled examples', async (t) => {
  const app = await serve(t, { mappings: await loadMappings(bundledMappingsPath()) })
  const response = await call(app, { method: 'GET', url: '/mappings' })
  t.same(Object.keys(response.data).sort(), ['citation', 'echo', 'greet'])
  t.same(response.data.echo.mapping, { '/echo': '/' })
  t.same(response.data.greet.mapping, { '/text': '/message' })
  const greet = await call(app, { method: 'POST', url: '/map', payload: { mapping: 'greet', input: { message: 'hello' } } })
  t.same(greet.data, { text: 'hello', valid: true, errors: [] })
})

t.test('GET /extensions: the stock surface', async (t) => {
  const app = await plain()
  const response = await call(app, { method: 'GET', url: '/extensions' })
  t.equal(response.statusCode, 200)
  t.equal(response.body, '{"initializers":[],"transformers":[],"plugins":["request"]}')
  const explicitStock = await serve(t, { extensions: stockExtensions() })
  t.same((await call(explicitStock, { method: 'GET', url: '/extensions' })).data, { initializers: [], transformers: [], plugins: ['request'] })
})

t.test('GET /extensions: names only, in registration order', async (t) => {
  const fn = (value: unknown): unknown => value
  const plugin = async (_options: unknown, value: unknown): Promise<unknown> => value
  const app = await serve(t, {
    extensions: { initializers: { uuid: () => 'id', alpha: () => 1 }, transformers: { shout: fn, a: fn }, plugins: { fetchy: plugin, aa: plugin } },
  })
  const response = await call(app, { method: 'GET', url: '/extensions' })
  t.same(response.data, { initializers: ['uuid', 'alpha'], transformers: ['shout', 'a'], plugins: ['fetchy', 'aa'] })
  const empty = await serve(t, { extensions: {} })
  t.same((await call(empty, { method: 'GET', url: '/extensions' })).data, { initializers: [], transformers: [], plugins: [] })
})

t.test('both need authentication when auth is on, and have no claims gate', async (t) => {
  const app = await serve(t, { options: { auth: { secret: SECRET }, map: { claims: { role: 'admin' } }, validate: { claims: { role: 'admin' } } } })
  for (const url of ['/mappings', '/extensions']) {
    const anonymous = await call(app, { method: 'GET', url })
    t.equal(anonymous.statusCode, 401, url)
    t.equal(anonymous.headers['www-authenticate'], 'Bearer')
    t.equal((await call(app, { method: 'GET', url, headers: bearer({ role: 'nobody' }) })).statusCode, 200, url)
  }
})

t.test('other methods: 405 Use GET; HEAD answers without a body', async (t) => {
  const app = await plain()
  for (const url of ['/mappings', '/extensions']) {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const response = await call(app, { method, url })
      t.equal(response.statusCode, 405, `${method} ${url}`)
      t.equal(response.data.message, 'Use GET')
      t.equal(response.headers.allow, 'GET, HEAD, OPTIONS')
    }
    const head = await app.inject({ method: 'HEAD', url })
    t.equal(head.statusCode, 200)
    t.equal(head.body, '')
  }
})

t.test('GET /mappings/{id}/schema: the inferred output schema of a registered mapping; 404 with the error body for an unknown id', async (t) => {
  const app = await serve(t, { mappings: [ECHO, GREETINGS, { $id: 'mapping:Kv', mapping: { '/key': { constant: 'k' }, '/value': { source: '/v', type: 'number' } } }] })
  const response = await call(app, { method: 'GET', url: '/mappings/mapping%3AKv/schema' })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^application\/schema\+json/)
  t.equal(response.data.$schema, 'https://json-schema.org/draft/2020-12/schema')
  t.same(response.data.anyOf[0], { type: 'object', properties: { key: { const: 'k' }, value: { type: 'number' } }, required: ['key'] })
  t.same((await call(app, { method: 'GET', url: '/mappings/greet/schema' })).data.anyOf[0].properties, { text: {} }, 'a compound document\'s member')
  const unknown = await call(app, { method: 'GET', url: '/mappings/nope/schema' })
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.data.code, 'NotFound')
  t.equal(unknown.data.message, 'No mapping registered as "nope"')
  t.ok(unknown.data.requestId)
})

t.test('GET /mappings/{id}/schema needs authentication when auth is on, as GET /mappings does', async (t) => {
  const app = await serve(t, { options: { auth: { secret: SECRET } } })
  t.equal((await call(app, { method: 'GET', url: '/mappings/echo/schema' })).statusCode, 401)
  const response = await call(app, { method: 'GET', url: '/mappings/echo/schema', headers: bearer({}) })
  t.equal(response.statusCode, 200)
  t.same(response.data.anyOf[0], { type: 'object', properties: { echo: {} } })
})
