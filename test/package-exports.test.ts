// The package's public entry points resolve as a consumer imports them: `mapper-service`,
// `mapper-service/engine`, `mapper-service/request` and `mapper-service/package.json`, by name,
// through package.json `exports`, from a project with the package in its node_modules (laid out by
// test/package-support.ts from the shipped files compiled as they are now: no build needed). The
// declarations `exports` names are those the build emits beside each entry point; that they compile
// for a strict consumer is test/package-types.test.ts's.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { packageLayout } from './package-support.js'
import { shippedSources } from './proc-compiled.js'
import { ROOT, tempTree } from './startup-support.js'

t.setTimeout(120000)

interface Manifest {
  version: string
  main: string
  types: string
  exports: Record<string, string | { types: string; default: string }>
}
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest

// A consumer's module: what it imports is resolved from its own node_modules, as in a real install.
const CONSUMER = `
export const service = await import('mapper-service')
export const engine = await import('mapper-service/engine')
export const request = await import('mapper-service/request')
export const manifest = (await import('mapper-service/package.json', { with: { type: 'json' } })).default
`

t.test('mapper-service, mapper-service/engine and mapper-service/request resolve by name from a consumer', async (t) => {
  const project = tempTree(t)
  await packageLayout(project.path('node_modules/mapper-service'))
  writeFileSync(project.path('package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }))
  const consumer = project.write('consumer.mjs', CONSUMER)
  const imported = (await import(pathToFileURL(consumer).href)) as Record<'service' | 'engine' | 'request' | 'manifest', Record<string, unknown>>

  const { service, engine, request } = imported
  t.type(service.default, 'function', 'the Fastify plugin is the default export')
  t.type(service.buildServer, 'function')
  t.type(service.loadMappings, 'function')
  for (const name of ['Mapper', 'evaluate', 'evaluateMapping', 'extend', 'validate', 'screenPattern', 'readPointer']) {
    t.type(engine[name], 'function', `engine.${name}`)
  }
  t.type(request.createRequest, 'function')
  t.type(request.RedirectRefusedError, 'function')
  t.equal(imported.manifest.version, manifest.version, 'mapper-service/package.json is the manifest')
  const { Mapper } = engine as { Mapper: new (...args: unknown[]) => { map(d: unknown, i: unknown): Promise<unknown> } }
  t.same(await new Mapper().map({ mapping: { '/a': '/b' } }, { b: 1 }), { a: 1, valid: true, errors: [] }, 'the compiled engine runs')
})

t.test('every entry point and its declarations are files the build emits', async (t) => {
  const sources = shippedSources()
  // tsc -p tsconfig.build.json writes dist/<file>.js and, with `declaration`, dist/<file>.d.ts for each source <file>.ts.
  const built = (path: string, extension: '.js' | '.d.ts'): boolean => {
    const match = /^\.?\/?dist\/(.+)$/.exec(path)
    return match !== null && match[1]!.endsWith(extension) && sources.has(match[1]!.slice(0, -extension.length) + '.ts')
  }
  t.ok(built(manifest.main, '.js'), `main ${manifest.main}`)
  t.ok(built(manifest.types, '.d.ts'), `types ${manifest.types}`)
  for (const [name, target] of Object.entries(manifest.exports)) {
    if (typeof target === 'string') {
      t.equal(target, './package.json', `${name} is the one plain-file export`)
      continue
    }
    t.ok(built(target.default, '.js'), `${name}: ${target.default}`)
    t.equal(target.types, target.default.replace(/\.js$/, '.d.ts'), `${name}: its declarations beside it`)
  }
})
