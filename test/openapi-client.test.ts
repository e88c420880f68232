// The OpenAPI document is accurate enough to generate a client from (http.md §9): generate
// TypeScript types with openapi-typescript, type-check a small program that calls every endpoint
// with them, then run that program against a real listening server.
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import openapiTS, { astToString } from 'openapi-typescript'
import t from 'tap'
import { buildServer } from '../server.js'
import { bundledMappingsPath, loadMappings } from '../config/mappings.js'
import { packageInfo } from '../config/package.js'

const run = promisify(execFile)
const root = packageInfo().root

const CLIENT = `// A client of mapper-service written against the generated types only.
import type { paths } from './schema.js'

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
]
process.stdout.write(JSON.stringify(Object.fromEntries(checks)))
`

t.test('a client generated from /openapi.json type-checks and works against a running server', async (t) => {
  const app = await buildServer({ mappings: await loadMappings(bundledMappingsPath()), options: { logging: { level: 'silent' }, map: { explicit: true } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const document = (await (await fetch(`${base}/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> }
  t.equal(document.openapi, '3.1.0')
  t.same(Object.keys(document.paths).sort(), ['/extensions', '/health', '/health/mapping', '/map', '/map/stream', '/mappings', '/schema/mapping.json', '/validate'])

  // The generated client lives inside the project so it resolves the project's own packages.
  mkdirSync(join(root, '.tap'), { recursive: true })
  const dir = mkdtempSync(join(root, '.tap', 'openapi-client-'))
  writeFileSync(join(dir, 'schema.d.ts'), astToString(await openapiTS(document as never)))
  writeFileSync(join(dir, 'client.ts'), CLIENT)
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'], typeRoots: [join(root, 'node_modules/@types')] },
      files: ['client.ts', 'schema.d.ts'],
    })
  )
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  const tsc = join(root, 'node_modules/typescript/bin/tsc')
  await t.resolves(run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { timeout: 120000 }), 'the client type-checks')

  const { stdout } = await run(process.execPath, ['--import', 'tsx', join(dir, 'client.ts'), base], { cwd: root, timeout: 60000 })
  t.same(JSON.parse(stdout), {
    health: true,
    canary: true,
    map: true,
    explicit: true,
    'error body': true,
    validate: true,
    mappings: true,
    extensions: true,
  })
})
