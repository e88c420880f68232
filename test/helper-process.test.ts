// The helper process (options.helperProcess, workers/helper-process.ts): the worker threads of
// isolation and the parse threads of the request plugin run in one child process, every thread of
// it at the lowest priority; it is started on first use, started again when it ends, and ends with
// the service. Through real servers and a real child process; the extensions come from a module
// written to a temp dir (as EXTENSIONS would be), whose transformers tell which process ran them.
//
// First in its group: it counts the helper processes of this process, which a server an earlier
// file kept open would hold.
import { createServer, type Server } from 'node:http'
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import t from 'tap'
import { loadExtensions } from '../sources/extensions.js'
import { ConfigError, resolveConfig } from '../config/resolve.js'
import { buildServer } from '../server.js'
import { closeParseThreads } from '../extensions/request/index.js'
import { HEAVY_TASK_BYTES } from '../workers/isolation.js'
import { stockExtensions } from '../extensions/stock.js'
import { exchange, freePort, spawnEntryPoint, waitForHealth, waitUntil } from './startup-support.js'
import { children, running, statFields } from './process-support.js'

const LINUX = process.platform === 'linux'

const dir = mkdtempSync(join(tmpdir(), 'mapper-helper-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const MODULE = join(dir, 'extensions.mjs')
writeFileSync(
  MODULE,
  `import { getPriority } from 'node:os'
export default {
  transformers: {
    pid: () => process.pid,
    ppid: () => process.ppid,
    nice: () => getPriority(),
  },
  plugins: {
    hold: () => new Promise(() => {}),
  },
}
`
)

const WHO = { mapping: { '/pid': { source: '/x', transform: 'pid' }, '/ppid': { source: '/x', transform: 'ppid' }, '/nice': { source: '/x', transform: 'nice' } } }
const HOLD = { mapping: { '/held': { source: '/x', hold: {} } } }

/** The helper processes this process runs now. */
const helpers = (): number[] => children('helper-entry')

async function service(options: Record<string, unknown>, mappings: unknown[] = []): Promise<FastifyInstance> {
  return buildServer({ mappings: mappings as never, extensions: await loadExtensions(MODULE), extensionsModule: MODULE, options: { underPressure: false, map: { explicit: true }, ...options } })
}

/** Padding that makes a request heavy (HEAVY_TASK_BYTES or more): its isolated work runs in the helper process. */
const HEAVY = 'x'.repeat(HEAVY_TASK_BYTES)

/** Which process ran an explicit document (`heavy`: with a request of HEAVY_TASK_BYTES or more), its parent, and its thread's nice value. */
async function who(app: FastifyInstance, heavy = true): Promise<{ pid: number; ppid: number; nice: number }> {
  const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: WHO, input: { x: 1, ...(heavy ? { pad: HEAVY } : {}) } } })
  if (response.statusCode !== 200) throw new Error(`the explicit document answered ${response.statusCode}: ${response.body}`)
  return response.json()
}

t.test('options.helperProcess: on by default, for isolation and the parse threads alike; validated', async (t) => {
  t.equal(resolveConfig({}).helperProcess, true)
  t.match(resolveConfig({ map: { explicit: true } }).isolation, { helperProcess: true })
  t.equal(resolveConfig({ helperProcess: false }).helperProcess, false)
  t.match(resolveConfig({ map: { explicit: true }, helperProcess: false }).isolation, { helperProcess: false })
  t.throws(() => resolveConfig({ helperProcess: 'yes' } as never), ConfigError)
})

