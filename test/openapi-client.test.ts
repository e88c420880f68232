// The OpenAPI document is accurate enough to generate clients from (http.md §9): types with
// openapi-typescript (used by hand and through openapi-fetch) and an SDK with @hey-api/openapi-ts;
// programs calling every operation through each are type-checked strictly, then run against a
// real listening server.
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { createClient } from '@hey-api/openapi-ts'
import openapiTS, { astToString } from 'openapi-typescript'
import t from 'tap'
import { buildServer } from '../server.js'
import { bundledMappingsPath, loadMappings } from '../sources/mappings.js'
import { packageInfo } from '../support/package.js'
import { untracked } from './startup-support.js'

const run = promisify(execFile)
const root = packageInfo().root

const CLIENT = `// A client of mapper-service written against the generated types only.
import type { components, operations, paths } from './schema.js'

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never
type MapRequest = Json<paths['/map']['post']['requestBody']>
type Envelope = Json<paths['/map']['post']['responses']['200']>
type ErrorBody = Json<paths['/map']['post']['responses']['404']>
type ValidateRequest = Json<paths['/validate']['post']['requestBody']>
type Report = Json<paths['/validate']['post']['responses']['200']>
type Mappings = Json<paths['/mappings']['get']['responses']['200']>
type Extensions = Json<paths['/extensions']['get']['responses']['200']>
type Health = Json<paths['/health']['get']['responses']['200']>
type CanaryHealth = Json<paths['/health/mapping']['get']['responses']['200']>
// Each registered mapping is an operation of its own, answering its inferred envelope.
type Citation = components['schemas']['Citation']
type CitationEnvelope = Json<operations['mapCitation']['responses']['200']>
type CitationRequest = Json<NonNullable<operations['mapCitation']['requestBody']>>

const base = process.argv[2]!

async function call<T>(path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const response = await fetch(base + path, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
  return { status: response.status, json: (await response.json()) as T }
}

const health = await call<Health>('/health')
const canary = await call<CanaryHealth>('/health/mapping')
const mapRequest: MapRequest = { mapping: 'greet', input: { message: 'hi' } }
const mapped = await call<Envelope>('/map', mapRequest)
const explicit = await call<Envelope>('/map', { mapping: { mapping: { '/n': '/n' } }, input: { n: 1 } } satisfies MapRequest)
const missing = await call<ErrorBody>('/map', { mapping: 'nope' } satisfies MapRequest)
const validateRequest: ValidateRequest = { mapping: { mapping: { '/v': { source: '/a', as: 'integer' } } } }
const report = await call<Report>('/validate', validateRequest)
const mappings = await call<Mappings>('/mappings')
async function mapCitation(input: unknown): Promise<{ status: number; json: CitationEnvelope }> {
  return call<CitationEnvelope>('/map/citation', { input } satisfies CitationRequest)
}
const cited = await mapCitation({ title: 'T', ids: [{ idType: 'doi', value: '10.1/x' }], issued: { year: '2024' }, contributors: [{ surname: 'Hopper' }] })
let citation: Citation | undefined
let source: 'import' | undefined
let year: number | null | undefined
if (cited.json.valid && 'citation' in cited.json) {
  citation = cited.json
  source = cited.json.citation.source
  year = cited.json.citation.year
}
const extensions = await call<Extensions>('/extensions')

const checks: Array<[string, boolean]> = [
  ['health', health.status === 200 && health.json.status === 'ok'],
  ['canary', canary.status === 200 && typeof canary.json.durationMs === 'number' && canary.json.mapping === 'echo'],
  ['map', mapped.status === 200 && mapped.json.valid && mapped.json.errors.length === 0 && mapped.json.text === 'hi'],
  ['explicit', explicit.status === 200 && explicit.json.n === 1],
  ['error body', missing.status === 404 && missing.json.code === 'NotFound' && typeof missing.json.requestId === 'string'],
  ['validate', report.status === 200 && !report.json.valid && report.json.errors[0]?.rule === 'KW-pipeline-1'],
  ['mappings', mappings.status === 200 && typeof mappings.json.greet === 'object'],
  ['extensions', extensions.status === 200 && extensions.json.plugins.includes('request')],
  ['typed mapping', cited.status === 200 && citation !== undefined && source === 'import' && year === 2024],
]
process.stdout.write(JSON.stringify(Object.fromEntries(checks)))
`

/** What the openapi-fetch and @hey-api clients check of the answers ({ data, error, response } both). */
const CHECKS = `
const checks: Array<[string, boolean]> = [
  ['health', live.data?.status === 'ok'],
  ['canary', canary.data?.mapping === 'echo'],
  ['map', mapped.data?.valid === true && mapped.data.text === 'hi'],
  ['explicit', explicit.data?.n === 1],
  ['error body', missing.response.status === 404 && missing.error?.code === 'NotFound'],
  ['validate', report.data?.valid === false && report.data.errors[0]?.rule === 'KW-pipeline-1'],
  ['mappings', typeof mappings.data?.greet === 'object'],
  ['extensions', extensions.data?.plugins.includes('request') === true],
  ['schema', schema.response.status === 200 && typeof schema.data === 'object'],
]
process.stdout.write(JSON.stringify(Object.fromEntries(checks)))
`

