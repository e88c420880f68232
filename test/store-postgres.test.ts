// The PostgreSQL mapping store (service/store/postgres.ts) against a real, throwaway PostgreSQL
// (test/postgres-support.ts): one cluster for the file, each test in a schema of its own (the URL's
// search_path), so each meets an empty store. open() migrates once however many replicas start at
// once; versions are numbered per id across deletions and pruned to keepVersions; a write is one
// transaction under the store-wide lock (a change that throws leaves nothing, two stores' writes
// take turns); watch hears another store's write, and hears again after its connection is killed;
// with the server stopped every call fails with StoreUnavailableError within a bound, and the
// password is in no message and no log line. Skipped without PostgreSQL, except under
// MAPPER_REQUIRE_SYSTEM_SERVICES=1 (.ci/run), where that is a failure.
import { createHash } from 'node:crypto'
import t, { type Test } from 'tap'
import { POSTGRES_LISTENER_APPLICATION_NAME, POSTGRES_TIMEOUTS, PostgresStore } from '../service/store/postgres.js'
import { StoreUnavailableError, type StoredDocument, type StoreLog } from '../service/store/types.js'
import type { PgClient } from '../support/optional.js'
import { REDACTED } from '../support/redact.js'
import { settlesWithin } from './http-support.js'
import { connectPostgres, describePostgres, startPostgres, type Postgres } from './postgres-support.js'
import { waitUntil } from './startup-support.js'

t.setTimeout(60000)

interface Line {
  readonly level: 'info' | 'warn'
  readonly message: string
}

