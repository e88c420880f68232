// Hot reload: a Reloader swaps the whole registered set at once or keeps the old one (embedding,
// through inject); the real entry point reloads on SIGHUP and on changes of its MAPPINGS directory
// (a ConfigMap's `..data` swap included), a bad file leaves the old set served and is named in one
// log line, and a request in flight finishes on the set it started with.
//
// The entry points are real processes (the signal and the watcher are the subject), each taking
// seconds to start: the three this file needs (watch off, watch on, a module MAPPINGS) start
// together at the top, while the in-process tests run, and the watch-off one serves every SIGHUP
// test in turn, each starting from the set the one before it left. The watch-on and module ones
// are tested first and stopped, so that the large reload runs beside no other entry point. Each
// stops once its last test ends. Load shedding is off in the
// in-process services: the children starting meanwhile delay this process's event loop, and a 503
// is not what these tests are about.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs'
import Fastify from 'fastify'
import t from 'tap'
import mapperService from '../app.js'
import { loadMappings } from '../sources/mappings.js'
import { RELOAD_CHANNEL, Reloader, type ReloadOutcome } from '../service/reloader.js'
import { compiledEntry } from './proc-compiled.js'
import { DELAYED_EXTENSIONS, exchange, freePort, spawnEntryPoint, tempTree, waitForHealth, waitUntil, type EntryPoint } from './startup-support.js'

t.setTimeout(300000)

const mapping = (id: string, to: string): string => JSON.stringify({ $id: id, mapping: { [to]: '/' } })
/** Valid JSON, but `/x` is not a pointer the language accepts: registration refuses it. */
const INVALID = JSON.stringify({ $id: 'broken', mapping: { '/x': { source: 'not-a-pointer' } } })
const slow = (tag: string): string => JSON.stringify({ $id: 'slow', mapping: { '/out': { source: '/', delayed: { tag } } } })

/** The JSON log lines the service wrote on stdout so far. */
const logLines = (service: EntryPoint): Array<{ level: number; msg: string }> =>
  service
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string })

const reloadLines = (service: EntryPoint): string[] => logLines(service).map((line) => line.msg).filter((msg) => msg.startsWith('mappings reload'))

async function servedIds(port: number): Promise<string[]> {
  return Object.keys(JSON.parse((await exchange(port, 'GET', '/mappings')).body) as object).sort()
}

interface Started {
  readonly service: EntryPoint
  readonly port: number
}

/**
 * The shipped files compiled as the build is (test/proc-compiled.ts): each child, and each loading
 * thread a reload starts in it, then runs without the test loader's hooks, as `npm start` runs.
 */
const ENTRY = compiledEntry()

/** Start the entry point now; the test that uses it awaits it (a failed start fails that test, never the process). */
function start(env: Record<string, string>, options: object = {}): Promise<Started> {
  const started = (async () => {
    const port = await freePort()
    const service = spawnEntryPoint(t, { PORT: String(port), OPTIONS: JSON.stringify({ host: '127.0.0.1', logging: { level: 'info' }, ...options }), ...env }, 280000, await ENTRY)
    await waitForHealth(service, port)
    return { service, port }
  })()
  started.catch(() => {})
  return started
}

/**
 * Stop an entry point once its last test has ended: nothing is left running (a watcher, the idle
 * release, a set of 100,000 pairings held) beside the tests after it, in this file or in the next
 * file of its group, which the root test's teardown would only reach once the whole process ends.
 */
async function stop(service: EntryPoint): Promise<void> {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL')
  await service.exited
}

// Watch off (SIGHUP only, within reload.maxBytes), with the plugin that holds a request in flight.
const hup = tempTree(t, { 'm/a.json': mapping('a', '/a'), 'extensions.js': DELAYED_EXTENSIONS })
const hupStarted = start({ MAPPINGS: hup.path('m'), EXTENSIONS: hup.path('extensions.js'), DELAY_DIR: hup.root }, { reload: { watch: false, debounce: 10, maxBytes: 4_000_000 } })

