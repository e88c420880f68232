// Managed mappings on PostgreSQL over HTTP: two service instances (two replicas) on one throwaway
// database. A PUT on one is served by POST /map on the other within 1 s, a DELETE likewise; a
// stale If-Match is 412 and an invalid document 422 with nothing stored, whichever replica is
// asked; writes on both at once take turns; with the database stopped, writes are 503
// StoreUnavailable while evaluation goes on, and once it is back a write on one reaches the other
// again; the password never reaches a log line. Skipped without PostgreSQL (required in CI).
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { buildServer } from '../server.js'
import { call, ECHO } from './http-support.js'
import { capturedLog, type CapturedLog } from './log-support.js'
import { describePostgres, startPostgres } from './postgres-support.js'
import type { Options } from '../config/options-schema.js'

t.setTimeout(60000)

async function replica(t: Test, url: string, log = capturedLog()): Promise<{ app: FastifyInstance; log: CapturedLog }> {
  const app = await buildServer({ mappings: [ECHO], logger: log.logger, options: { underPressure: false, errorDetail: 'full', store: { url, resyncMs: 1000 } } as Options })
  t.teardown(() => app.close())
  return { app, log }
}

const put = (app: FastifyInstance, id: string, document: unknown, headers: Record<string, string> = {}) => call(app, { method: 'PUT', url: `/mappings/${id}`, payload: document as object, headers })
const map = (app: FastifyInstance, mapping: string, input: unknown) => call(app, { method: 'POST', url: '/map', payload: { mapping, input } })