t.test('upstream XML and HTML are parsed in the helper process; large JSON in a thread of this process, its bytes moved, not copied', { skip: !LINUX && 'reads /proc' }, async (t) => {
  const items = Array.from({ length: 6000 }, (_, i) => ({ id: i, name: `item ${i}` }))
  const xml = `<items>${items.map((item) => `<item><id>${item.id}</id><name>${item.name}</name></item>`).join('')}</items>`
  // 200 KB of JSON: above the size parsed inline.
  const json = JSON.stringify({ items })
  const upstream: Server = createServer((request, response) => {
    response.setHeader('content-type', request.url === '/xml' ? 'application/xml' : 'application/json')
    response.end(request.url === '/xml' ? xml : json)
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => upstream.close(() => resolve())))
  const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
  t.same(helpers(), [], 'no helper process before the first task')
  // Isolation off: the only pool in the helper process is the parse threads'.
  const app = await buildServer({
    extensions: stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' }),
    mappings: [
      { $id: 'json', mapping: { '/first': { request: { origin, pathname: '/json', pointer: '/json/items/0' } }, '/last': { request: { origin, pathname: '/json', pointer: '/json/items/5999' } } } },
      { $id: 'xml', mapping: { '/last': { request: { origin, pathname: '/xml', pointer: '/json/items/item/5999' } } } },
    ] as never,
    options: { underPressure: false, isolation: false },
  })
  t.teardown(() => app.close())
  const fromJson = await app.inject({ method: 'POST', url: '/map/json', payload: {} })
  t.equal(fromJson.statusCode, 200, fromJson.body)
  t.match(fromJson.json(), { first: items[0], last: items[5999] })
  t.same(helpers(), [], 'JSON parsed in a thread of this process')
  const fromXml = await app.inject({ method: 'POST', url: '/map/xml', payload: {} })
  t.equal(fromXml.statusCode, 200, fromXml.body)
  t.match(fromXml.json(), { last: { id: 5999, name: 'item 5999' } })
  t.equal(helpers().length, 1, 'XML parsed in the helper process')
  await closeParseThreads()
  await waitUntil('the helper process to end once no pool is open', () => helpers().length === 0, 10_000)
})

t.test('heavy isolated work runs in the helper process, at the lowest priority, light work in threads of this process; helperProcess: false keeps all of it here', async (t) => {
  const app = await service({})
  const light = await who(app, false)
  t.equal(light.pid, process.pid, 'a request under HEAVY_TASK_BYTES: a worker thread of this process')
  t.same(helpers(), [], 'no helper process for it')
  const there = await who(app)
  t.not(there.pid, process.pid, 'a heavy one: not this process')
  t.equal(there.ppid, process.pid, 'a child of this process')
  if (LINUX) {
    t.equal(there.nice, 19, 'the lowest priority')
    t.same(helpers(), [there.pid])
    // Every thread of it: V8's own, which collect and compile for the worker threads, included.
    const threads = readdirSync(`/proc/${there.pid}/task`).map((thread) => {
      const fields = statFields(`/proc/${there.pid}/task/${thread}/stat`)
      // /proc stat's fields 19 and 41: nice and scheduling policy.
      return { nice: Number(fields[16]), policy: Number(fields[38]) }
    })
    t.ok(threads.length > 3)
    t.same(new Set(threads.map((thread) => thread.nice)), new Set([19]), 'every thread of the helper process runs at nice 19')
    // SCHED_IDLE (5) where util-linux's chrt is installed, as the service's images have it.
    if (['/usr/bin/chrt', '/bin/chrt'].some((path) => existsSync(path))) t.same(new Set(threads.map((thread) => thread.policy)), new Set([5]), 'and under SCHED_IDLE')
  }
  const validated = await app.inject({ method: 'POST', url: '/validate', payload: { mapping: { description: HEAVY, mapping: { '/a': { source: '/b', transform: 'nope' } } } } })
  t.equal(validated.statusCode, 200)
  t.equal(validated.json().valid, false, 'POST /validate of a heavy document answers through it too')
  await app.close()
  if (LINUX) await waitUntil('the helper process to end once the service closed', () => !running(there.pid), 10_000)

  const inProcess = await service({ helperProcess: false })
  t.teardown(() => inProcess.close())
  const here = await who(inProcess)
  t.equal(here.pid, process.pid, 'helperProcess: false: a heavy request in a worker thread of this process')
})