// Watch on, over a directory laid out as kubelet lays out a ConfigMap volume.
const configMap = tempTree(t, { 'm/..2026_01_01_00_00_00.1/a.json': mapping('a', '/a') })
symlinkSync('..2026_01_01_00_00_00.1', configMap.path('m/..data'))
symlinkSync('..data/a.json', configMap.path('m/a.json'))
const watchStarted = start({ MAPPINGS: configMap.path('m') }, { reload: { debounce: 50 } })

// A module MAPPINGS, loaded once.
const moduleTree = tempTree(t, { 'mappings.js': `export default [${mapping('a', '/a')}]\n` })
const moduleStarted = start({ MAPPINGS: moduleTree.path('mappings.js') })

t.test('embedding: reload() swaps the whole set or keeps the old one, and publishes every attempt', async (t) => {
  const tree = tempTree(t, { 'm/a.json': mapping('a', '/a') })
  const published: unknown[] = []
  const listen = (message: unknown): void => { published.push(message) }
  subscribe(RELOAD_CHANNEL, listen)
  t.teardown(() => unsubscribe(RELOAD_CHANNEL, listen))

  const reloader = new Reloader(() => loadMappings(tree.path('m')))
  const app = Fastify()
  await app.register(mapperService, { prefix: '/mapper', mappings: await loadMappings(tree.path('m')), reloader, options: { logging: { level: 'silent' }, underPressure: false } })
  await app.ready()
  t.teardown(() => app.close())
  const served = async (): Promise<string[]> => Object.keys(JSON.parse((await app.inject({ method: 'GET', url: '/mapper/mappings' })).body) as object).sort()
  t.strictSame(await served(), ['a'])

  tree.write('m/b.json', mapping('b', '/b'))
  t.strictSame(await reloader.reload(), { ok: true, mappings: 2 }, 'the source is read again')
  t.strictSame(await served(), ['a', 'b'])
  const map = await app.inject({ method: 'POST', url: '/mapper/map', payload: { mapping: 'b', input: 1 } })
  t.strictSame(JSON.parse(map.body), { b: 1, valid: true, errors: [] }, 'the new mapping evaluates')

  tree.write('m/c.json', INVALID)
  const failed = await reloader.reload()
  t.equal(failed.ok, false, 'an invalid mapping fails the reload')
  t.match(failed.error, tree.path('m/c.json'), 'the error names the file')
  t.strictSame(await served(), ['a', 'b'], 'the previous set is still served, whole')

  const given = await reloader.reload(() => [JSON.parse(mapping('z', '/z'))])
  t.strictSame(given, { ok: true, mappings: 1 }, 'a source can be given per call')
  t.strictSame(await served(), ['z'])

  // Asked while one runs, two more reloads share the one run after it, which reads the latest source.
  const first = reloader.reload(() => [JSON.parse(mapping('one', '/1'))])
  const second = reloader.reload(() => [JSON.parse(mapping('two', '/2'))])
  const third = reloader.reload(() => [JSON.parse(mapping('three', '/3'))])
  t.equal(second, third, 'the queued requests share one promise')
  t.strictSame(await Promise.all([first, second]), [
    { ok: true, mappings: 1 },
    { ok: true, mappings: 1 },
  ])
  t.strictSame(await served(), ['three'], 'the latest source won')

  t.strictSame(published, [
    { ok: true, mappings: 2 },
    { ok: false, error: failed.error },
    { ok: true, mappings: 1 },
    { ok: true, mappings: 1 },
    { ok: true, mappings: 1 },
  ] satisfies ReloadOutcome[], 'one message per attempt on the diagnostics channel')
  await t.rejects(new Reloader().reload(), { message: /not registered/ }, 'an unregistered reloader refuses')
})

