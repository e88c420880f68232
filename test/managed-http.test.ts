// Managed mappings over HTTP with the directory store (options.store.url file:///…): the write
// namespace answers 404 without a store and serves PUT, GET, DELETE and the versions with one;
// preconditions (If-Match, If-None-Match), validation (422 with the report, nothing stored), the
// files' ids read-only, dependents named on a write that would break them, claims on writes, the
// ETag of a read, metrics and logs of every change, and a restart that serves what was stored.
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { buildServer } from '../server.js'
import { Reloader } from '../service/reloader.js'
import { bearer, call, ECHO, SECRET } from './http-support.js'
import { capturedLog, type CapturedLog } from './log-support.js'
import { tempTree } from './startup-support.js'
import type { Options } from '../config/options-schema.js'

const GREET = { mapping: { '/text': '/message' }, examples: [{ input: { message: 'hi' }, output: { text: 'hi' } }] }

async function managed(t: Test, { dir = tempTree(t).root, options = {}, store = {}, log = capturedLog() } = {}): Promise<{ app: FastifyInstance; dir: string; log: CapturedLog }> {
  const app = await buildServer({ mappings: [ECHO], logger: log.logger, options: { underPressure: false, store: { url: `file://${dir}`, ...store }, ...options } as Options })
  t.teardown(() => app.close())
  return { app, dir, log }
}

const put = (app: FastifyInstance, id: string, document: unknown, headers: Record<string, string> = {}) =>
  call(app, { method: 'PUT', url: `/mappings/${encodeURIComponent(id)}`, payload: document as object, headers })
const map = (app: FastifyInstance, mapping: string, input: unknown) => call(app, { method: 'POST', url: '/map', payload: { mapping, input } })

t.test('without a store the write namespace answers 404, as 0.3 does', async (t) => {
  const app = await buildServer({ mappings: [ECHO], options: { underPressure: false } })
  t.teardown(() => app.close())
  for (const method of ['PUT', 'DELETE', 'POST', 'PATCH'] as const) {
    const response = await call(app, { method, url: '/mappings/echo', payload: {} })
    t.equal(response.statusCode, 404, `${method} /mappings/echo`)
    t.equal(response.data.code, 'NotFound')
  }
  t.equal((await call(app, { method: 'GET', url: '/mappings/echo/versions' })).statusCode, 404, 'no history routes')
  const openapi = (await call(app, { method: 'GET', url: '/openapi.json' })).data
  t.notOk(openapi.paths['/mappings/{id}'], 'the OpenAPI document has no write operations')
})

t.test('PUT creates, replaces and serves; GET reads with its ETag; versions list the history', async (t) => {
  const { app, log } = await managed(t)
  const created = await put(app, 'greet', GREET)
  t.equal(created.statusCode, 201, 'a new id: 201')
  t.strictSame(created.data, { $id: 'greet', version: 1 })
  t.equal(created.headers.etag, '"1"')
  t.equal(created.headers.location, '/mappings/greet')
  t.strictSame((await map(app, 'greet', { message: 'hello' })).data, { text: 'hello', valid: true, errors: [] }, 'POST /map serves it at once')

  const got = await call(app, { method: 'GET', url: '/mappings/greet' })
  t.equal(got.headers.etag, '"1"', 'GET carries the version as ETag')
  t.strictSame(got.data, { $id: 'greet', ...GREET }, 'GET answers the document as stored, its $id filled in first')
  t.equal((await call(app, { method: 'GET', url: '/mappings/greet', headers: { 'if-none-match': '"1"' } })).statusCode, 304, 'unchanged: 304')
  t.equal((await call(app, { method: 'GET', url: '/mappings/greet', headers: { 'if-none-match': 'W/"1"' } })).statusCode, 304, 'a weak tag matches too (weak comparison)')
  t.equal((await call(app, { method: 'GET', url: '/mappings/greet', headers: { 'if-none-match': '"2"' } })).statusCode, 200, 'another version: 200')
  t.ok((await call(app, { method: 'GET', url: '/mappings' })).data.greet, 'GET /mappings lists it')

  const replaced = await put(app, 'greet', { $id: 'greet', mapping: { '/shout': '/message' } }, { 'if-match': '"1"' })
  t.equal(replaced.statusCode, 200, 'an existing id: 200')
  t.strictSame(replaced.data, { $id: 'greet', version: 2 })
  t.strictSame((await map(app, 'greet', { message: 'hey' })).data, { shout: 'hey', valid: true, errors: [] }, 'the new version is served')

  const versions = (await call(app, { method: 'GET', url: '/mappings/greet/versions' })).data as Array<Record<string, unknown>>
  t.strictSame(versions.map((v) => v.version), [2, 1], 'newest first')
  t.match(versions[0], { subject: null, deleted: false, digest: /^[0-9a-f]{64}$/, created: /^\d{4}-\d\d-\d\dT/ })
  const first = await call(app, { method: 'GET', url: '/mappings/greet/versions/1' })
  t.strictSame(first.data, { $id: 'greet', ...GREET }, 'an older version as written')
  t.equal((await call(app, { method: 'GET', url: '/mappings/greet/versions/9' })).statusCode, 404)
  t.equal((await call(app, { method: 'GET', url: '/mappings/greet/versions/x' })).statusCode, 400, 'a version that is not a number: 400')

  const logged = log.lines().filter((line) => String(line.msg).startsWith('managed mapping written'))
  t.match(logged, [{ mappingId: 'greet', version: 1, operation: 'put' }, { mappingId: 'greet', version: 2, operation: 'put' }], 'each change logged: id, version, operation')
  t.notOk(JSON.stringify(log.lines()).includes('/shout'), 'never the document')

  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
  t.match(metrics, /mapper_mapping_writes_total\{operation="put",result="created"\} 1/)
  t.match(metrics, /mapper_mapping_writes_total\{operation="put",result="replaced"\} 1/)
})

