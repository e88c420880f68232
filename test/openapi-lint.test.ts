// The OpenAPI document as client generators and linters meet it: zero errors and zero warnings
// under Redocly's recommended rules, with auth off and on and under a prefix; named components;
// an operationId, summary and tag on every operation; security per operation, the public routes
// marked `security: []`; every error response the shared, named error body.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import Fastify from 'fastify'
import t from 'tap'
import mapperService from '../app.js'
import { bundledMappingsPath, loadMappings } from '../sources/mappings.js'
import { Reloader } from '../service/reloader.js'
import { buildServer } from '../server.js'
import type { Options } from '../config/options-schema.js'
import { bearer } from './http-support.js'

interface Operation {
  operationId?: string
  summary?: string
  tags?: string[]
  security?: unknown[]
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>
}
interface Document {
  openapi?: string
  servers: Array<{ url: string }>
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown> }
}

const SECRET = 'openapi-lint-secret-'.padEnd(40, 'x')
const PUBLIC = new Set(['/health', '/health/mapping', '/schema/mapping.json'])

async function documentOf(options: Options, prefix = ''): Promise<string> {
  const app = prefix === '' ? await buildServer({ options }) : Fastify()
  if (prefix !== '') await app.register(mapperService, { prefix, options })
  t.teardown(() => app.close())
  const response = await app.inject({ method: 'GET', url: `${prefix}/openapi.json` })
  t.equal(response.statusCode, 200)
  return response.body
}

const CASES: Array<[string, Options, string]> = [
  ['auth off', { logging: { level: 'silent' } }, ''],
  ['auth on, rate limiting on', { logging: { level: 'silent' }, auth: { secret: SECRET }, rateLimit: { max: 100 } }, ''],
  ['under a prefix', { logging: { level: 'silent' }, auth: { secret: SECRET } }, '/mapper/v1'],
  // The managed-mapping operations are in the document only with a store.
  ['a mapping store, writes behind claims', { logging: { level: 'silent' }, auth: { secret: SECRET }, store: { url: pathToFileURL(mkdtempSync(join(tmpdir(), 'openapi-store-'))).href }, mappings: { write: { claims: { role: 'publisher' } } } }, ''],
]

for (const [name, options, prefix] of CASES) {
  t.test(`${name}: Redocly's recommended rules find nothing; every operation is named, tagged and secured as it is served`, async (t) => {
    const source = await documentOf(options, prefix)
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config })
    t.strictSame(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} ${p.location[0]?.pointer ?? ''}`), [], 'no errors, no warnings')

    const document = JSON.parse(source) as Document
    t.strictSame(
      Object.keys(document.components.schemas).sort(),
      ['ErrorBody', 'MapRequest', 'MapResponse', 'MappingDocument', 'PairingTrace', 'ValidateRequest', 'ValidationReport'],
      'components are named, none def-N'
    )
    t.equal(document.servers[0]?.url, prefix === '' ? '.' : '../..', 'the server URL leads from the document back to the host root')
    const auth = options.auth !== undefined
    const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })))
    t.ok(operations.length >= 7)
    const ids = new Set<string>()
    for (const { path, method, operation } of operations) {
      const where = `${method.toUpperCase()} ${path}`
      t.ok(path.startsWith(prefix), `${where} carries the prefix`)
      t.ok(operation.operationId !== undefined && !ids.has(operation.operationId), `${where}: a unique operationId`)
      ids.add(operation.operationId!)
      t.ok(operation.summary, `${where}: a summary`)
      t.equal(operation.tags?.length, 1, `${where}: one tag`)
      const isPublic = PUBLIC.has(path.slice(prefix.length))
      t.strictSame(operation.security, auth && !isPublic ? [{ bearer: [] }] : [], `${where}: ${isPublic ? 'public' : 'protected'}`)
      const errors = Object.entries(operation.responses).filter(([status]) => Number(status) >= 400)
      t.ok(errors.length > 0, `${where}: its error statuses are described`)
      for (const [status, response] of errors) {
        t.equal(response.content?.['application/json']?.schema?.$ref, '#/components/schemas/ErrorBody', `${where} ${status}: the shared error body`)
      }
      if (auth && !isPublic) t.ok(operation.responses['401'] && operation.responses['403'], `${where}: 401 and 403`)
      if (options.rateLimit !== undefined) t.ok(operation.responses['429'], `${where}: 429 when rate limiting is on`)
    }
  })
}

/** Lint a document: the problems Redocly's recommended rules find, as lines. */
async function lint(source: string): Promise<string[]> {
  const config = await createConfig({ extends: ['recommended'] })
  const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config })
  return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} ${p.location[0]?.pointer ?? ''}`)
}