/** The same calls through openapi-fetch, typed by the generated paths and named components. */
const FETCH_CLIENT = `// A client of mapper-service: openapi-fetch over the types openapi-typescript generated.
import createClient from 'openapi-fetch'
import type { components, paths } from './schema.js'

type MapRequest = components['schemas']['MapRequest']
type ValidateRequest = components['schemas']['ValidateRequest']
type MappingDocument = components['schemas']['MappingDocument']

const client = createClient<paths>({ baseUrl: process.argv[2]! })
const live = await client.GET('/health')
const canary = await client.GET('/health/mapping')
const request: MapRequest = { mapping: 'greet', input: { message: 'hi' } }
const mapped = await client.POST('/map', { body: request })
const document: MappingDocument = { mapping: { '/n': '/n' } }
const explicit = await client.POST('/map', { body: { mapping: document, input: { n: 1 } } })
const missing = await client.POST('/map', { body: { mapping: 'nope' } })
const judged: ValidateRequest = { mapping: { mapping: { '/v': { source: '/a', as: 'integer' } } } }
const report = await client.POST('/validate', { body: judged })
const mappings = await client.GET('/mappings')
const extensions = await client.GET('/extensions')
const schema = await client.GET('/schema/mapping.json')

${CHECKS}`

/** The same calls through the SDK @hey-api/openapi-ts generated: one function per operationId. */
const HEY_CLIENT = `// A client of mapper-service: the SDK @hey-api/openapi-ts generated from /openapi.json.
import { client } from './hey/client.gen.js'
import { health, healthMapping, listExtensions, listMappings, map, mappingSchema, validate } from './hey/sdk.gen.js'
import type { MapRequest, MappingDocument, ValidateRequest } from './hey/types.gen.js'

client.setConfig({ baseUrl: process.argv[2]! })
const live = await health()
const canary = await healthMapping()
const request: MapRequest = { mapping: 'greet', input: { message: 'hi' } }
const mapped = await map({ body: request })
const document: MappingDocument = { mapping: { '/n': '/n' } }
const explicit = await map({ body: { mapping: document, input: { n: 1 } } })
const missing = await map({ body: { mapping: 'nope' } })
const judged: ValidateRequest = { mapping: { mapping: { '/v': { source: '/a', as: 'integer' } } } }
const report = await validate({ body: judged })
const mappings = await listMappings()
const extensions = await listExtensions()
const schema = await mappingSchema()

${CHECKS}`

t.test('a client generated from /openapi.json type-checks and works against a running server', async (t) => {
  // Explicit documents and /validate inline (isolation: false): the document is the same, and the
  // three clients at once started two worker threads, each a second or more of CPU, whose start on
  // a loaded machine could keep a request waiting past the queue's bound.
  const app = await buildServer({ mappings: await loadMappings(bundledMappingsPath()), options: { logging: { level: 'silent' }, map: { explicit: true }, isolation: false } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const document = (await (await fetch(`${base}/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> }
  t.equal(document.openapi, '3.1.0')
  t.same(Object.keys(document.paths).sort(), [
    '/extensions',
    '/health',
    '/health/mapping',
    '/map',
    '/map/citation',
    '/map/echo',
    '/map/greet',
    '/map/stream',
    '/mappings',
    '/mappings/{id}/schema',
    '/schema/mapping.json',
    '/validate',
  ])

  // The generated client lives inside the project so it resolves the project's own packages.
  mkdirSync(join(root, '.tap'), { recursive: true })
  const dir = mkdtempSync(join(root, '.tap', 'openapi-client-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'schema.d.ts'), astToString(await openapiTS(document as never)))
  writeFileSync(join(dir, 'client.ts'), CLIENT)
  writeFileSync(join(dir, 'fetch-client.ts'), FETCH_CLIENT)
  await createClient({
    input: document as never,
    output: { path: join(dir, 'hey'), importFileExtension: '.js' },
    plugins: ['@hey-api/client-fetch', '@hey-api/sdk', '@hey-api/typescript'],
    logs: { level: 'silent' },
  })
  writeFileSync(join(dir, 'hey-client.ts'), HEY_CLIENT)
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'], typeRoots: [join(root, 'node_modules/@types')] },
      include: ['*.ts', 'hey/**/*.ts'],
    })
  )
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  // The type check and the three programs at once (tsx runs a program without type-checking it),
  // each checked below in turn; all without tap's process-info hooks (untracked), about a second
  // of start-up each.
  const tsc = join(root, 'node_modules/typescript/bin/tsc')
  const checked = run(...untracked(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')]), { timeout: 120000 })
  const [plain, ...clients] = ['client.ts', 'fetch-client.ts', 'hey-client.ts'].map((client) => run(...untracked(process.execPath, ['--import', 'tsx', join(dir, client), base]), { cwd: root, timeout: 60000 }))
  // Each awaited in its turn below; none left unhandled should an earlier one fail first.
  for (const child of [checked, plain!, ...clients]) child.catch(() => {})
  await t.resolves(checked, 'the client type-checks')

  const { stdout } = await plain!
  t.same(JSON.parse(stdout), {
    health: true,
    canary: true,
    map: true,
    explicit: true,
    'error body': true,
    validate: true,
    mappings: true,
    extensions: true,
    'typed mapping': true,
  })
  const everyOperation = { health: true, canary: true, map: true, explicit: true, 'error body': true, validate: true, mappings: true, extensions: true, schema: true }
  for (const [index, client] of ['fetch-client.ts', 'hey-client.ts'].entries()) {
    const ran = await clients[index]!
    t.same(JSON.parse(ran.stdout), everyOperation, `${client}: every operation, typed by the named components`)
  }
})
