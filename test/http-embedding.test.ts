// The service inside a larger Fastify app (README "Embedding as a Fastify plugin"), beyond what
// test/http-plugin.test.ts checks of its encapsulation:
// - extensions given as functions with the explicit form on: registration succeeds, the explicit
//   work runs on the event loop, and one warning says so and how to isolate it;
// - `mappings`: documents and loadMappings() entries, mixed, in every form, for the plugin, for
//   buildServer and for a Reloader's source alike;
// - a host that uses @fastify/swagger itself: the service's routes in the host's document with
//   named components (never def-N) and every reference resolved, or hidden from it
//   (openapi.hideFromHost), and operationIds prefixed (openapi.operationIdPrefix) in both documents;
// - the `mapper` decorator: the served set, reached from the host's own routes, a reload included.
import { createConfig, lintFromString } from '@redocly/openapi-core'
import fastifySwagger from '@fastify/swagger'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import t from 'tap'
import mapperService, { INLINE_EXTENSIONS_WARNING, type MapperServiceOptions } from '../app.js'
import { loadMappings, mappingEntries, type MappingEntry } from '../sources/mappings.js'
import { Reloader } from '../service/reloader.js'
import { buildServer } from '../server.js'
import { cachedSerializerBuilder } from '../http/serializers.js'
import { tempTree } from './startup-support.js'

// Load shedding off: a loaded machine's event-loop delay must not answer 503 for what these tests are about.
const QUIET = { logging: { level: 'silent' }, underPressure: false } as const
const GREET = { $id: 'greet', mapping: { '/text': '/message' } }
const SHOUT = { $id: 'shout', mapping: { '/loud': '/message' } }
const ids = (app: FastifyInstance, url = '/mapper/mappings'): Promise<string[]> => app.inject({ method: 'GET', url }).then((response) => Object.keys(response.json()).sort())

/**
 * A host Fastify app. The first test's hosts are written as an embedder writes them (Fastify's own
 * compilers); the others keep the response serializers they compile, as buildServer does
 * (http/serializers.ts: the functions Fastify's default compiler makes, each compiled once per
 * process): a host compiling the service's every response schema anew took most of this file's
 * time (about 0.5 s a registration), and what these tests assert does not depend on it.
 */
const embedder = (options: FastifyServerOptions = {}): FastifyInstance =>
  Fastify({ ...options, schemaController: { compilersFactory: { buildSerializer: cachedSerializerBuilder } } })

type Line = { level: number; msg: string }
/** A host whose log lines are kept (Fastify's own compilers unless `create` says otherwise). */
function host(t: { teardown(fn: () => unknown): void }, lines: Line[] = [], create: (options: FastifyServerOptions) => FastifyInstance = (options) => Fastify(options)): FastifyInstance {
  const app = create({ logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line) as Line) } } })
  t.teardown(() => app.close())
  return app
}

t.test('extensions given as functions, the explicit form on, options.isolation not set: it starts, explicit work inline, one warning', async (t) => {
  const lines: Line[] = []
  const app = host(t, lines)
  const { isMainThread } = await import('node:worker_threads')
  const extensions = { transformers: { thread: () => (isMainThread ? 'main' : 'worker') } }
  await app.register(mapperService, { prefix: '/mapper', mappings: [GREET], extensions, options: { map: { explicit: true }, underPressure: false } })
  await app.ready()
  const answer = await app.inject({ method: 'POST', url: '/mapper/map', payload: { mapping: { mapping: { '/where': { source: '/x', transform: 'thread' } } }, input: { x: 1 } } })
  t.same(answer.json(), { where: 'main', valid: true, errors: [] }, 'the explicit document ran on the event loop')
  const validated = await app.inject({ method: 'POST', url: '/mapper/validate', payload: { mapping: { mapping: { '/where': { source: '/x', transform: 'thread' } } } } })
  t.equal(validated.json().valid, true, '/validate inline too')
  const warnings = lines.filter((line) => line.msg === INLINE_EXTENSIONS_WARNING)
  t.equal(warnings.length, 1, 'said once, at registration')
  t.equal(warnings[0]?.level, 40, 'as a warning')
  t.match(INLINE_EXTENSIONS_WARNING, /extensionsModule/, 'it names the way to isolate them')
  t.match(INLINE_EXTENSIONS_WARNING, /options\.isolation to false/, 'and the way to silence it')

  const quiet: Line[] = []
  const inline = host(t, quiet)
  await inline.register(mapperService, { prefix: '/mapper', mappings: [GREET], extensions, options: { map: { explicit: true }, isolation: false, underPressure: false } })
  await inline.ready()
  t.same(quiet.filter((line) => line.level >= 40), [], 'isolation: false: no warning')
})