t.test('a reload is checked like a start: a failing example keeps the old set; /metrics counts every attempt; plugin calls stay counted', async (t) => {
  const tree = tempTree(t, { 'm/a.json': mapping('a', '/a') })
  const reloader = new Reloader(() => loadMappings(tree.path('m')))
  let calls = 0
  const twice = (_options: unknown, value: unknown): number => {
    calls++
    return (value as number) * 2
  }
  const extensions = { plugins: { twice } }
  const app = Fastify()
  await app.register(mapperService, { mappings: await loadMappings(tree.path('m')), extensions, reloader, options: { logging: { level: 'silent' }, underPressure: false } })
  await app.ready()
  t.teardown(() => app.close())
  const metric = async (line: RegExp): Promise<number> => {
    const found = line.exec((await app.inject({ method: 'GET', url: '/metrics' })).body)
    return found === null ? 0 : Number(found[1])
  }

  // The example says 3 doubles to 7: the set validates, but its example fails, so it is refused whole.
  const doubling = (expected: number): string =>
    JSON.stringify({ $id: 'double', mapping: { '/d': { source: '/n', twice: {} } }, examples: [{ input: { n: 3 }, output: { d: expected } }] })
  tree.write('m/double.json', doubling(7))
  const refused = await reloader.reload()
  t.equal(refused.ok, false, 'a failing example fails the reload')
  t.match(refused.error, /mapping "double" from .*double\.json: example 0 fails: \/d: expected 7, got 6/, 'naming the mapping, its file and the difference')
  t.equal((await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'double', input: { n: 1 } } })).statusCode, 404, 'the old set is still served')

  tree.write('m/double.json', doubling(6))
  t.strictSame(await reloader.reload(), { ok: true, mappings: 2 })
  const before = calls
  const answer = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'double', input: { n: 5 } } })
  t.strictSame(JSON.parse(answer.body), { d: 10, valid: true, errors: [] }, 'the reloaded mapping runs its plugin')
  t.equal(calls, before + 1)
  t.equal(await metric(/^mapper_reloads_total\{result="failed"\} (\d+)$/m), 1, 'the failed attempt is counted')
  t.equal(await metric(/^mapper_reloads_total\{result="ok"\} (\d+)$/m), 1, 'the good one too')
  t.equal(await metric(/^mapper_plugin_calls_total\{mapping="double",plugin="twice"\} (\d+)$/m), 1, "the reloaded engine's plugin calls are counted under their mapping")
})

t.test('watch: a ConfigMap update (the ..data link swapped) is served without a signal', async (t) => {
  const tree = configMap
  const at = (relative: string): string => tree.path(`m/${relative}`)
  const { service, port } = await watchStarted
  t.teardown(() => stop(service))
  t.strictSame(await servedIds(port), ['a'])

  // What kubelet does: a new snapshot, a `..data_tmp` link to it renamed over `..data`, the new
  // key's top-level link, the old snapshot removed.
  tree.write('m/..2026_01_01_00_01_00.2/a.json', mapping('a', '/renamed'))
  tree.write('m/..2026_01_01_00_01_00.2/b.json', mapping('b', '/b'))
  symlinkSync('..2026_01_01_00_01_00.2', at('..data_tmp'))
  renameSync(at('..data_tmp'), at('..data'))
  symlinkSync('..data/b.json', at('b.json'))
  rmSync(at('..2026_01_01_00_00_00.1'), { recursive: true })

  await waitUntil('the new snapshot to be served', async () => {
    const served = JSON.parse((await exchange(port, 'GET', '/mappings')).body) as Record<string, { mapping: object }>
    return served.b !== undefined && JSON.stringify(served.a?.mapping) === JSON.stringify({ '/renamed': '/' })
  })
  const map = await exchange(port, 'POST', '/map', { mapping: 'a', input: 1 })
  t.strictSame(JSON.parse(map.body), { renamed: 1, valid: true, errors: [] }, 'the updated mapping evaluates')
  t.ok(reloadLines(service).every((line) => line.startsWith('mappings reloaded: ')), 'no reload failed on the way')

  // A file in a nested real directory is watched too.
  mkdirSync(at('..2026_01_01_00_01_00.2/nested'))
  tree.write('m/..2026_01_01_00_01_00.2/nested/n.json', mapping('n', '/n'))
  symlinkSync('..data/nested', at('nested'))
  await waitUntil('the nested file to be served', async () => (await servedIds(port)).includes('n'))
  tree.write('m/..2026_01_01_00_01_00.2/nested/n.json', mapping('n', '/changed'))
  await waitUntil('the nested change to be served', async () => {
    const served = JSON.parse((await exchange(port, 'GET', '/mappings')).body) as Record<string, { mapping: object }>
    return JSON.stringify(served.n?.mapping) === JSON.stringify({ '/changed': '/' })
  })
  t.pass('a change inside a nested directory is served')
})

