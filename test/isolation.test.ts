// Isolation (options.isolation, workers/isolation.ts): caller-authored work runs in worker threads
// under hard limits, through a real listening server. Extensions come from a module written to a
// temp dir, as a deployment's EXTENSIONS would: `thread` tells where a value was transformed,
// `spin` never returns, `hog` allocates without end, `count` is a plugin the metrics count, `hold` a
// plugin whose call never answers (its evaluation waits, idle, until its time budget ends it).
//
// A worker thread takes seconds to start on a loaded machine, so tests that need the same options
// share one server (and its warm pool) and run in order: `limited` (a 200 ms timeMs, one thread,
// no queue, registered mappings isolated too) for the hard time limit, the full queue and
// isolation.registered, `shared` (one thread of 64 MiB, a fanOut of 5, a 10 s timeMs, stdout
// allowed, a debug log) for the rest. A worker stopped by a test is replaced at the next task, a
// second or two of CPU: one spinning task shows both the hard time limit and the full queue, and
// the task that keeps isolation.queueMs's one worker busy waits without spinning and ends within
// its budget, so that its worker serves on (the hard limit is the spinning tests'). Load
// shedding is off everywhere: a loaded machine's event-loop delay must not answer 503 for what
// these tests are about.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import t from 'tap'
import { loadExtensions } from '../sources/extensions.js'
import { ConfigError, resolveConfig } from '../config/resolve.js'
import { buildServer } from '../server.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const dir = mkdtempSync(join(tmpdir(), 'mapper-isolation-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const MODULE = join(dir, 'extensions.mjs')
writeFileSync(
  MODULE,
  `import { isMainThread } from 'node:worker_threads'
export default {
  transformers: {
    thread: () => (isMainThread ? 'main' : 'worker'),
    spin: (value) => { for (;;) { if (value === Symbol.iterator) return value } },
    hog: () => { const kept = []; for (;;) kept.push(new Array(100000).fill(kept.length)) },
  },
  plugins: {
    count: async (_options, value) => value,
    hold: () => new Promise(() => {}),
  },
}
`
)

const where = { mapping: { '/where': { source: '/x', transform: 'thread' } } }
const REGISTERED = [{ $id: 'where', ...where }]

interface Served {
  readonly app: FastifyInstance
  readonly origin: string
  post(body: unknown): Promise<{ status: number; data: any }>
  /** GET /health, timed: the main thread's answer while a worker is busy. */
  health(): Promise<{ status: number; ms: number }>
}