t.test('preconditions: If-Match and If-None-Match', async (t) => {
  const { app } = await managed(t)
  t.equal((await put(app, 'a', GREET, { 'if-match': '"1"' })).statusCode, 412, 'If-Match on an id never stored: 412')
  t.equal((await put(app, 'a', GREET, { 'if-none-match': '*' })).statusCode, 201, 'If-None-Match: * creates')
  const again = await put(app, 'a', GREET, { 'if-none-match': '*' })
  t.equal(again.statusCode, 412, 'If-None-Match: * on an existing id: 412')
  t.equal(again.data.code, 'PreconditionFailed')
  t.equal((await put(app, 'a', GREET, { 'if-match': '"2"' })).statusCode, 412, 'a stale If-Match: 412')
  t.equal((await put(app, 'a', GREET, { 'if-match': 'W/"1"' })).statusCode, 412, 'a weak tag never matches If-Match')
  t.equal((await put(app, 'a', GREET, { 'if-match': '"7", "1"' })).statusCode, 200, 'a list holding the current tag matches')
  t.equal((await put(app, 'a', GREET, { 'if-match': '2' })).statusCode, 200, 'a bare version number is taken as its tag')
  t.equal((await put(app, 'a', GREET, { 'if-match': '2' })).statusCode, 412, 'and compared as one')
  t.equal((await call(app, { method: 'DELETE', url: '/mappings/a', headers: { 'if-match': '"1"' } })).statusCode, 412, 'a stale If-Match on DELETE: 412')
  t.equal((await call(app, { method: 'DELETE', url: '/mappings/a', headers: { 'if-match': '"3"' } })).statusCode, 204, 'the current one deletes')
  t.equal((await map(app, 'a', {})).statusCode, 404, 'deleted: POST /map answers 404')
  t.equal((await call(app, { method: 'DELETE', url: '/mappings/a' })).statusCode, 404, 'deleting again: 404')
  const recreated = await put(app, 'a', GREET)
  t.strictSame(recreated.data, { $id: 'a', version: 5 }, 'versions go on across a deletion (the deletion was version 4)')
  const versions = (await call(app, { method: 'GET', url: '/mappings/a/versions' })).data as Array<Record<string, unknown>>
  t.match(versions[1], { version: 4, deleted: true, digest: null })
})

t.test('an invalid document: 422 with the report, nothing stored', async (t) => {
  const { app } = await managed(t)
  const invalid = await put(app, 'bad', { mapping: { '/x': { source: 'not a pointer' } } })
  t.equal(invalid.statusCode, 422)
  t.equal(invalid.data.code, 'InvalidMappingDocument')
  t.equal(invalid.data.report.valid, false)
  const failing = await put(app, 'ex', { mapping: { '/x': '/y' }, examples: [{ input: { y: 1 }, output: { x: 2 } }] })
  t.equal(failing.statusCode, 422, 'a failing example: 422')
  t.match(failing.data.report.errors, [{ rule: 'EXAMPLE-1' }])
  t.equal((await put(app, 'mismatch', { $id: 'other', mapping: {} })).statusCode, 400, 'a $id that is not the path id: 400')
  t.equal((await call(app, { method: 'GET', url: '/mappings/bad/versions' })).statusCode, 404, 'nothing stored')
  t.equal((await call(app, { method: 'GET', url: '/mappings/ex/versions' })).statusCode, 404, 'nothing stored')
  t.equal((await put(app, 'x', [1, 2])).statusCode, 400, 'a body that is not an object: 400')
  t.equal((await put(app, 'nul\u0000id', { mapping: {} })).statusCode, 400, 'an id no store can keep: 400')
})