t.test('a module MAPPINGS is not reloaded: SIGHUP says to restart', async (t) => {
  const { service, port } = await moduleStarted
  t.teardown(() => stop(service))
  service.child.kill('SIGHUP')
  await waitUntil('the reload line', () => reloadLines(service).length === 1)
  t.match(reloadLines(service)[0], `${moduleTree.path('mappings.js')} is a module; its mappings are loaded once, restart the service to change them`)
  t.strictSame(await servedIds(port), ['a'], 'still served')
})

t.test('watch off: a change waits for SIGHUP', async (t) => {
  const { service, port } = await hupStarted
  t.strictSame(await servedIds(port), ['a'])
  hup.write('m/nested/b.json', mapping('b', '/b'))
  // Fifty times the 10 ms debounce a watch would have waited: nothing is reloaded.
  await new Promise((resolve) => setTimeout(resolve, 500))
  t.strictSame(await servedIds(port), ['a'], 'not picked up without a signal')
  t.strictSame(reloadLines(service), [], 'no reload attempted')
  service.child.kill('SIGHUP')
  await waitUntil('b to be served', async () => (await servedIds(port)).includes('b'))
  // The line reaches this process through the child's stdout, which may lag the answer that shows b.
  await waitUntil('the reload line', () => reloadLines(service).length === 1)
  t.pass('SIGHUP still reloads')
})

t.test('SIGHUP reloads the directory; a bad file keeps the old set and is named in one line', async (t) => {
  // The set the watch-off test left: a.json, and nested/b.json its SIGHUP read.
  const { service, port } = await hupStarted
  t.strictSame(await servedIds(port), ['a', 'b'])
  t.strictSame(reloadLines(service), ['mappings reloaded: 2 mappings'])
  const map = await exchange(port, 'POST', '/map', { mapping: 'b', input: 'x' })
  t.strictSame(JSON.parse(map.body), { b: 'x', valid: true, errors: [] })

  const bad = hup.write('m/c.json', INVALID)
  service.child.kill('SIGHUP')
  await waitUntil('the failed reload line', () => reloadLines(service).length === 2)
  const line = reloadLines(service)[1]!
  t.match(line, /^mappings reload failed, still serving the previous 2 mappings: /)
  t.ok(line.includes(bad), 'the line names the file')
  t.strictSame(await servedIds(port), ['a', 'b'], 'the old set is still served')

  hup.write('m/c.json', '{ "$id": "c", ')
  service.child.kill('SIGHUP')
  await waitUntil('the second failed reload line', () => reloadLines(service).length === 3)
  t.ok(reloadLines(service)[2]!.includes(`${bad} does not parse as JSON`), 'a file that does not parse is named')
  t.strictSame(await servedIds(port), ['a', 'b'])

  // With the next test's mapping in its first version: a reload (and its loading thread) fewer.
  hup.write('m/c.json', mapping('c', '/c'))
  hup.write('m/slow.json', slow('old'))
  service.child.kill('SIGHUP')
  await waitUntil('c to be served', async () => (await servedIds(port)).includes('c'))
  await waitUntil('the reload line', () => reloadLines(service).length === 4)
  t.strictSame(reloadLines(service).slice(3), ['mappings reloaded: 4 mappings'])
  t.equal(service.child.exitCode, null, 'SIGHUP never stopped the service')
})