/** Milliseconds until `check` holds (polled every 20 ms), or Infinity past `bound`. */
async function within(bound: number, check: () => Promise<boolean>): Promise<number> {
  const began = performance.now()
  while (performance.now() - began < bound) {
    if (await check()) return performance.now() - began
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return Infinity
}

describePostgres(t, () => {
  t.test('two replicas on one database serve the same set', async (t) => {
    const server = await startPostgres(t)
    const a = await replica(t, server.url)
    const b = await replica(t, server.url)

    t.equal((await put(a.app, 'greet', { mapping: { '/text': '/message' } })).statusCode, 201, 'written on A')
    const seen = await within(1000, async () => (await map(b.app, 'greet', { message: 'hi' })).statusCode === 200)
    t.ok(seen <= 1000, `B serves it ${Math.round(seen)} ms later (bound 1 s)`)
    t.strictSame((await map(b.app, 'greet', { message: 'hi' })).data, { text: 'hi', valid: true, errors: [] })
    t.equal((await call(b.app, { method: 'GET', url: '/mappings/greet' })).headers.etag, '"1"', 'B knows its version')

    t.equal((await put(b.app, 'greet', { mapping: { '/shout': '/message' } }, { 'if-match': '"1"' })).statusCode, 200, 'replaced on B')
    const stale = await put(a.app, 'greet', { mapping: {} }, { 'if-match': '"1"' })
    t.equal(stale.statusCode, 412, 'a stale If-Match on A, though A may not have heard of the change yet: the store decides')
    const changed = await within(1000, async () => (await map(a.app, 'greet', { message: 'x' })).data.shout === 'x')
    t.ok(changed <= 1000, `A serves B's version ${Math.round(changed)} ms later`)
    const revisionOf = async (app: FastifyInstance): Promise<string | undefined> => /^mapper_mapping_store_revision (\d+)$/m.exec((await app.inject({ method: 'GET', url: '/metrics' })).body)?.[1]
    t.equal(await revisionOf(a.app), '2', 'A serves revision 2 of the store')
    t.equal(await revisionOf(b.app), '2', 'and so does B')

    const invalid = await put(b.app, 'broken', { mapping: { '/x': { source: 'nope' } } })
    t.equal(invalid.statusCode, 422, 'an invalid document: 422')
    t.equal((await call(a.app, { method: 'GET', url: '/mappings/broken/versions' })).statusCode, 404, 'nothing stored')

    t.equal((await put(a.app, 'user', { mapping: { '/g': { $ref: 'greet' } } })).statusCode, 201)
    await within(1000, async () => (await map(b.app, 'user', {})).statusCode === 200)
    const inUse = await call(b.app, { method: 'DELETE', url: '/mappings/greet' })
    t.equal(inUse.statusCode, 409, 'B refuses to delete what a mapping written on A uses')
    t.strictSame(inUse.data.dependents, ['user'])

    t.equal((await call(a.app, { method: 'DELETE', url: '/mappings/user' })).statusCode, 204, 'deleted on A')
    const gone = await within(1000, async () => (await map(b.app, 'user', {})).statusCode === 404)
    t.ok(gone <= 1000, `B stops serving it ${Math.round(gone)} ms later`)

    // Both at once, new ids: each write sees the other's, and both are served by both.
    const [x, y] = await Promise.all([put(a.app, 'x', { mapping: { '/x': '/x' } }), put(b.app, 'y', { mapping: { '/y': '/y' } })])
    t.strictSame([x.statusCode, y.statusCode], [201, 201])
    for (const app of [a.app, b.app]) {
      t.ok((await within(1000, async () => (await map(app, 'x', {})).statusCode === 200 && (await map(app, 'y', {})).statusCode === 200)) <= 1000, 'both served by each')
    }
    t.equal((await put(a.app, 'echo', { mapping: {} })).data.code, 'ReadOnlyMapping', 'the files\' ids stay read-only')

    // The same version replaced on both at once: one write wins, the other is told it is stale.
    const race = await Promise.all([put(a.app, 'x', { mapping: { '/a': '/x' } }, { 'if-match': '"1"' }), put(b.app, 'x', { mapping: { '/b': '/x' } }, { 'if-match': '"1"' })])
    t.strictSame(race.map((answer) => answer.statusCode).sort(), [200, 412], 'one 200, one 412')
    t.strictSame(((await call(a.app, { method: 'GET', url: '/mappings/x/versions' })).data as Array<{ version: number }>).map((v) => v.version), [2, 1], 'one version written')

    // The database stops: writes 503, evaluation goes on from memory.
    await server.stop()
    const refused = await put(a.app, 'later', { mapping: {} })
    t.equal(refused.statusCode, 503)
    t.equal(refused.data.code, 'StoreUnavailable')
    t.equal((await map(a.app, 'greet', { message: 'still' })).statusCode, 200, 'evaluation goes on')
    t.equal((await map(b.app, 'x', { x: 1 })).statusCode, 200)
    const history = await call(b.app, { method: 'GET', url: '/mappings/x/versions' })
    t.strictSame([history.statusCode, history.data.code], [503, 'StoreUnavailable'], 'the history needs the store: 503')
    t.equal((await call(b.app, { method: 'GET', url: '/mappings/x' })).statusCode, 200, 'GET /mappings/{id} answers from memory')
    for (const log of [a.log, b.log]) t.notOk(JSON.stringify(log.lines()).includes(server.password), 'the password is in no log line')
    const metrics = (await a.app.inject({ method: 'GET', url: '/metrics' })).body
    t.match(metrics, /mapper_mapping_writes_total\{operation="put",result="unavailable"\} 1/)
  })

  t.test('a replica started later serves what the store holds; one that cannot reach it does not start', async (t) => {
    const server = await startPostgres(t)
    const a = await replica(t, server.url)
    t.equal((await put(a.app, 'kept', { mapping: { '/k': '/k' } })).statusCode, 201)
    const late = await replica(t, server.url)
    t.equal((await map(late.app, 'kept', { k: 1 })).statusCode, 200, 'served from start-up')
    await server.stop()
    const log = capturedLog()
    await t.rejects(buildServer({ mappings: [ECHO], logger: log.logger, options: { store: { url: server.url } } as Options }), { name: 'StoreUnavailableError' }, 'a store that cannot be reached fails the start')
    t.notOk(JSON.stringify(log.lines()).includes(server.password), 'without the password in the log')
  })
})