/** A StoreLog that keeps its lines. */
function memoryLog(): StoreLog & { readonly lines: Line[]; text(): string } {
  const lines: Line[] = []
  return {
    lines,
    info: (message) => lines.push({ level: 'info', message }),
    warn: (message) => lines.push({ level: 'warn', message }),
    text: () => lines.map((line) => line.message).join('\n'),
  }
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** The time a call may take against a stopped server: the connect timeout, and slack for a loaded machine. */
const DOWN_BOUND_MS = POSTGRES_TIMEOUTS.connectMs + 2000

describePostgres(t, () => {
  t.test('PostgresStore against a throwaway PostgreSQL', async (t) => {
    const server = await startPostgres(t)
    const admin = await connectPostgres(server.url)
    t.teardown(() => admin.end().catch(() => undefined))
    let schemas = 0

    /** A fresh schema, and the server's URL with it as the connection's default (search_path). */
    async function freshUrl(): Promise<{ url: string; schema: string }> {
      const schema = `store_test_${++schemas}`
      await admin.query(`CREATE SCHEMA ${schema}`)
      return { url: `${server.url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`, schema }
    }

    /** A store on `url`, closed at the end of `t`. */
    function storeOf(t: Test, url: string, options: { keepVersions?: number; resyncMs?: number } = {}) {
      const log = memoryLog()
      const store = new PostgresStore(url, { keepVersions: options.keepVersions ?? 10, resyncMs: options.resyncMs ?? 60000, log })
      t.teardown(() => store.close())
      return { store, log }
    }

    async function openStore(t: Test, url: string, options: { keepVersions?: number; resyncMs?: number } = {}) {
      const opened = storeOf(t, url, options)
      await opened.store.open()
      return opened
    }

    const listeners = async (): Promise<number> => {
      const { rows } = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND query = $2', [POSTGRES_LISTENER_APPLICATION_NAME, 'LISTEN mapper_mappings'])
      return Number(rows[0]!.n)
    }

    /** Two stores on a fresh schema, B watching (its calls counted) and listening already. */
    async function watchingPair(t: Test) {
      const { url } = await freshUrl()
      const a = (await openStore(t, url)).store
      const b = await openStore(t, url)
      const calls = { count: 0 }
      b.store.watch(() => calls.count++)
      await waitUntil('B to listen', async () => (await listeners()) === 1, 5000)
      return { url, a, b, calls }
    }

    /** Resolves with the ms it took `count()` to pass `above`; fails after `ms`. */
    async function calledWithin(what: string, count: () => number, above: number, ms: number): Promise<number> {
      const began = performance.now()
      await waitUntil(what, () => count() > above, ms)
      return performance.now() - began
    }

    t.test('the URL is redacted; a wrong one or wrong limits are refused; nothing works before open() or after close()', async (t) => {
      const log = memoryLog()
      const store = new PostgresStore('postgres://mapper:s3cret-p%40ss@db.example:5432/mappings?sslmode=require', { keepVersions: 3, resyncMs: 1000, log })
      t.equal(store.description, `postgres://${REDACTED}@db.example:5432/mappings?sslmode=${REDACTED}`, 'description: the URL, userinfo and query values redacted')
      const calls: Array<() => Promise<unknown>> = [() => store.read(), () => store.write(async () => 1), () => store.versions('a'), () => store.version('a', 1)]
      for (const call of calls) {
        await t.rejects(call(), { name: 'StoreUnavailableError', message: /^PostgreSQL store postgres:\/\/REDACTED@db\.example:5432\/mappings\?sslmode=REDACTED unavailable: it is not open$/ })
      }
      await store.close()
      await t.rejects(store.open(), { name: 'StoreUnavailableError', message: /it is closed$/ }, 'a closed store does not open')
      t.throws(() => new PostgresStore('mysql://u:s3cret@h/db', { keepVersions: 3, resyncMs: 1000, log }), { message: 'The PostgreSQL store\'s URL must be a postgres:// or postgresql:// URL, not a mysql: one' })
      t.throws(() => new PostgresStore('u:s3cret@h/db', { keepVersions: 3, resyncMs: 1000, log }), { message: 'The PostgreSQL store\'s URL must be a postgres:// or postgresql:// URL, not a u: one' }, 'no scheme: nothing of it printed')
      t.throws(() => new PostgresStore('postgres://u:s3cret@h:port/db', { keepVersions: 3, resyncMs: 1000, log }), { message: 'The PostgreSQL store\'s URL (postgres://REDACTED@h:port/db) is not a URL' }, 'not a URL: redacted by its shape')
      t.throws(() => new PostgresStore(server.url, { keepVersions: 0, resyncMs: 1000, log }), { message: 'keepVersions must be a positive integer, not 0' })
      t.throws(() => new PostgresStore(server.url, { keepVersions: 3, resyncMs: 0, log }), { message: 'resyncMs must be a positive number of milliseconds, not 0' })
      t.same(log.lines, [])

      const wrong = 'wrong-pw-7f3e/never@logged'
      const refused = new PostgresStore(server.url.replace(encodeURIComponent(server.password), encodeURIComponent(wrong)), { keepVersions: 3, resyncMs: 1000, log })
      const error = await refused.open().then(() => undefined, (e: unknown) => e as Error)
      t.match(error, { name: 'StoreUnavailableError', message: /^PostgreSQL store postgres:\/\/REDACTED@127\.0\.0\.1:\d+\/postgres unavailable: password authentication failed for user "mapper"$/ }, 'a wrong password: refused, the URL redacted')
      t.notOk([wrong, encodeURIComponent(wrong)].some((secret) => error!.message.includes(secret)), 'the password is not in the message')
    })

    t.test('open() creates the schema; two stores opening at once both succeed; a later open changes nothing', async (t) => {
      const { url, schema } = await freshUrl()
      const a = storeOf(t, url)
      const b = storeOf(t, url)
      await Promise.all([a.store.open(), b.store.open()])
      const tables = await admin.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [schema])
      t.same(tables.rows.map((row) => row.table_name), ['mapper_mapping_versions', 'mapper_schema_migrations', 'mapper_store_revision'], 'the tables, in the connection\'s default schema')
      const columns = await admin.query("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'mapper_mapping_versions' AND column_name = 'text'", [schema])
      t.same(columns.rows, [{ column_name: 'text', data_type: 'text' }], 'the document is kept as text (jsonb would reorder its keys)')
      const migrations = async () => (await admin.query(`SELECT version, applied_at FROM ${schema}.mapper_schema_migrations ORDER BY version`)).rows
      const applied = await migrations()
      t.same(applied.map((row) => row.version), [1], 'migration 1 applied once')
      t.same((await admin.query(`SELECT revision FROM ${schema}.mapper_store_revision`)).rows, [{ revision: '0' }], 'one revision row, at 0')
      const c = storeOf(t, url)
      await c.store.open()
      await c.store.open()
      t.same(await migrations(), applied, 'a later open, and a second open of the same store, apply nothing')
      t.same((await admin.query(`SELECT revision FROM ${schema}.mapper_store_revision`)).rows, [{ revision: '0' }], 'and add no revision row')
      const state = await c.store.read()
      t.equal(state.revision, 0, 'an empty store: revision 0')
      t.equal(state.documents.size, 0, 'no documents')
    })

    t.test('put, then read, versions and version', async (t) => {
      const { url } = await freshUrl()
      const { store } = await openStore(t, url)
      const text = '{"$id":"a","mapping":{"/x":"/y"}}'
      const before = Date.now()
      const { result, revision } = await store.write(async (tx) => {
        t.equal(tx.state.revision, 0, 'the transaction sees the state under the lock')
        return tx.put('a', text, 'alice')
      })
      t.equal(revision, 1, 'the revision after the write')
      t.match(result, { id: 'a', version: 1, subject: 'alice', digest: sha256(text), text })
      const created = Date.parse(result.created)
      t.equal(new Date(created).toISOString(), result.created, 'created is ISO 8601, UTC')
      t.ok(created >= before - 2000 && created <= Date.now() + 2000, 'created is the time of the write')
      const state = await store.read()
      t.equal(state.revision, 1)
      t.same([...state.documents.entries()], [['a', result]], 'read(): the current version, as put() returned it')
      t.same(await store.versions('a'), [{ version: 1, created: result.created, subject: 'alice', digest: sha256(text), deleted: false }], 'versions()')
      t.same(await store.version('a', 1), result, 'version()')
      t.equal(await store.version('a', 2), undefined, 'a version never written')
      t.equal(await store.version('a', 0), undefined, 'version 0')
      t.equal(await store.version('a', 1.5), undefined, 'not an integer')
      t.equal(await store.version('a', 2 ** 40), undefined, 'beyond the column')
      t.equal(await store.version('b', 1), undefined, 'an id never written')
      t.same(await store.versions('b'), [], 'versions() of an id never written: empty')
      const { result: second } = await store.write(async (tx) => tx.put('b', '{"$id":"b"}', null))
      t.equal(second.subject, null, 'no subject')
      t.same((await store.versions('b'))[0], { version: 1, created: second.created, subject: null, digest: sha256('{"$id":"b"}'), deleted: false })
    })

    t.test('versions are numbered per id across deletions; the revision grows by one per version written', async (t) => {
      const { url } = await freshUrl()
      const { store } = await openStore(t, url)
      const put = (id: string, n: number) => store.write(async (tx) => tx.put(id, `{"n":${n}}`, 'alice'))
      t.same([(await put('a', 1)).result.version, (await put('a', 2)).result.version], [1, 2])
      const deleted = await store.write(async (tx) => {
        t.ok(tx.state.documents.has('a'), 'current before the deletion')
        return tx.delete('a', 'bob')
      })
      t.match(deleted, { result: { version: 3, subject: 'bob', digest: null, deleted: true }, revision: 3 }, 'a deletion is a version')
      t.notOk((await store.read()).documents.has('a'), 'a deleted id is not current')
      t.equal(await store.version('a', 3), undefined, 'version() of a deletion: undefined')
      t.match(await store.version('a', 2), { version: 2, text: '{"n":2}' }, 'an older version is still there')
      await t.rejects(store.write(async (tx) => tx.delete('a', 'bob')), { name: 'Error', message: 'The store holds no current document "a" to delete' }, 'deleting what is deleted is refused')
      await t.rejects(store.write(async (tx) => tx.delete('never', 'bob')), { message: 'The store holds no current document "never" to delete' }, 'and what was never written')
      t.equal((await store.read()).revision, 3, 'a refused deletion changes nothing')
      const again = await put('a', 4)
      t.match(again, { result: { version: 4, text: '{"n":4}' }, revision: 4 }, 'written again: version 4, after the deletion')
      t.same((await store.versions('a')).map((v) => [v.version, v.deleted, v.digest === null, v.subject]), [[4, false, false, 'alice'], [3, true, true, 'bob'], [2, false, false, 'alice'], [1, false, false, 'alice']], 'newest first')
      const both = await store.write(async (tx) => {
        const b = await tx.put('b', '{"n":1}', null)
        const a = await tx.put('a', '{"n":5}', null)
        return [a.version, b.version]
      })
      t.same(both, { result: [5, 1], revision: 6 }, 'two versions in one write: the revision grows by two')
      const none = await store.write(async (tx) => tx.state.documents.size)
      t.same(none, { result: 2, revision: 6 }, 'a write that writes nothing leaves the revision')
    })

    t.test('keepVersions: older versions are removed as a write adds one', async (t) => {
      const { url } = await freshUrl()
      const { store } = await openStore(t, url, { keepVersions: 3 })
      for (let n = 1; n <= 5; n++) await store.write(async (tx) => tx.put('a', `{"n":${n}}`, null))
      await store.write(async (tx) => tx.put('other', '{}', null))
      t.same((await store.versions('a')).map((v) => v.version), [5, 4, 3], 'three kept of five')
      t.equal(await store.version('a', 2), undefined, 'a pruned version is gone')
      t.match(await store.version('a', 3), { text: '{"n":3}' }, 'the oldest kept')
      await store.write(async (tx) => tx.delete('a', null))
      t.same((await store.versions('a')).map((v) => v.version), [6, 5, 4], 'a deletion counts as a version')
      await store.write(async (tx) => tx.put('a', '{"n":7}', null))
      t.same((await store.versions('a')).map((v) => v.version), [7, 6, 5], 'numbering goes on from the deletion')
      t.same((await store.versions('other')).map((v) => v.version), [1], 'other ids are untouched')
    })

    t.test('a write whose change throws, or whose statement failed, leaves nothing', async (t) => {
      const { url } = await freshUrl()
      const { store } = await openStore(t, url)
      await store.write(async (tx) => tx.put('kept', '{"n":1}', null))
      const boom = new Error('the change failed')
      let caught: unknown
      try {
        await store.write(async (tx) => {
          await tx.put('x', '{"n":1}', null)
          await tx.put('kept', '{"n":2}', null)
          throw boom
        })
      } catch (error) {
        caught = error
      }
      t.equal(caught, boom, 'the change\'s own error, unchanged')
      const state = await store.read()
      t.equal(state.revision, 1, 'the revision is as before')
      t.same([...state.documents.keys()], ['kept'], 'nothing of the change was kept')
      t.same((await store.versions('kept')).map((v) => v.version), [1])
      t.same(await store.versions('x'), [])

      // A failed statement aborts the transaction; a change that swallows it must not be told it committed.
      let swallowed: unknown
      await t.rejects(
        store.write(async (tx) => {
          await tx.put('y', '{"n":1}', null)
          await tx.put('nul\u0000', '{"n":1}', null).catch((error: unknown) => (swallowed = error))
          return 'done'
        }),
        { name: 'StoreUnavailableError' },
        'a statement that failed inside the change fails the write, even when the change went on'
      )
      t.type(swallowed, StoreUnavailableError, 'the failed put rejected with StoreUnavailableError')
      t.same(await store.versions('y'), [], 'nothing of it was kept')

      let late: Promise<StoredDocument> | undefined
      await store.write(async (tx) => {
        late = new Promise((resolve) => setTimeout(resolve, 50)).then(() => tx.put('late', '{}', null))
        return undefined
      })
      await t.rejects(late!, { message: /^The store transaction has ended/ }, 'a put after the change resolved is refused')
      t.same(await store.versions('late'), [])
      t.equal((await store.read()).revision, 1)
      await t.rejects(store.write(async () => store.write(async (tx) => tx.put('nested', '{}', null))), { message: /^write\(\) was called inside a change of the same store/ }, 'a write inside a change is refused, not left waiting for itself')
      t.same(await store.versions('nested'), [])
      const after = await store.write(async (tx) => tx.put('z', '{}', null))
      t.equal(after.revision, 2, 'and the store goes on')
    })

    t.test('two stores\' writes take turns: the second sees the first\'s change', async (t) => {
      const { url } = await freshUrl()
      const a = (await openStore(t, url)).store
      const b = (await openStore(t, url)).store
      const events: string[] = []
      let entered!: () => void
      const aEntered = new Promise<void>((resolve) => (entered = resolve))
      const first = a.write(async (tx) => {
        events.push('A in')
        await tx.put('first', '{"by":"A"}', 'a')
        entered()
        await pause(300)
        events.push('A out')
        return tx.state.revision
      })
      await aEntered
      const second = b.write(async (tx) => {
        events.push('B in')
        t.ok(tx.state.documents.has('first'), 'B\'s transaction sees A\'s document')
        t.equal(tx.state.revision, 1, 'and A\'s revision')
        await tx.put('second', '{"by":"B"}', 'b')
        return tx.state.revision
      })
      const [one, two] = await Promise.all([first, second])
      t.same(events, ['A in', 'A out', 'B in'], 'B\'s change ran once A\'s had committed')
      t.same([one, two], [{ result: 0, revision: 1 }, { result: 1, revision: 2 }])
      // And both at once from each store, ten writes in all: each raises the revision by one, none is lost.
      const writes = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).write(async (tx) => tx.put(`n${i}`, `{"i":${i}}`, null)))
      const revisions = (await Promise.all(writes)).map((w) => w.revision).sort((x, y) => x - y)
      t.same(revisions, [3, 4, 5, 6, 7, 8, 9, 10, 11, 12], 'every write got a revision of its own')
      t.equal((await a.read()).documents.size, 12)
    })

    t.test('watch: store B is told of store A\'s write within a second; and on every resync', async (t) => {
      const { url, a, b, calls: watched } = await watchingPair(t)
      const calls = (): number => watched.count
      const before = calls()
      await a.write(async (tx) => tx.put('a', '{}', null))
      const took = await calledWithin('B told of A\'s write', calls, before, 1000)
      t.pass(`B was told in ${Math.round(took)} ms`)
      t.same(b.log.lines, [], 'nothing logged')

      const c = storeOf(t, url, { resyncMs: 100 })
      let resyncs = 0
      c.store.watch(() => resyncs++)
      await c.store.open()
      await calledWithin('the periodic resync', () => resyncs, 2, 2000)
      t.pass('watch calls back every resyncMs without a write')
    })

    t.test('the listening connection killed: one warning, a reconnect, a resync, and notifications again', async (t) => {
      const { a, b, calls: watched } = await watchingPair(t)
      const calls = (): number => watched.count
      const killed = await admin.query('SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = $1', [POSTGRES_LISTENER_APPLICATION_NAME])
      t.same(killed.rows, [{ killed: true }], 'B\'s listening connection terminated')
      const before = calls()
      await calledWithin('the resync after the reconnect', calls, before, 5000)
      t.match(b.log.lines, [
        { level: 'warn', message: `PostgreSQL store ${b.store.description}: the connection that listens for changes failed (terminating connection due to administrator command); reconnecting` },
        { level: 'info', message: `PostgreSQL store ${b.store.description}: listening for changes again` },
      ], 'one warning for the loss, one line for its end')
      t.equal(b.log.lines.length, 2)
      await waitUntil('B to listen again', async () => (await listeners()) === 1, 5000)
      const later = calls()
      await a.write(async (tx) => tx.put('a', '{}', null))
      await calledWithin('B told of A\'s write after the reconnect', calls, later, 1000)
      t.pass('notifications arrive again')
      t.notOk(b.log.text().includes(server.password) || b.log.text().includes(encodeURIComponent(server.password)), 'no password in the log')
    })

    t.test('a write\'s connection killed while its change runs: StoreUnavailableError, nothing kept, the next write works', async (t) => {
      const { url } = await freshUrl()
      const { store } = await openStore(t, url)
      await store.write(async (tx) => tx.put('kept', '{}', null))
      const write = store.write(async (tx) => {
        await tx.put('lost', '{}', null)
        // Between two statements: the lent client has no query running, so the loss comes as an 'error' event.
        const killed = await admin.query("SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE state = 'idle in transaction' AND pid <> pg_backend_pid()")
        t.same(killed.rows, [{ killed: true }], 'the write\'s connection terminated')
        await pause(200)
        return 'done'
      })
      await t.rejects(write, { name: 'StoreUnavailableError', message: /unavailable: / }, 'the write fails (and the process goes on)')
      t.same(await store.versions('lost'), [], 'nothing of it was kept')
      t.match(await store.write(async (tx) => tx.put('after', '{}', null)), { revision: 2 }, 'the next write works on another connection')
    })

    t.test('ids with odd characters and the text as it was written, key order and spacing included', async (t) => {
      const { url } = await freshUrl()
      const { store } = await openStore(t, url)
      const ids = ["a'b", '__proto__', 'constructor', 'ünïcødé-名前-🙂', 'semi;colon--comment', 'back\\slash', '"quoted"', "x'); DROP TABLE mapper_mapping_versions; --", '$1', '']
      const text = '{ "z": 1,\n  "a": {"y": [3, {"d": 4, "c": 5}], "b": "\\u00e9"},\n  "m": "x", "m": "duplicate" }'
      const written = await store.write(async (tx) => {
        const out: StoredDocument[] = []
        for (const id of ids) out.push(await tx.put(id, text, "sub'ject"))
        return out
      })
      const state = await store.read()
      t.equal(state.documents.size, ids.length, 'every id is current')
      for (const [i, id] of ids.entries()) {
        const document = state.documents.get(id)
        t.equal(document?.id, id, `read(): ${JSON.stringify(id)}`)
        t.equal(document?.text, text, `${JSON.stringify(id)}: the text exactly as written`)
        t.equal(document?.digest, sha256(text))
        t.same(await store.version(id, 1), written.result[i], `${JSON.stringify(id)}: version()`)
        t.equal((await store.versions(id)).length, 1)
      }
      t.equal(Object.getPrototypeOf(state.documents.get('__proto__')), Object.prototype, '__proto__ is a key, not a prototype')
      await store.write(async (tx) => tx.delete("a'b", null))
      t.notOk((await store.read()).documents.has("a'b"), 'deleted by its id')
      t.ok((await store.read()).documents.has("x'); DROP TABLE mapper_mapping_versions; --"), 'the table is still there')
    })

    // Last: it stops the server.
    t.test('the server stopped: every call fails with StoreUnavailableError within a bound, naming the URL redacted, never the password', async (t) => {
      const { url } = await freshUrl()
      const { store, log } = await openStore(t, url)
      store.watch(() => undefined)
      await waitUntil('the store to listen', async () => (await listeners()) === 1, 5000)
      await store.write(async (tx) => tx.put('a', '{}', null))
      await stopped(t, server)
      const secrets = [server.password, encodeURIComponent(server.password)]
      let changes = 0
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['read()', () => store.read() as Promise<unknown>],
        ['write()', () => store.write(async () => changes++)],
        ['versions()', () => store.versions('a')],
        ['version()', () => store.version('a', 1)],
        ['open() of another store', () => new PostgresStore(url, { keepVersions: 3, resyncMs: 60000, log: memoryLog() }).open()],
      ]
      for (const [what, call] of calls) {
        const settling = call().then(() => undefined, (error: unknown) => error)
        t.ok(await settlesWithin(settling, DOWN_BOUND_MS), `${what}: settles within ${DOWN_BOUND_MS} ms`)
        const error = await settling
        t.type(error, StoreUnavailableError, `${what}: StoreUnavailableError`)
        const message = (error as Error).message
        t.match(message, new RegExp(`^PostgreSQL store ${store.description.replace(/[.?*+^$()[\]{}|\\/]/g, '\\$&')} unavailable: `), `${what}: the message names the URL, redacted (${message})`)
        t.ok((error as Error).cause !== undefined, `${what}: pg's error is the cause`)
        t.notOk(secrets.some((secret) => message.includes(secret)), `${what}: no password in the message`)
      }
      t.equal(changes, 0, 'the change of a write was never called')
      await waitUntil('the loss to be logged', () => log.lines.length > 0, 5000)
      t.match(log.lines, [{ level: 'warn', message: /^PostgreSQL store postgres:\/\/REDACTED@127\.0\.0\.1:\d+\/postgres\?options=REDACTED: the connection that listens for changes failed \(.+\); reconnecting$/ }], 'one warning')
      await pause(1000)
      t.equal(log.lines.length, 1, 'reconnect attempts are not logged one by one')
      t.notOk(secrets.some((secret) => log.text().includes(secret)), 'no password in the log')
      t.ok(await settlesWithin(store.close(), POSTGRES_TIMEOUTS.closeMs + 1000), 'close() does not wait for the dead server')
    })
  })
})

/** Stop the server and wait until a connection is refused. */
async function stopped(t: Test, server: Postgres): Promise<void> {
  await server.stop()
  let client: PgClient | undefined
  try {
    client = await connectPostgres(server.url, 1000)
  } catch {
    t.pass('the server is stopped')
    return
  }
  await client.end()
  t.fail('the server still accepts connections')
}
