// The README's "Embedding as a Fastify plugin" example, run as written: its TypeScript block is
// read from README.md at test time (test/readme-support.ts), compiled as a consumer's build would
// (esbuild, types stripped), and run by node as a host app in a project whose node_modules holds
// this package (test/package-support.ts: the shipped files compiled as they are now) and fastify,
// importing them by name. It must register under its prefix and answer there, beside the host's own routes.
import t from 'tap'
import { hostProject } from './package-support.js'
import { fencedBlocks, readmeSection } from './readme-support.js'
import { exchange, freePort, spawnEntryPoint, tempTree, waitForHealth } from './startup-support.js'

t.setTimeout(180000)

t.test('the embedding example registers under /mapper and answers there, the host beside it', async (t) => {
  const blocks = fencedBlocks(readmeSection('Embedding as a Fastify plugin'), 'ts')
  t.equal(blocks.length, 1, 'the section holds one TypeScript example')
  const entry = await hostProject(tempTree(t), blocks[0]!.code)

  const port = await freePort()
  const host = spawnEntryPoint(t, { PORT: String(port) }, 120000, entry)
  // Until the service answers its health check: the example keeps load shedding on, and a start-up
  // on a loaded machine may be answered 503 for a moment.
  await waitForHealth(host, port, '/mapper/health')

  const root = await exchange(port, 'GET', '/')
  t.same(JSON.parse(root.body), { hello: 'host' }, "the host's own route")
  t.notOk(root.headers['x-request-id'], 'no hook of the service on the host')

  const health = await exchange(port, 'GET', '/mapper/health')
  t.equal(health.status, 200)
  t.same(JSON.parse(health.body), { status: 'ok' })
  t.match(health.headers['x-request-id'], /^req_[0-9a-f]{16}$/, "the service's own hooks under its prefix")

  const registered = await exchange(port, 'POST', '/mapper/map', { mapping: 'greet', input: { message: 'hello' } })
  t.equal(registered.status, 200)
  t.same(JSON.parse(registered.body), { text: 'hello', valid: true, errors: [] }, 'the registered mapping')

  const explicit = await exchange(port, 'POST', '/mapper/map', { mapping: { mapping: { '/copy': '/message', '/n': { constant: 1 } } }, input: { message: 'hello' } })
  t.equal(explicit.status, 200, `map.explicit is on: ${explicit.body}`)
  t.same(JSON.parse(explicit.body), { copy: 'hello', n: 1, valid: true, errors: [] })

  const extensions = await exchange(port, 'GET', '/mapper/extensions')
  t.same(JSON.parse(extensions.body).plugins, ['request'], 'the request plugin the example made')

  const decorated = await exchange(port, 'POST', '/greet', { message: 'from the host' })
  t.equal(decorated.status, 200)
  t.same(JSON.parse(decorated.body), { text: 'from the host', valid: true, errors: [] }, "the host's route through app.mapper")

  const missing = await exchange(port, 'GET', '/mapper/nope')
  t.equal(missing.status, 404)
  t.equal(JSON.parse(missing.body).code, 'NotFound', "the service's 404 under its prefix")

  host.child.kill('SIGTERM')
  const exit = await host.exited
  const errors = exit.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((line) => line.level >= 50)
  t.same(errors, [], 'nothing logged at error level')
})