t.test('the ids of the files are read-only; other stored documents\' ids are taken; the store has a bound', async (t) => {
  const { app } = await managed(t, { store: { maxMappings: 2 } })
  const fromFiles = await put(app, 'echo', { mapping: { '/x': '/' } })
  t.equal(fromFiles.statusCode, 409, 'an id of the files: 409')
  t.equal(fromFiles.data.code, 'ReadOnlyMapping')
  t.equal((await call(app, { method: 'DELETE', url: '/mappings/echo' })).data.code, 'ReadOnlyMapping', 'and cannot be deleted')
  t.equal((await put(app, 'pair', { mappings: { inner: { $id: 'inner', mapping: {} }, pair: { $id: 'pair', mapping: { '/i': { $ref: 'inner' } } } } })).statusCode, 201, 'a compound document')
  t.equal((await map(app, 'inner', {})).statusCode, 200, 'its members are served')
  const taken = await put(app, 'inner', { mapping: {} })
  t.equal(taken.statusCode, 409, 'a member id of another stored document: 409')
  t.equal(taken.data.code, 'MappingConflict')
  const member = await call(app, { method: 'DELETE', url: '/mappings/inner' })
  t.equal(member.statusCode, 409, 'deleting a member of a stored compound document: 409')
  t.match(member.data.message, /a member of the stored mapping "pair"/)
  t.equal((await put(app, 'second', { mapping: {} })).statusCode, 201)
  const full = await put(app, 'third', { mapping: {} })
  t.equal(full.statusCode, 409)
  t.equal(full.data.code, 'StoreFull')
})

t.test('a write or deletion that breaks another mapping is refused naming it', async (t) => {
  const { app } = await managed(t)
  t.equal((await put(app, 'base', { mapping: { '/a': '/a' } })).statusCode, 201)
  t.equal((await put(app, 'child', { $extend: 'base', mapping: { '/b': '/b' } })).statusCode, 201)
  t.equal((await put(app, 'user', { mapping: { '/c': { $ref: 'base' } } })).statusCode, 201)
  t.equal((await put(app, 'named', { mapping: { '/d': { source: '/x', each: 'base' } } })).statusCode, 201)
  t.equal((await put(app, 'grandchild', { $extend: 'child', mapping: { '/e': '/e' } })).statusCode, 201)
  const deleted = await call(app, { method: 'DELETE', url: '/mappings/base' })
  t.equal(deleted.statusCode, 409, 'deleting what others use: 409')
  t.equal(deleted.data.code, 'MappingInUse')
  t.strictSame([...deleted.data.dependents].sort(), ['child', 'grandchild', 'named', 'user'], 'every mapping it would break is named: extending it (directly or not), $ref, a name')
  const replaced = await put(app, 'base', { mapping: { '/a': '/a' }, $extend: 'nowhere' })
  t.equal(replaced.statusCode, 422, 'a document of its own that is invalid is its own fault: 422')
  const pairings = await put(app, 'user', { mapping: { '/c': { $ref: 'gone' } } })
  t.equal(pairings.statusCode, 422, 'a $ref to nothing: 422')
  t.ok((await map(app, 'base', { a: 1 })).statusCode === 200, 'still served')
  const shrink = await put(app, 'child', { mapping: { '/b': '/b' } })
  t.equal(shrink.statusCode, 200, 'a write that drops its own $extend breaks nobody')
  for (const id of ['user', 'named', 'grandchild']) t.equal((await call(app, { method: 'DELETE', url: `/mappings/${id}` })).statusCode, 204, `${id} deletes: nobody uses it`)
  t.equal((await call(app, { method: 'DELETE', url: '/mappings/child' })).statusCode, 204)
  t.equal((await call(app, { method: 'DELETE', url: '/mappings/base' })).statusCode, 204, 'and then base')
})