t.test('mappings: documents and loadMappings() entries, mixed, in an array, an object, { mappings } or alone', async (t) => {
  const tree = tempTree(t, { 'mappings/greet.json': JSON.stringify(GREET) })
  const loaded: MappingEntry[] = await loadMappings(tree.path('mappings'))
  const compound = { mappings: { a: { $id: 'a', mapping: { '/a': '/a' } }, b: { $id: 'b', mapping: { '/b': '/b' } } } }
  const forms: Array<[string, MapperServiceOptions['mappings'], string[]]> = [
    ['documents in an array (as before)', [GREET, SHOUT], ['greet', 'shout']],
    ['entries (as before)', loaded, ['greet']],
    ['entries and documents in one array', [...loaded, SHOUT], ['greet', 'shout']],
    ['entries, documents and a compound document in one array', [...loaded, SHOUT, compound], ['a', 'b', 'greet', 'shout']],
    ["the engine's { mappings: [...] }, mixed", { mappings: [...loaded, SHOUT] }, ['greet', 'shout']],
    ["the engine's { mappings: { … } }, mixed", { mappings: { g: loaded[0]!, s: SHOUT } }, ['greet', 'shout']],
    ['an object keyed by anything, mixed', { first: loaded[0]!, second: SHOUT }, ['greet', 'shout']],
    ['one entry alone', loaded[0]!, ['greet']],
    ['one document alone (as before)', SHOUT, ['shout']],
    ['a compound document (as before)', compound, ['a', 'b']],
  ]
  for (const [name, mappings, expected] of forms) {
    const app = embedder()
    t.teardown(() => app.close())
    await app.register(mapperService, { prefix: '/mapper', mappings, options: QUIET })
    t.same(await ids(app), expected, `the plugin: ${name}`)
    const server = await buildServer({ mappings, options: QUIET })
    t.teardown(() => server.close())
    t.same(await ids(server, '/mappings'), expected, `buildServer: ${name}`)
  }
  t.throws(() => mappingEntries([...loaded, GREET]), { name: 'SourceError', message: /duplicate mapping \$id "greet"/ }, 'a $id twice is still refused, whatever form each came in')
  t.throws(() => mappingEntries(42 as never), { name: 'SourceError', message: /loadMappings\(\) entries/ })

  // A Reloader's source takes the same forms.
  const app = embedder()
  t.teardown(() => app.close())
  let source: MapperServiceOptions['mappings'] = [GREET]
  const reloader = new Reloader(() => source!)
  await app.register(mapperService, { prefix: '/mapper', mappings: source, reloader, options: QUIET })
  source = { mappings: [...loaded, SHOUT, compound] }
  t.match(await reloader.reload(), { ok: true, mappings: 4 })
  t.same(await ids(app), ['a', 'b', 'greet', 'shout'], 'reloaded from a mixed source')
})

interface Operation {
  operationId?: string
}
interface Document {
  openapi: string
  paths: Record<string, Record<string, Operation>>
  components?: { schemas?: Record<string, unknown> }
}