async function served(t: Pick<Tap, 'teardown'>, options: Record<string, unknown>, log: Array<Record<string, unknown>> = []): Promise<Served> {
  const logger = pino({ level: 'debug' }, { write: (line: string) => log.push(JSON.parse(line)) })
  const app = await buildServer({ mappings: REGISTERED, extensions: await loadExtensions(MODULE), extensionsModule: MODULE, options: { underPressure: false, ...options }, logger })
  t.teardown(() => app.close())
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  return {
    app,
    origin,
    async post(body) {
      const response = await fetch(`${origin}/map`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      return { status: response.status, data: await response.json() }
    },
    async health() {
      const started = performance.now()
      const response = await fetch(`${origin}/health`)
      await response.arrayBuffer()
      return { status: response.status, ms: performance.now() - started }
    },
  }
}

/** The value of one series in the server's /metrics (0 when it does not exist yet). */
async function metric(service: Served, series: string): Promise<number> {
  const text = await (await fetch(`${service.origin}/metrics`)).text()
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

/**
 * The hard time limit's server: explicit documents get 200 ms, then 300 ms of grace, on one thread,
 * and no task may wait for it (isolation.queue 0). Registered mappings run in its worker too
 * (isolation.registered), which no other test of it sends.
 */
const limited = await served(t, { map: { explicit: true }, limits: { explicit: { timeMs: 200 } }, isolation: { graceMs: 300, threads: 1, queue: 0, registered: true } })
/** What `shared` logged (the tests that read it empty it first). */
const sharedLog: Array<Record<string, unknown>> = []
/**
 * One thread with a 64 MiB heap (the least isolation.memoryMb allows: the heap the memory test
 * fills), a fanOut budget of 5, stdout allowed, a debug log; a 10 s timeMs, so that a worker
 * filling its heap on a loaded machine meets the memory limit, never the time limit.
 */
const shared = await served(t, { map: { explicit: { stdout: true } }, limits: { explicit: { fanOut: 5, timeMs: 10_000 } }, isolation: { memoryMb: 64, threads: 1 }, logging: { level: 'debug' } }, sharedLog)
/** Their workers start side by side, while the first tests run; the first test that uses them waits for both. */
const warming = Promise.all([limited, shared].map((service) => service.post({ mapping: where, input: { x: 1 } })))
warming.catch(() => {})

/** Poll /health while `work` runs; the slowest answer. */
async function healthDuring<T>(service: Served, work: Promise<T>): Promise<{ result: T; worstMs: number; answered: number }> {
  const state = { done: false }
  let worstMs = 0
  let answered = 0
  const polling = (async () => {
    while (!state.done) {
      const { status, ms } = await service.health()
      if (status === 200) answered++
      worstMs = Math.max(worstMs, ms)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })()
  const result = await work
  state.done = true
  await polling
  return { result, worstMs, answered }
}

t.test('options.isolation: on for explicit work wherever the explicit form is, for /validate always, validated', async (t) => {
  t.match(resolveConfig({}).isolation, { explicit: false, registered: false, validate: true, asked: false, configured: false }, 'no explicit form: /validate only, by default')
  t.match(resolveConfig({ map: { explicit: true } }).isolation, { explicit: true, asked: true, configured: false }, 'implied by the explicit form, not configured')
  t.equal(resolveConfig({ isolation: { validate: false } }).isolation, false, 'nothing left to isolate')
  t.match(resolveConfig({ isolation: { threads: 2 } }).isolation, { explicit: false, validate: true, asked: true, configured: true, threads: 2 })
  t.match(resolveConfig({ map: { explicit: true }, isolation: { validate: false } }).isolation, { explicit: true, validate: false })
  t.match(resolveConfig({ map: { explicit: true } }).isolation, { explicit: true, registered: false, memoryMb: 256, graceMs: 1000 })
  t.ok((resolveConfig({ map: { explicit: true } }).isolation as { threads: number }).threads >= 1)
  t.equal(resolveConfig({ map: { explicit: true }, isolation: false }).isolation, false)
  t.match(resolveConfig({ isolation: { registered: true, threads: 3 } }).isolation, { explicit: false, registered: true, threads: 3 })
  t.throws(() => resolveConfig({ isolation: { threads: 0 } }), ConfigError)
  t.throws(() => resolveConfig({ isolation: { threads: 0 } }), { message: 'options.isolation.threads: Expected integer to be greater or equal to 1' }, 'the member at fault, not the union')
  t.throws(() => resolveConfig({ isolation: { memoryMb: 32 } }), ConfigError, 'below what a worker needs to start')
  t.throws(() => resolveConfig({ isolation: true }), ConfigError)
})

t.test('extensions given as functions cannot cross into a worker: isolation that options.isolation asks for fails the build with one line', async (t) => {
  // Isolation the explicit form only implies is turned off with a warning instead (test/http-embedding.test.ts).
  const functions = { transformers: { thread: () => 'main' } }
  await t.rejects(
    buildServer({ extensions: functions, options: { map: { explicit: true }, isolation: { explicit: true }, logging: { level: 'silent' } } }),
    /^options\.isolation: extensions given as functions cannot run in worker threads: load them from a module \(EXTENSIONS, or the extensionsModule option\), or set options\.isolation to false$/
  )
  const inline = await buildServer({ extensions: functions, options: { map: { explicit: true }, isolation: false, logging: { level: 'silent' } } })
  t.teardown(() => inline.close())
  const answer = await inline.inject({ method: 'POST', url: '/map', payload: { mapping: where, input: { x: 1 } } })
  t.same(answer.json(), { where: 'main', valid: true, errors: [] }, 'isolation off: inline')
})

t.test('what runs where: explicit documents and explain traces in a worker, registered mappings inline', async (t) => {
  // No task may wait on `limited` (queue 0): its warm-up must be over before the next test's.
  await warming
  const service = shared
  t.same((await service.post({ mapping: where, input: { x: 1 } })).data, { where: 'worker', valid: true, errors: [] }, 'explicit')
  t.same((await service.post({ mapping: 'where', input: { x: 1 } })).data, { where: 'main', valid: true, errors: [] }, 'registered')
  const explained = await service.post({ mapping: 'where', input: { x: 1 }, explain: true })
  t.equal(explained.data.where, 'worker', 'a registered mapping explained')
  t.equal(explained.data.explain.pairings[0].target, '/where')
  t.same((await service.post({ mapping: { mapping: { '/r': { $ref: 'where' } } }, input: { x: 1 } })).data, { r: { where: 'worker' }, valid: true, errors: [] }, 'a worker sees the registered mappings')
  const refused = await service.post({ mapping: { mapping: { '/y': { source: '/a', as: 'integer' } } }, input: {} })
  t.equal(refused.status, 422)
  t.equal(refused.data.code, 'InvalidMappingDocument')
  t.match(refused.data.report.errors[0], { rule: 'KW-pipeline-1', pointer: '/mapping/~1y/as' })
  t.equal((await service.post({ mapping: 'nowhere', input: {}, explain: true })).status, 404)

  // isolation.registered (on `limited`): a registered mapping runs in the worker too.
  t.same((await limited.post({ mapping: 'where', input: { x: 1 } })).data, { where: 'worker', valid: true, errors: [] }, 'isolation.registered')
})

const began = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

t.test('a document that never returns: its worker is terminated, 422 timeMs, the main thread answers throughout; a task that finds the queue full meanwhile is 503 at once', async (t) => {
  const service = limited
  const spinning = service.post({ mapping: { mapping: { '/x': { source: '/a', transform: 'spin' } } }, input: { a: 1 } })
  // queue 0: the spinning task holds the one slot until its hard limit (200 + 300 ms after it began).
  const refusing = began(150).then(() => service.post({ mapping: where, input: { x: 1 } }))
  const { result, worstMs, answered } = await healthDuring(service, spinning)
  const refused = await refusing
  t.equal(refused.status, 503, 'no room to wait: refused while the one worker spins')
  t.match(refused.data, { code: 'Unavailable' })
  t.match(result.data, { code: 'BudgetExceeded', budget: 'timeMs' }, 'the spinning task still meets its hard limit')
  t.equal(result.status, 422)
  t.match(result.data, { code: 'BudgetExceeded', budget: 'timeMs', limit: 200, pointer: '' })
  t.match(result.data.message, /the worker running it was stopped/)
  t.ok(answered >= 1, `/health answered ${answered} times while the worker spun`)
  t.ok(worstMs < 5000, `the slowest /health took ${Math.round(worstMs)} ms`)
  t.same((await service.post({ mapping: where, input: { x: 1 } })).data, { where: 'worker', valid: true, errors: [] }, 'a new worker took its place')
  t.same((await service.post({ mapping: where, input: { x: 1 } })).data, { where: 'worker', valid: true, errors: [] }, 'its slot is free again')
})

t.test('isolation.queueMs: a task that waits too long is 503; the pool serves on', async (t) => {
  // Holds the one worker until its 1.5 s budget ends it: a plugin call waiting, which the budget
  // stops without stopping the worker, a second before the hard limit would (graceMs left at its
  // default). It uses no CPU meanwhile, where a spin would use 1.5 s and its worker's replacement a
  // second more.
  const hold = { mapping: { mapping: { '/x': { source: '/a', hold: {} } } }, input: { a: 1 } }
  /**
   * Until a worker has started (a start may outlast a short queueMs, many times over on a loaded
   * machine): then a quick document is served.
   */
  const warm = async (service: Served): Promise<void> => {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) if ((await service.post({ mapping: where, input: { x: 1 } })).status === 200) return
    t.fail('the worker never started')
  }

  const slow = await served(t, { map: { explicit: true }, limits: { explicit: { timeMs: 1500 } }, isolation: { threads: 1, queueMs: 300 } })
  await warm(slow)
  const blocking = slow.post(hold)
  await began(100)
  const started = performance.now()
  const waited = await slow.post({ mapping: where, input: { x: 1 } })
  const ms = performance.now() - started
  t.equal(waited.status, 503, 'queued behind the busy worker past queueMs')
  t.match(waited.data, { code: 'Unavailable' })
  t.ok(ms >= 250, `answered once it had waited (${Math.round(ms)} ms)`)
  t.match((await blocking).data, { code: 'BudgetExceeded', budget: 'timeMs', limit: 1500 })
  t.same((await slow.post({ mapping: where, input: { x: 1 } })).data, { where: 'worker', valid: true, errors: [] }, 'the worker serves the next task')
})

t.test('a document that allocates without end: 422 memory, and the process lives on', async (t) => {
  const service = shared
  const hogging = service.post({ mapping: { mapping: { '/x': { source: '/a', transform: 'hog' } } }, input: { a: 1 } })
  const { result, answered } = await healthDuring(service, hogging)
  t.equal(result.status, 422)
  t.match(result.data, { code: 'BudgetExceeded', budget: 'memory', limit: 64 })
  t.ok(answered >= 1, '/health answered while the worker allocated')
  t.same((await service.post({ mapping: where, input: { x: 1 } })).data, { where: 'worker', valid: true, errors: [] }, 'a new worker took its place')
})

t.test('a budget tripped in a worker is the same answer, log line and metric as inline', async (t) => {
  const log = sharedLog
  log.length = 0
  const service = shared
  const fanning = { mapping: { '/all': { input: '/list', each: { '/v': '/' } } } }
  const answer = await service.post({ mapping: fanning, input: { list: [1, 2, 3, 4, 5, 6, 7] } })
  t.equal(answer.status, 422)
  t.match(answer.data, { code: 'BudgetExceeded', budget: 'fanOut', limit: 5 })
  t.match(log.find((line) => line.msg === 'evaluation budget exceeded'), { level: 40, budget: 'fanOut', status: 422, requestId: answer.data.requestId })
  const metrics = await (await fetch(`${service.origin}/metrics`)).text()
  t.match(metrics, /mapper_budget_exceeded_total\{mapping="\(explicit\)",budget="fanOut"\} 1/)
})

t.test('what a worker saw is counted and logged in the main thread: plugin calls, stdout', async (t) => {
  const log = sharedLog
  log.length = 0
  const service = shared
  // The server served explicit documents before: the evaluations this one adds.
  const evaluations = await metric(service, 'mapper_evaluations_total{mapping="(explicit)",result="valid"}')
  const answer = await service.post({ mapping: { mapping: { '/v': { source: '/a', count: {} }, '/w': { source: '/a', count: {} } }, stdout: true }, input: { a: 1 } })
  t.equal(answer.status, 200, JSON.stringify(answer.data))
  const metrics = await (await fetch(`${service.origin}/metrics`)).text()
  t.match(metrics, /mapper_plugin_calls_total\{mapping="\(explicit\)",plugin="count"\} 2/)
  t.equal(await metric(service, 'mapper_evaluations_total{mapping="(explicit)",result="valid"}'), evaluations + 1, 'one valid evaluation counted')
  t.ok(log.some((line) => line.msg === 'mapping stdout'), 'the stdout line is in the request log')
})

t.test('a client that leaves mid-evaluation: the worker is stopped, nothing crashes, the next request is served', async (t) => {
  // A 10 s budget: the client leaves after 300 ms, long before it.
  const service = shared
  const leaving = new AbortController()
  const request = fetch(`${service.origin}/map`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mapping: { mapping: { '/x': { source: '/a', transform: 'spin' } } }, input: { a: 1 } }),
    signal: leaving.signal,
  })
  await new Promise((resolve) => setTimeout(resolve, 300))
  leaving.abort()
  await t.rejects(request)
  const next = await service.post({ mapping: where, input: { x: 1 } })
  t.same(next.data, { where: 'worker', valid: true, errors: [] }, 'served by a fresh worker, well before the 10 s budget')
})

t.test('POST /validate: a submitted document is validated and its examples run in a worker, under the same hard limits', async (t) => {
  const service = limited
  const validate = async (body: unknown): Promise<{ status: number; data: any }> => {
    const response = await fetch(`${service.origin}/validate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    return { status: response.status, data: await response.json() }
  }
  const passing = await validate({ mapping: { ...where, examples: [{ input: { x: 1 }, output: { where: 'worker' } }] } })
  t.same(passing.data, { valid: true, errors: [], warnings: [], expansion: 1 }, 'the example ran in a worker')
  const failing = await validate({ mapping: { ...where, examples: [{ input: { x: 1 }, output: { where: 'main' } }] } })
  t.equal(failing.data.valid, false)
  t.match(failing.data.errors[0], { rule: 'EXAMPLE-1' })
  const spinning = await healthDuring(service, validate({ mapping: { mapping: { '/x': { source: '/a', transform: 'spin' } }, examples: [{ input: { a: 1 }, output: {} }] } }))
  t.equal(spinning.result.status, 422)
  t.match(spinning.result.data, { code: 'BudgetExceeded', budget: 'timeMs' })
  t.ok(spinning.answered >= 1, '/health answered while the example spun')
})