t.test('writes need the claims of options.mappings.write.claims', async (t) => {
  const { app } = await managed(t, { options: { auth: { secret: SECRET }, mappings: { write: { claims: { role: 'publisher' } } } } })
  t.equal((await put(app, 'g', GREET)).statusCode, 401, 'no token: 401')
  t.equal((await put(app, 'g', GREET, bearer({ sub: 'reader' }))).statusCode, 403, 'without the claims: 403')
  const written = await put(app, 'g', GREET, bearer({ sub: 'alice', role: 'publisher' }))
  t.equal(written.statusCode, 201)
  const versions = (await call(app, { method: 'GET', url: '/mappings/g/versions', headers: bearer({ sub: 'reader' }) })).data as Array<Record<string, unknown>>
  t.equal(versions[0]!.subject, 'alice', 'the version names who wrote it')
  t.equal((await call(app, { method: 'DELETE', url: '/mappings/g', headers: bearer({ sub: 'reader' }) })).statusCode, 403, 'deletion too')
})

t.test('auth off: start-up warns that anyone can write', async (t) => {
  const { log } = await managed(t)
  t.ok(log.lines().some((line) => line.level === 40 && String(line.msg).includes('anyone who can reach this service can change the mappings')))
})

t.test('writes at once: each validation finishes on the threads of the set it began on, though a write replaced that set', async (t) => {
  const { app } = await managed(t)
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => put(app, `m${i}`, { mapping: { '/v': '/v' }, examples: [{ input: { v: i }, output: { v: i } }] })))
  t.strictSame(answers.map((answer) => answer.statusCode), [201, 201, 201, 201, 201, 201], JSON.stringify(answers.map((answer) => answer.data)))
  for (let i = 0; i < 6; i++) t.equal((await map(app, `m${i}`, { v: i })).data.v, i)
})

t.test('a reload of the files keeps the stored mappings; a file that takes a stored id wins, with a warning', async (t) => {
  let files: object[] = [ECHO]
  const reloader = new Reloader(() => files as never)
  const log = capturedLog()
  const app = await buildServer({ mappings: files as never, reloader, logger: log.logger, options: { underPressure: false, store: { url: `file://${tempTree(t).root}` } } as Options })
  t.teardown(() => app.close())
  t.equal((await put(app, 'stored', { mapping: { '/s': '/s' } })).statusCode, 201)
  t.ok((await call(app, { method: 'GET', url: '/openapi.json' })).data.paths['/map/stored'], 'the OpenAPI document has the stored mapping\'s operation')
  files = [ECHO, { $id: 'added', mapping: { '/a': '/a' } }]
  t.match(await reloader.reload(), { ok: true })
  t.equal((await map(app, 'stored', { s: 1 })).data.s, 1, 'the stored mapping is still served after a reload')
  t.equal((await map(app, 'added', { a: 2 })).data.a, 2, 'and the file added with it')
  files = [ECHO, { $id: 'stored', mapping: { '/f': '/f' } }]
  t.match(await reloader.reload(), { ok: true })
  t.equal((await map(app, 'stored', { f: 3 })).data.f, 3, 'a file with a stored id wins')
  const read = await call(app, { method: 'GET', url: '/mappings/stored' })
  t.strictSame([read.data, read.headers.etag], [{ $id: 'stored', mapping: { '/f': '/f' } }, undefined], 'GET answers the file\'s, without an ETag')
  t.ok(log.lines().some((line) => line.level === 40 && /mapping "stored" of the mapping store .* is not served/.test(String(line.msg))), 'with a warning')
  t.equal((await put(app, 'stored', { mapping: {} })).data.code, 'ReadOnlyMapping', 'and the id is the files\' now')
  t.equal((await map(app, 'added', {})).statusCode, 404, 'a file the reload dropped is gone')
})

t.test('a restart serves what was stored', async (t) => {
  const dir = tempTree(t).root
  const first = await managed(t, { dir })
  t.equal((await put(first.app, 'kept', GREET)).statusCode, 201)
  t.equal((await put(first.app, 'gone', GREET)).statusCode, 201)
  t.equal((await call(first.app, { method: 'DELETE', url: '/mappings/gone' })).statusCode, 204)
  await first.app.close()
  const second = await managed(t, { dir })
  t.strictSame((await map(second.app, 'kept', { message: 'still' })).data, { text: 'still', valid: true, errors: [] })
  t.equal((await map(second.app, 'gone', {})).statusCode, 404)
  t.strictSame(((await call(second.app, { method: 'GET', url: '/mappings/kept/versions' })).data as Array<{ version: number }>).map((v) => v.version), [1])
})