t.test('a request in flight during a reload finishes with the mapping it started with', async (t) => {
  // The set the test before left: a, b, c and the first version of slow.
  const { service, port } = await hupStarted
  await waitUntil('the old version to be registered', async () => (await servedIds(port)).includes('slow'))

  const inFlight = exchange(port, 'POST', '/map', { mapping: 'slow', input: { id: 1 } })
  await waitUntil('the request to reach its plugin', () => existsSync(hup.path('started')))
  hup.write('m/slow.json', slow('new'))
  service.child.kill('SIGHUP')
  await waitUntil('the new version to be registered', async () => (await exchange(port, 'GET', '/mappings')).body.includes('"new"'))

  hup.write('release', '')
  const response = await inFlight
  t.strictSame(JSON.parse(response.body), { out: { id: 1, tag: 'old' }, valid: true, errors: [] }, 'the in-flight request used the old mapping')
  const after = await exchange(port, 'POST', '/map', { mapping: 'slow', input: { id: 2 } })
  t.strictSame(JSON.parse(after.body), { out: { id: 2, tag: 'new' }, valid: true, errors: [] }, 'a new request uses the new one')
})

t.test('reload.maxBytes: a set over it is refused before it is read, in one line; a large set reloads while /health answers', async (t) => {
  // The set so far: a, b, c and slow (a few hundred bytes), within reload.maxBytes (4,000,000).
  const { service, port } = await hupStarted
  t.teardown(() => stop(service))
  const earlier = reloadLines(service).length
  const since = (): string[] => reloadLines(service).slice(earlier)
  // ~3.5 MB: 100,000 pairings in one file, read and parsed off the event loop.
  const pairings = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`/f${i}/value`, `/s${i}/value`]))
  hup.write('m/large.json', JSON.stringify({ $id: 'large', mapping: pairings }))
  service.child.kill('SIGHUP')
  // /health asked every 20 ms, on its own, from the moment the signal is sent until the reload's
  // line is written: the loop that answers it also registers and validates the set, so a turn that
  // holds it shows as a late answer whenever it falls. (Nothing else is asked meanwhile: evaluating
  // 100,000 pairings is a request's own work, not the reload's.)
  const state = { reloading: true, worst: 0, answered: 0 }
  const probe = (async () => {
    while (state.reloading) {
      const started = performance.now()
      const health = await exchange(port, 'GET', '/health')
      if (health.status === 200) state.answered++
      state.worst = Math.max(state.worst, performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  try {
    await waitUntil('the reload line', () => since().length > 0, 120_000)
  } finally {
    state.reloading = false
    await probe
  }
  t.strictSame(since(), ['mappings reloaded: 5 mappings'])
  t.equal((await exchange(port, 'POST', '/map', { mapping: 'large', input: {} })).status, 200, 'the large set is served')
  t.ok(state.answered >= 10, `/health answered ${state.answered} times during the reload`)
  // Read and parsed in a thread, handed over in parts, copied, compiled and validated a few
  // pairings at a time (issue 30): the reload holds no turn of the loop for more than a slice, a
  // part or one of V8's collections, 40 to 90 ms here (it held one turn for 2.5 to 4.5 s; this
  // test saw 1.1 s to 6.5 s). The service's idle release (service/idle-memory.ts) no longer runs
  // its full collection during the reload, which has no request in flight but keeps the loop busy
  // (the collection held it 0.4 to 0.6 s). The bound leaves room for a CI machine busy with the
  // suite's other processes, and fails a reload that holds the loop.
  t.ok(state.worst < 400, `the slowest /health during the reload took ${Math.round(state.worst)} ms (bound 400 ms)`)

  hup.write('m/huge.json', JSON.stringify({ $id: 'huge', mapping: { '/x': '/'.repeat(1_000_000) } }))
  service.child.kill('SIGHUP')
  await waitUntil('the refused reload line', () => since().length === 2)
  t.match(since()[1], /^mappings reload failed, still serving the previous 5 mappings: MAPPINGS: .* holds \d+ bytes of mapping documents, over reload\.maxBytes \(4000000\)$/)
  t.strictSame(await servedIds(port), ['a', 'b', 'c', 'large', 'slow'], 'the served set is kept')
})
