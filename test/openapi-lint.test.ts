// The OpenAPI document as client generators and linters meet it: zero errors and zero warnings
// under Redocly's recommended rules, with auth off and on and under a prefix; named components;
// an operationId, summary and tag on every operation; security per operation, the public routes
// marked `security: []`; every error response the shared, named error body.
import { createConfig, lintFromString } from '@redocly/openapi-core'
import Fastify from 'fastify'
import t from 'tap'
import mapperService from '../app.js'
import { buildServer } from '../server.js'
import type { Options } from '../schemas/options.js'

interface Operation {
  operationId?: string
  summary?: string
  tags?: string[]
  security?: unknown[]
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>
}
interface Document {
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
