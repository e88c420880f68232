// `mapper-service publish` against a real listening service with a directory store: documents
// validated here first (one invalid: nothing is sent), then written with PUT and served; a
// service-side refusal (a stale --if-match, a dependent) exits 1 naming why; a token from
// MAPPER_TOKEN; a service that cannot be reached exits 2.
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { buildServer } from '../server.js'
import { refusingOrigin, SECRET, token } from './http-support.js'
import { runCli, tempTree } from './startup-support.js'

async function service(t: Test, options: Record<string, unknown> = {}): Promise<{ app: FastifyInstance; url: string }> {
  const app = await buildServer({ mappings: [], options: { logging: { level: 'silent' }, underPressure: false, host: '127.0.0.1', store: { url: `file://${tempTree(t).root}` }, ...options } as never })
  t.teardown(() => app.close())
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  return { app, url: `${address}/` }
}

const GREET = { $id: 'greet', mapping: { '/text': '/message' }, examples: [{ input: { message: 'hi' }, output: { text: 'hi' } }] }

t.test('publishes a directory, each document under its $id, and they are served', async (t) => {
  const { app, url } = await service(t)
  const tree = tempTree(t, {
    'greet.json': JSON.stringify(GREET),
    'nested/pair.yaml': 'mappings:\n  inner: { $id: inner, mapping: { /i: /i } }\n  pair: { $id: pair, mapping: { /p: { $ref: inner } } }\n',
  })
  const ran = await runCli(['publish', tree.root, '--url', url])
  t.equal(ran.code, 0, ran.stdout + ran.stderr)
  t.match(ran.stdout, /greet\.json: published "greet" as version 1 \(new\)/)
  t.match(ran.stdout, /pair\.yaml: published "pair" as version 1 \(new\)/)
  t.match(ran.stdout, /2 documents published, 0 refused/)
  const mapped = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'greet', input: { message: 'yo' } } })
  t.strictSame(JSON.parse(mapped.body), { text: 'yo', valid: true, errors: [] })

  const stale = await runCli(['publish', tree.path('greet.json'), '--url', url, '--if-match', '7'])
  t.equal(stale.code, 1, 'a stale --if-match is refused')
  t.match(stale.stdout, /refused: 412 PreconditionFailed/)
  const current = await runCli(['publish', tree.path('greet.json'), '--url', url, '--if-match', '1'])
  t.equal(current.code, 0)
  t.match(current.stdout, /version 2 \(replaced\)/)
  const createOnly = await runCli(['publish', tree.path('greet.json'), '--url', url, '--create-only'])
  t.equal(createOnly.code, 1, '--create-only on a stored id is refused')
})

t.test('an invalid document: reported here, nothing sent', async (t) => {
  const { app, url } = await service(t)
  const tree = tempTree(t, { 'good.json': JSON.stringify(GREET), 'bad.json': JSON.stringify({ $id: 'bad', mapping: { '/x': { source: 'no pointer' } } }) })
  const ran = await runCli(['publish', tree.root, '--url', url])
  t.equal(ran.code, 1)
  t.match(ran.stdout, /bad\.json: invalid/)
  t.match(ran.stderr, /nothing published: 1 document invalid/)
  t.equal((await app.inject({ method: 'GET', url: '/mappings/greet' })).statusCode, 404, 'the valid one was not sent either')
})

t.test('the token comes from --token or MAPPER_TOKEN; refusals are named', async (t) => {
  const { url } = await service(t, { auth: { secret: SECRET }, mappings: { write: { claims: { role: 'publisher' } } } })
  const tree = tempTree(t, { 'greet.json': JSON.stringify(GREET) })
  const anonymous = await runCli(['publish', tree.root, '--url', url])
  t.equal(anonymous.code, 1)
  t.match(anonymous.stdout, /refused: 401 Unauthorized/)
  const reader = await runCli(['publish', tree.root, '--url', url, '--token', token({ sub: 'r' })])
  t.match(reader.stdout, /refused: 403 Forbidden/)
  const publisher = await runCli(['publish', tree.root, '--url', url], { env: { MAPPER_TOKEN: token({ sub: 'ci', role: 'publisher' }) } })
  t.equal(publisher.code, 0, publisher.stdout)
})

t.test('bad arguments and an unreachable service exit 2', async (t) => {
  const tree = tempTree(t, { 'greet.json': JSON.stringify(GREET), 'anonymous.json': JSON.stringify({ mapping: {} }) })
  t.equal((await runCli(['publish', tree.root])).code, 2, 'no --url')
  t.equal((await runCli(['publish', tree.root, '--url', 'ftp://x/'])).code, 2, 'not http')
  const noId = await runCli(['publish', tree.path('anonymous.json'), '--url', 'http://127.0.0.1:9/'])
  t.equal(noId.code, 2)
  t.match(noId.stderr, /no \$id to publish it under/)
  const unreachable = await runCli(['publish', tree.path('greet.json'), '--url', await refusingOrigin()])
  t.equal(unreachable.code, 2)
  t.match(unreachable.stderr, /could not be reached/)
})