t.test('the helper process ends mid-evaluation: that request answers 503 and the next one starts a new helper', { skip: !LINUX && 'signals a process by id' }, async (t) => {
  const app = await service({ limits: { explicit: { timeMs: 20_000 } } })
  t.teardown(() => app.close())
  const first = await who(app)
  const held = app.inject({ method: 'POST', url: '/map', payload: { mapping: HOLD, input: { x: 1, pad: HEAVY } } })
  // The held evaluation has reached its worker once the plugin call is pending: give it a moment.
  await new Promise((resolve) => setTimeout(resolve, 300))
  process.kill(first.pid, 'SIGKILL')
  const answer = await held
  t.equal(answer.statusCode, 503, answer.body)
  t.match(answer.json(), { code: 'Unavailable' })
  const next = await who(app)
  t.not(next.pid, first.pid, 'a new helper process')
  t.equal(next.ppid, process.pid)
})

t.test('the helper process ends with the service, even when the service is killed', { skip: !LINUX && 'reads /proc' }, async (t) => {
  const port = await freePort()
  const mappings = join(dir, 'mappings')
  rmSync(mappings, { recursive: true, force: true })
  writeFileSync(join(dir, 'who.json'), JSON.stringify({ $id: 'who', ...WHO }))
  const served = spawnEntryPoint(t, { PORT: String(port), MAPPINGS: join(dir, 'who.json'), EXTENSIONS: MODULE, OPTIONS: JSON.stringify({ host: '127.0.0.1', map: { explicit: true }, underPressure: false }) }, 120_000)
  await waitForHealth(served, port)
  const response = await exchange(port, 'POST', '/map', { mapping: WHO, input: { x: 1, pad: HEAVY } })
  t.equal(response.status, 200, response.body)
  const { pid, ppid } = JSON.parse(response.body) as { pid: number; ppid: number }
  t.equal(ppid, served.child.pid, "the service's child")
  t.ok(running(pid))
  served.child.kill('SIGKILL')
  await served.exited
  await waitUntil('the helper process to end after its service was killed', () => !running(pid), 10_000)
  t.pass('ended')
})

t.test('a helper process that cannot start: its tasks answer 503, and after three in a row heavy work runs in this process, with a warning', async (t) => {
  const warnings: string[] = []
  const app = await buildServer({
    extensions: await loadExtensions(MODULE),
    extensionsModule: MODULE,
    options: { underPressure: false, map: { explicit: true } },
    logger: pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg as string) }),
  })
  t.teardown(() => app.close())
  // A NODE_OPTIONS that Node refuses: every process started with it ends at once, as a sandbox
  // that forbids the fork or a crash at start would.
  const options = process.env.NODE_OPTIONS
  const restore = (): void => {
    if (options === undefined) delete process.env.NODE_OPTIONS
    else process.env.NODE_OPTIONS = options
  }
  process.env.NODE_OPTIONS = `${options ?? ''} --no-such-flag-for-the-helper`
  t.teardown(restore)
  const heavy = { mapping: WHO, input: { x: 1, pad: HEAVY } }
  for (let attempt = 1; attempt <= 3; attempt++) {
    const refused = await app.inject({ method: 'POST', url: '/map', payload: heavy })
    t.equal(refused.statusCode, 503, `attempt ${attempt}: 503, the helper process ended`)
  }
  // This process's worker threads read NODE_OPTIONS too: the environment mended, before they start.
  restore()
  t.match(warnings.join('\n'), /the helper process ended before its first answer 3 times in a row .*heavy work runs in this process's threads/, 'said once, in the log')
  const served = await app.inject({ method: 'POST', url: '/map', payload: heavy })
  t.equal(served.statusCode, 200, served.body)
  t.equal(served.json().pid, process.pid, 'the fourth runs in a worker thread of this process')
})