t.test('one typed operation per registered mapping, clean under the recommended rules, regenerated on reload', async (t) => {
  const bundled = await loadMappings(bundledMappingsPath())
  const tree = { $id: 'mapping:Tree', mapping: { '/name': '/n', '/kids': { source: '/c', each: 'mapping:Tree' } } }
  let served: unknown[] = [...bundled, tree]
  const reloader = new Reloader(() => served as never)
  for (const [name, options, prefix] of CASES) {
    t.test(name, async (t) => {
      const app = prefix === '' ? await buildServer({ options, mappings: served as never }) : Fastify()
      if (prefix !== '') await app.register(mapperService, { prefix, options, mappings: served as never })
      t.teardown(() => app.close())
      // With auth on, the mappings' operations are served to an authenticated caller (openapi-auth.test.ts).
      const headers = options.auth === undefined ? {} : bearer({ sub: 'reader' }, { key: SECRET })
      const source = (await app.inject({ method: 'GET', url: `${prefix}/openapi.json`, headers })).body
      t.strictSame(await lint(source), [], 'no errors, no warnings')
      const document = JSON.parse(source) as Document
      t.notOk(document.paths[`${prefix}/map/{id}`], 'the generic path form is not listed: each mapping has its own operation')
      const citation = document.paths[`${prefix}/map/citation`]?.post
      t.equal(citation?.operationId, 'mapCitation')
      t.equal(document.paths[`${prefix}/map/mapping%3ATree`]?.post?.operationId, 'mapMappingTree', 'an id that is no identifier is sanitized, its path encoded')
      t.equal(document.paths[`${prefix}/map/greet`]?.post?.operationId, 'mapGreet', 'a compound document\'s member has its own')
      const answer = citation?.responses['200'] as { content: Record<string, { schema: { anyOf: Array<{ allOf?: Array<{ $ref?: string }> }> } }> }
      t.equal(answer.content['application/json']!.schema.anyOf[0]!.allOf![0]!.$ref, '#/components/schemas/Citation', 'the answer is the inferred envelope, its output a named component')
      const component = document.components.schemas.Citation as { properties: { citation: { properties: Record<string, unknown> } } }
      t.strictSame(component.properties.citation.properties.source, { const: 'import' })
      t.ok(document.components.schemas.MappingTree, 'a recursive mapping is a component its own output refers to')
      t.equal(citation?.security?.length, options.auth === undefined ? 0 : 1, 'secured as POST /map is')
      if (prefix === '') {
        const response = await app.inject({ method: 'POST', url: '/map/mapping%3ATree', headers: options.auth === undefined ? {} : { authorization: 'Bearer x' }, payload: { input: { n: 1 } } })
        if (options.auth === undefined) t.strictSame(response.json(), { name: 1, valid: true, errors: [] }, 'the path form evaluates the mapping it names')
      }
    })
  }
  t.test('a reload replaces the operations', async (t) => {
    const app = await buildServer({ options: { logging: { level: 'silent' } }, mappings: served as never, reloader })
    t.teardown(() => app.close())
    const before = JSON.parse((await app.inject({ method: 'GET', url: '/openapi.json' })).body) as Document
    t.ok(before.paths['/map/citation'])
    served = [{ $id: 'other', mapping: { '/x': { constant: 1 } } }]
    t.equal((await reloader.reload()).ok, true)
    const source = (await app.inject({ method: 'GET', url: '/openapi.json' })).body
    const after = JSON.parse(source) as Document
    t.notOk(after.paths['/map/citation'], 'the mapping reloaded away is gone')
    t.equal(after.paths['/map/other']?.post?.operationId, 'mapOther')
    t.strictSame((after.components.schemas.Other as { properties: unknown }).properties, { x: { const: 1 } })
    t.notOk(after.components.schemas.Citation)
    t.strictSame(await lint(source), [])
  })
  t.test('a mapping registered as stream keeps POST /map/stream the batch endpoint', async (t) => {
    const app = await buildServer({ options: { logging: { level: 'silent' } }, mappings: [{ $id: 'stream', mapping: { '/x': '/x' } }] as never })
    t.teardown(() => app.close())
    const source = (await app.inject({ method: 'GET', url: '/openapi.json' })).body
    const document = JSON.parse(source) as Document
    t.equal(document.paths['/map/stream']?.post?.operationId, 'mapStream')
    t.strictSame(await lint(source), [])
    const mapped = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'stream', input: { x: 1 } } })
    t.strictSame(mapped.json(), { x: 1, valid: true, errors: [] }, 'reached through POST /map')
  })
})
