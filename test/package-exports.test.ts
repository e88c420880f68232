// The package's public entry points resolve as a consumer imports them (package.json `exports`,
// pointing at the compiled dist/ that `npm ci` builds): the service, the engine, the request plugin.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { packageInfo } from '../config/package.js'

t.test('mapper-service, mapper-service/engine and mapper-service/request resolve with their types', async (t) => {
  const root = packageInfo().root
  const service = (await import('mapper-service')) as Record<string, unknown>
  t.type(service.default, 'function', 'the Fastify plugin is the default export')
  t.type(service.buildServer, 'function')
  t.type(service.loadMappings, 'function')
  const engine = (await import('mapper-service/engine')) as Record<string, unknown>
  for (const name of ['Mapper', 'evaluate', 'evaluateMapping', 'extend', 'validate', 'screenPattern', 'readPointer']) {
    t.type(engine[name], 'function', `engine.${name}`)
  }
  const request = (await import('mapper-service/request')) as Record<string, unknown>
  t.type(request.createRequest, 'function')
  t.type(request.RedirectRefusedError, 'function')
  for (const types of ['dist/index.d.ts', 'dist/engine/index.d.ts', 'dist/extensions/request/index.d.ts']) {
    t.ok(existsSync(join(root, types)), types)
  }
  const { Mapper } = engine as { Mapper: new (...args: unknown[]) => { map(d: unknown, i: unknown): Promise<unknown> } }
  t.same(await new Mapper().map({ mapping: { '/a': '/b' } }, { b: 1 }), { a: 1, valid: true, errors: [] }, 'the compiled engine runs')
})