const SERVICE_COMPONENTS = [
  'MapperServiceErrorBody',
  'MapperServiceMapRequest',
  'MapperServiceMapResponse',
  'MapperServiceMappingDocument',
  'MapperServicePairingTrace',
  'MapperServiceValidateRequest',
  'MapperServiceValidationReport',
]
const SERVICE_OPERATIONS = ['health', 'healthMapping', 'listExtensions', 'listMappings', 'map', 'mapById', 'mapStream', 'mappingOutputSchema', 'mappingSchema', 'validate']

/** A host with @fastify/swagger, a route of its own named `map`, and the service under /mapper. */
async function swaggerHost(t: { teardown(fn: () => unknown): void }, openapi: NonNullable<MapperServiceOptions['options']>['openapi'], version = '3.1.0'): Promise<{ app: FastifyInstance; document: Document }> {
  const app = embedder()
  t.teardown(() => app.close())
  await app.register(fastifySwagger, { openapi: { openapi: version, info: { title: 'host', version: '1.0.0', license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' } }, servers: [{ url: 'http://localhost' }], security: [] } })
  const answer = { 200: { description: 'The answer.', type: 'object', properties: { ok: { type: 'boolean' } } }, 400: { description: 'Refused.', type: 'object', properties: { ok: { type: 'boolean' } } } }
  app.get('/map', { schema: { operationId: 'map', summary: "The host's own map", tags: ['host'], response: answer } }, async () => ({ ok: true }))
  await app.register(mapperService, { prefix: '/mapper', mappings: [GREET], options: { ...QUIET, openapi } })
  await app.ready()
  return { app, document: app.swagger() as unknown as Document }
}

const operationIds = (document: Document, prefix = '/mapper'): string[] =>
  Object.entries(document.paths)
    .filter(([path]) => path.startsWith(prefix))
    .flatMap(([, methods]) => Object.values(methods).map((operation) => operation.operationId ?? ''))
    .sort()

/** Every `#/components/schemas/…` reference in the document, and those that name no component. */
function references(document: Document): { all: Set<string>; unresolved: string[] } {
  const all = new Set((JSON.stringify(document).match(/"#\/components\/schemas\/[^"]+"/g) ?? []).map((ref) => ref.slice(22, -1)))
  return { all, unresolved: [...all].filter((name) => !Object.hasOwn(document.components?.schemas ?? {}, name)) }
}

async function lintErrors(document: Document): Promise<string[]> {
  const config = await createConfig({ extends: ['recommended'] })
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'host.json', config })
  return problems.filter((problem) => problem.severity === 'error').map((problem) => `${problem.ruleId}: ${problem.message} ${problem.location[0]?.pointer ?? ''}`)
}

t.test("a host's @fastify/swagger document: the service's routes with named components, no def-N, every reference resolved", async (t) => {
  const { app, document } = await swaggerHost(t, undefined)
  t.same(operationIds(document), SERVICE_OPERATIONS, "the service's routes are in the host's document")
  const components = Object.keys(document.components?.schemas ?? {}).sort()
  t.same(components, SERVICE_COMPONENTS, "its schemas are components named after it; the host's def-N copies of them are gone")
  const { all, unresolved } = references(document)
  t.same(unresolved, [], 'every reference names a component')
  t.ok(all.has('MapperServiceMapRequest') && all.has('MapperServiceErrorBody'), 'the routes refer to them')
  const map = document.paths['/mapper/map']!.post as { requestBody: { content: Record<string, { schema: unknown }> }; responses: Record<string, { content?: Record<string, { schema: unknown }> }> }
  t.same(map.requestBody.content['application/json']!.schema, { $ref: '#/components/schemas/MapperServiceMapRequest' })
  t.same(map.responses['200']!.content!['application/json']!.schema, { $ref: '#/components/schemas/MapperServiceMapResponse' })
  t.same(map.responses['422']!.content!['application/json']!.schema, { $ref: '#/components/schemas/MapperServiceErrorBody' })
  t.same(
    await lintErrors(document),
    ['operation-operationId-unique: Every operation must have a unique `operationId`. #/paths/~1mapper~1map/post/map'],
    "Redocly's recommended rules find one error: the service's `map` beside the host's (options.openapi.operationIdPrefix is the way out)"
  )

  // The service's own document is as it was: its own names, its own ids.
  const own = (await app.inject({ method: 'GET', url: '/mapper/openapi.json' })).json() as Document
  t.same(Object.keys(own.components!.schemas!).sort(), ['ErrorBody', 'Greet', 'MapRequest', 'MapResponse', 'MappingDocument', 'PairingTrace', 'ValidateRequest', 'ValidationReport'])
  t.ok(operationIds(own).includes('mapGreet'))
})

t.test('options.openapi.operationIdPrefix: every operationId of the service prefixed, in the host\'s document and its own alike', async (t) => {
  const { app, document } = await swaggerHost(t, { operationIdPrefix: 'mapper_' })
  t.same(operationIds(document), SERVICE_OPERATIONS.map((id) => `mapper_${id}`))
  t.equal(document.paths['/map']!.get!.operationId, 'map', "the host's own id is left alone, and no longer clashes")
  const all = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId))
  t.equal(new Set(all).size, all.length, 'no operationId twice')
  t.same(await lintErrors(document), [])

  const own = (await app.inject({ method: 'GET', url: '/mapper/openapi.json' })).json() as Document
  const ownIds = operationIds(own)
  t.ok(ownIds.length > 0 && ownIds.every((id) => id.startsWith('mapper_')), `its own document: ${ownIds.join(' ')}`)
  t.ok(ownIds.includes('mapper_mapGreet'), "a registered mapping's own operation too")
  t.same(ownIds.filter((id) => id !== 'mapper_mapGreet'), SERVICE_OPERATIONS.filter((id) => id !== 'mapById').map((id) => `mapper_${id}`), 'the same ids as in the host\'s document')

  await t.rejects(swaggerHost(t, { operationIdPrefix: 'mapper prefix' }), /^options\.openapi\.operationIdPrefix: Expected string to match/, 'a prefix that is no identifier is refused at registration, naming the option')
})

t.test('options.openapi.hideFromHost: none of the service in the host\'s document; its own document whole', async (t) => {
  const { app, document } = await swaggerHost(t, { hideFromHost: true, operationIdPrefix: 'm_' })
  t.same(Object.keys(document.paths), ['/map'], "only the host's own route")
  t.same(Object.keys(document.components?.schemas ?? {}), [], 'and none of the service\'s schemas')
  t.same(await lintErrors(document), [])
  const own = (await app.inject({ method: 'GET', url: '/mapper/openapi.json' })).json() as Document
  t.same(operationIds(own), [...SERVICE_OPERATIONS.filter((id) => id !== 'mapById'), 'mapGreet'].map((id) => `m_${id}`).sort(), 'the service serves its whole document')
  t.equal((await app.inject({ method: 'POST', url: '/mapper/map', payload: { mapping: 'greet', input: { message: 'hi' } } })).statusCode, 200, 'the routes answer')

  const { document: unserved } = await swaggerHost(t, { serve: false })
  t.equal((await (await swaggerHost(t, { serve: false })).app.inject({ method: 'GET', url: '/mapper/openapi.json' })).statusCode, 404, 'serve: false: no /openapi.json')
  t.same(operationIds(unserved), SERVICE_OPERATIONS, "serve: false leaves the host's document as without it")
})

t.test('an OpenAPI 3.0 host document: the components carry no const (3.0 has none), every reference resolved', async (t) => {
  const { document } = await swaggerHost(t, undefined, '3.0.3')
  t.notMatch(JSON.stringify(document.components), /"const"/)
  t.same(references(document).unresolved, [])
  t.same(Object.keys(document.components?.schemas ?? {}).sort(), SERVICE_COMPONENTS)
})

t.test('app.mapper: the served set from the host\'s own routes, the new version after a reload', async (t) => {
  const app = embedder()
  t.teardown(() => app.close())
  let version = { $id: 'greet', mapping: { '/text': '/message' } } as Record<string, unknown>
  const reloader = new Reloader(() => [version])
  await app.register(mapperService, { prefix: '/mapper', mappings: [version], reloader, options: QUIET })
  app.post('/hello', async (request) => app.mapper.map('greet', request.body))
  app.get('/served', async () => ({ greet: app.mapper.has('greet'), ids: Object.keys(app.mapper.mappings) }))
  app.get('/missing', async () => app.mapper.map('nope', {}))
  await app.ready()

  t.same((await app.inject({ method: 'POST', url: '/hello', payload: { message: 'hi' } })).json(), { text: 'hi', valid: true, errors: [] })
  version = { $id: 'greet', mapping: { '/greeting': '/message', '/version': { constant: 2 } } }
  t.match(await reloader.reload(), { ok: true })
  t.same((await app.inject({ method: 'POST', url: '/hello', payload: { message: 'hi' } })).json(), { greeting: 'hi', version: 2, valid: true, errors: [] }, 'the reloaded version')
  t.same((await app.inject({ method: 'POST', url: '/mapper/map', payload: { mapping: 'greet', input: { message: 'hi' } } })).json(), { greeting: 'hi', version: 2, valid: true, errors: [] }, 'the same as /map serves')
  t.same(await app.mapper.map('greet', { message: 'direct' }), { greeting: 'direct', version: 2, valid: true, errors: [] })
  t.same((await app.inject({ method: 'GET', url: '/served' })).json(), { greet: true, ids: ['greet'] })

  await t.rejects(app.mapper.map('nope', {}), { statusCode: 404, message: 'No mapping registered as "nope"' }, 'an id not served: the NotFound /map answers')
  const missing = await app.inject({ method: 'GET', url: '/missing' })
  t.equal(missing.statusCode, 404, "the host's error handler answers it 404")
})

t.test('the decorator option: another name, none, and a second service beside the first', async (t) => {
  const named = embedder()
  t.teardown(() => named.close())
  await named.register(mapperService, { prefix: '/m', mappings: [GREET], decorator: 'greetings', options: QUIET })
  t.same(await (named as unknown as { greetings: FastifyInstance['mapper'] }).greetings.map('greet', { message: 'x' }), { text: 'x', valid: true, errors: [] })
  t.notOk(named.hasDecorator('mapper'))

  const none = embedder()
  t.teardown(() => none.close())
  await none.register(mapperService, { prefix: '/m', mappings: [GREET], decorator: false, options: QUIET })
  t.notOk(none.hasDecorator('mapper'))

  const lines: Line[] = []
  const two = host(t, lines, embedder)
  await two.register(mapperService, { prefix: '/a', mappings: [GREET], options: QUIET })
  await two.register(mapperService, { prefix: '/b', mappings: [SHOUT], options: QUIET })
  await two.register(mapperService, { prefix: '/c', mappings: [SHOUT], decorator: 'shouting', options: QUIET })
  await two.ready()
  t.ok(two.mapper.has('greet'), 'the first service keeps the default name')
  t.match(lines.find((line) => line.level === 40)?.msg, /already has a decorator named "mapper".*decorator option/, 'the second is said to be unreachable through it')
  t.ok((two as unknown as { shouting: FastifyInstance['mapper'] }).shouting.has('shout'), 'a third under a name of its own')

  const taken = embedder()
  t.teardown(() => taken.close())
  taken.decorate('mine', 1)
  await t.rejects(async () => {
    await taken.register(mapperService, { prefix: '/m', mappings: [GREET], decorator: 'mine', options: QUIET })
  }, /the decorator option: the instance already has a decorator named "mine"/, 'a name given outright must be free')
})
