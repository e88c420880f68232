// Resource governance through a real listening server: no document, registered or explicit, and
// no input can crash the process, stall it for others or grow its memory without bound. Budgets
// answer 422 BudgetExceeded (or 422 InvalidMappingDocument with BUDGET-1 when the static bound
// shows it first), load shedding answers 503, and the explicit cache holds a bounded number of bytes.
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { Mapper } from '../engine/index.js'
import { EXPLICIT_LIMITS, resolveConfig } from '../config/resolve.js'
import { EngineService } from '../service/mapping-service.js'
import Fastify from 'fastify'
import mapperService from '../app.js'
import { ECHO, originOf, serve } from './http-support.js'

const EXPLICIT = { map: { explicit: true } }

/** A compound document whose members each name the next one twice, `levels` deep (the entry last). */
function doubling(levels: number): Record<string, unknown> {
  const mappings: Record<string, unknown> = { [`m${levels}`]: { $id: `m${levels}`, mapping: { '/x': '/x' } } }
  for (let i = levels - 1; i >= 0; i--) mappings[`m${i}`] = { $id: `m${i}`, mapping: { '/a': `m${i + 1}`, '/b': `m${i + 1}` } }
  return { mappings }
}

/** `each` over the input's list, `levels` times nested: list length ^ levels mapping levels. */
function nestedEach(levels: number): Record<string, unknown> {
  let inner: Record<string, unknown> = { '/z': '/' }
  for (let k = 0; k < levels; k++) inner = { [`/l${k}`]: { input: '/l', each: inner } }
  return { mapping: inner }
}

async function listening(t: Parameters<typeof serve>[0], build: Parameters<typeof serve>[1]): Promise<{ app: FastifyInstance; post: (path: string, body: unknown) => Promise<{ status: number; data: any; headers: Headers }> }> {
  const app = await serve(t, build)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = originOf(app)
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${origin}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
    return { status: response.status, data: await response.json(), headers: response.headers }
  }
  return { app, post }
}

async function health(app: FastifyInstance): Promise<number> {
  return (await fetch(`${originOf(app)}/health`)).status
}

/** Every log line of the shared server below, parsed. */
const logged: Array<Record<string, unknown>> = []
const { default: pino } = await import('pino')
/**
 * One listening server, explicit documents on and the explicit budgets at their defaults, for the
 * tests that only send it documents (each answered on its own, nothing registered, nothing kept
 * but a bounded plan cache) and the property: built, and its worker pool started, once. It logs at
 * info into `logged`, for the test of the budget warning. Load shedding off: under a busy machine's
 * event-loop delay it would answer 503 before a budget is reached (load shedding has its own test,
 * which asks this server for the answer with load shedding off).
 */
const shared = await listening(t, { logger: pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) }), options: { ...EXPLICIT, logging: { level: 'info' }, underPressure: false } })

t.test('the reference-amplification bomb: refused at every depth, the process lives, memory stays bounded', async (t) => {
  const { app, post } = shared
  const before = process.memoryUsage().rss
  for (const levels of [16, 20, 27, 40]) {
    const response = await post('/map', { mapping: doubling(levels), input: { x: 'hello' } })
    t.equal(response.status, 422, `${levels} levels`)
    t.equal(response.data.code, 'InvalidMappingDocument')
    const [error] = response.data.report.errors
    t.equal(error.rule, 'BUDGET-1', 'refused by its static bound before evaluation')
    t.match(error.message, /more than the fanOut budget of 100000$/)
    t.equal(response.data.report.expansion, Math.min(2 ** (levels + 1) - 1, Number.MAX_SAFE_INTEGER))
    t.match(response.data.requestId, /^req_/)
  }
  // Within the static budget, the same shape evaluates.
  const small = await post('/map', { mapping: doubling(10), input: { x: 'hi' } })
  t.equal(small.status, 200)
  t.equal(small.data.valid, true)
  t.equal(await health(app), 200, 'the process answers afterwards')
  t.ok(process.memoryUsage().rss - before < 256 * 1024 * 1024, 'RSS grew by less than 256 MiB')
})

t.test('the bomb hidden from the static bound (behind each) is stopped by the budgets at run time', async (t) => {
  const { app, post } = shared
  const response = await post('/map', { mapping: nestedEach(5), input: { l: Array.from({ length: 100 }, (_, i) => i) } })
  t.equal(response.status, 422)
  t.same(Object.keys(response.data), ['code', 'message', 'budget', 'limit', 'used', 'pointer', 'requestId'])
  t.equal(response.data.code, 'BudgetExceeded')
  t.equal(response.data.budget, 'fanOut')
  t.equal(response.data.limit, EXPLICIT_LIMITS.fanOut)
  t.equal(response.data.used, EXPLICIT_LIMITS.fanOut + 1)
  t.equal(response.data.pointer, '/mapping/~1l4/each/~1l3/each/~1l2/each/~1l1/each/~1l0', 'the innermost pairing that was running')
  t.equal(await health(app), 200)
})

t.test('a CPU-burning mapping stops at its time budget while legitimate requests keep succeeding', async (t) => {
  // Every other budget out of reach, so only the clock can stop it.
  const far = { steps: 1e12, fanOut: 1e12, outputValues: 1e12, outputBytes: 1e12 }
  const { app, post } = await listening(t, {
    mappings: [{ $id: 'echo', mapping: { '/echo': '/' } }],
    // Load shedding off: the burn itself delays the event loop, which is what it would shed on.
    options: { map: { explicit: true }, limits: { explicit: { ...far, timeMs: 300 } }, underPressure: false },
  })
  const burn = post('/map', { mapping: nestedEach(6), input: { l: Array.from({ length: 40 }, (_, i) => i) } })
  const legitimate = Array.from({ length: 20 }, (_, i) => post('/map', { mapping: 'echo', input: { i } }))
  const burned = await burn
  t.equal(burned.status, 422)
  t.equal(burned.data.code, 'BudgetExceeded')
  t.equal(burned.data.budget, 'timeMs')
  t.equal(burned.data.limit, 300)
  t.ok(burned.data.used >= 300, 'it ran at least as long as its budget')
  const answers = await Promise.all(legitimate)
  t.same(answers.map((a) => a.status), Array(20).fill(200), 'every concurrent legitimate request succeeded')
  t.same(answers.map((a) => a.data.echo.i), Array.from({ length: 20 }, (_, i) => i))
  t.equal(await health(app), 200)
})

t.test('input-driven amplification through a registered mapping: 422 at the registered budgets', async (t) => {
  const cross = { $id: 'cross', mapping: { '/pairs': { source: '/l', each: { '/all': { input: '/l' } } } } }
  const { app, post } = await listening(t, { mappings: [cross], options: { limits: { outputValues: 100_000 } } })
  const fine = await post('/map', { mapping: 'cross', input: { l: [1, 2, 3] } })
  t.equal(fine.status, 200)
  t.same(fine.data.pairs[2], { all: [1, 2, 3] })
  const amplified = await post('/map', { mapping: 'cross', input: { l: Array.from({ length: 2000 }, (_, i) => i) } })
  t.equal(amplified.status, 422)
  t.equal(amplified.data.budget, 'outputValues')
  t.equal(amplified.data.limit, 100_000)
  t.equal(amplified.data.mapping, 'cross', 'a registered mapping is named')
  t.equal(amplified.data.pointer, '/mapping/~1pairs/each/~1all')
  t.equal(await health(app), 200)
})

t.test('output built by doubling reads of the output stops at the byte budget', async (t) => {
  const { app, post } = shared
  const mapping: Record<string, unknown> = { '/o0': { constant: 'x'.repeat(1000) } }
  for (let i = 1; i <= 30; i++) mapping[`/o${i}`] = { all: [{ output: '/' }, { output: '/' }] }
  const response = await post('/map', { mapping: { mapping }, input: {} })
  t.equal(response.status, 422)
  t.equal(response.data.budget, 'outputBytes')
  t.equal(response.data.limit, EXPLICIT_LIMITS.outputBytes)
  t.match(response.data.pointer, /^\/mapping\/~1o\d+$/)
  t.equal(await health(app), 200)
})

t.test('a budget trip is logged as a warning with its fields', async (t) => {
  // Only this test's lines: the earlier tests' budget trips were logged too.
  logged.length = 0
  const lines = logged
  const response = await shared.app.inject({ method: 'POST', url: '/map', payload: { mapping: nestedEach(4), input: { l: Array.from({ length: 30 }, (_, i) => i) } } })
  t.equal(response.statusCode, 422)
  const line = lines.find((l) => l.msg === 'evaluation budget exceeded')
  t.ok(line, 'one warning line')
  t.equal(line?.level, 40)
  t.equal(line?.budget, 'fanOut')
  t.equal(line?.status, 422)
  t.equal(line?.requestId, JSON.parse(response.body).requestId)
})

t.test('limits are options: validated at startup, explicit defaults tighter than registered ones', async (t) => {
  const config = resolveConfig({})
  t.ok(config.limits.explicit.steps < config.limits.registered.steps)
  t.ok(config.limits.explicit.timeMs < config.limits.registered.timeMs)
  t.equal(resolveConfig({ limits: { steps: 5, explicit: { timeMs: 7 } } }).limits.registered.steps, 5)
  t.equal(resolveConfig({ limits: { steps: 5, explicit: { timeMs: 7 } } }).limits.explicit.timeMs, 7)
  t.throws(() => resolveConfig({ limits: { stepz: 5 } }), /options\.limits/)
  t.throws(() => resolveConfig({ limits: { depth: 501 } }), /options\.limits\.depth/)
  t.throws(() => resolveConfig({ limits: { explicit: { timeMs: 0 } } }), /options\.limits\.explicit\.timeMs/)
})

t.test('load shedding: past a threshold every request is 503 with the error body and Retry-After', async (t) => {
  // Only the heap threshold, so that an event-loop delay of earlier tests cannot be the reason.
  const pressure = { underPressure: { maxHeapUsedBytes: 1, maxEventLoopDelay: 0, sampleInterval: 5, retryAfter: 7 } }
  const app = await serve(t, { options: pressure })
  const detailed = await serve(t, { options: { ...pressure, errorDetail: 'full' } })
  // Until each has taken its first sample (every 5 ms), polled rather than a fixed pause; bounded.
  for (const server of [app, detailed]) {
    const deadline = Date.now() + 10_000
    while ((await server.inject({ method: 'GET', url: '/health' })).statusCode !== 503 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5))
  }
  for (const url of ['/health', '/mappings']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 503, url)
    t.equal(response.headers['retry-after'], '7')
    const body = JSON.parse(response.body)
    t.same(Object.keys(body), ['code', 'message', 'requestId'])
    t.equal(body.code, 'Unavailable')
    t.equal(body.message, 'An unexpected error occurred', '5xx detail stays hidden by default')
    t.equal(body.requestId, response.headers['x-request-id'])
  }
  const explained = JSON.parse((await detailed.inject({ method: 'GET', url: '/health' })).body)
  t.equal(explained.message, 'Service under pressure (heap in use); retry after 7 s', 'errorDetail: full says why')
  t.equal((await shared.app.inject({ method: 'GET', url: '/health' })).statusCode, 200, 'underPressure: false turns it off')
})

t.test('load shedding judges the event loop only after start-up: a start that blocked the loop sheds nothing, a later stall does', async (t) => {
  const SAMPLE_MS = 50
  const busy = (ms: number): void => {
    for (const end = performance.now() + ms; performance.now() < end;);
  }
  // A host whose own start-up, after the service's, holds the loop for several sample intervals (a
  // slow machine compiling routes): the loop records no delay while held, which
  // @fastify/under-pressure reads as an infinite one.
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(mapperService, { mappings: [ECHO], options: { logging: { level: 'silent' }, underPressure: { maxEventLoopDelay: 100, sampleInterval: SAMPLE_MS } } })
  app.addHook('onReady', async () => busy(6 * SAMPLE_MS))
  await app.ready()
  // Across the samples that cover the start-up: served all along.
  const statuses: number[] = []
  for (const deadline = performance.now() + 3 * SAMPLE_MS; performance.now() < deadline;) {
    statuses.push((await app.inject({ method: 'GET', url: '/health' })).statusCode)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  t.ok(statuses.length > 0 && statuses.every((status) => status === 200), `every request after the start served (${statuses.length})`)
  // Past the start-up: a stall of the loop sheds, as ever (polled until the sample that sees it; bounded).
  let shed = 0
  for (const deadline = Date.now() + 10_000; shed === 0 && Date.now() < deadline;) {
    busy(8 * SAMPLE_MS)
    // One turn of the timers, so the sample that saw the stall is taken before the request.
    await new Promise((resolve) => setTimeout(resolve, 1))
    if ((await app.inject({ method: 'GET', url: '/health' })).statusCode === 503) shed++
  }
  t.equal(shed, 1, 'a stall after the start is shed with 503')
})

t.test('the explicit-plan cache is bounded by the bytes of the documents it holds', async (t) => {
  const settings = (cacheBytes: number) => ({ limits: resolveConfig({}).limits, explicitStdout: false, strict: false, cacheBytes })
  const engine = new EngineService([], {}, () => {}, settings(20_000))
  const documents = Array.from({ length: 60 }, (_, i) => {
    const mapping: Record<string, unknown> = {}
    for (let k = 0; k < 40; k++) mapping[`/f${i}_${k}`] = `/source_${k}`
    return { mapping }
  })
  const first = documents.map((document) => engine.explicit(document))
  t.ok(first.every((entry) => entry.compiled !== null))
  const cache = engine.mapper.cached
  t.ok(cache.bytes <= 20_000, `${cache.bytes} bytes cached`)
  t.ok(cache.entries > 0 && cache.entries < 60, `${cache.entries} documents cached`)
  const newest = engine.explicit(structuredClone(documents[59]!))
  t.equal(newest.cached, true, 'the newest is served from the cache')
  t.equal(newest.compiled, first[59]!.compiled, 'its plan compiled once')
  const oldest = engine.explicit(structuredClone(documents[0]!))
  t.equal(oldest.cached, false, 'the oldest was evicted')
  t.not(oldest.compiled, first[0]!.compiled, 'compiled anew')
  const off = new EngineService([], {}, () => {}, settings(0))
  off.explicit({ mapping: { '/a': '/a' } })
  t.same(off.mapper.cached, { entries: 0, bytes: 0 }, 'cacheBytes: 0 caches nothing')
})

/** Descriptors over a few member names, pointers and the keywords that multiply work. */
const names = fc.constantFrom('m0', 'm1', 'm2', 'm3')
const pointer = fc.constantFrom('/', '/l', '/a', '/x', '/a/b')
const target = fc.constantFrom('/a', '/b', '/c', '/d', '/a/b', '/l/-')
const descriptor = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    pointer,
    names,
    fc.record({ input: pointer, each: fc.oneof(names, fc.dictionary(target, tie('node'), { maxKeys: 3 })) }),
    fc.record({ source: pointer, mapping: fc.oneof(names, fc.dictionary(target, tie('node'), { maxKeys: 3 })) }),
    fc.record({ all: fc.array(fc.oneof(names, fc.record({ output: pointer }), fc.record({ input: pointer })), { minLength: 1, maxLength: 4 }) }),
    fc.record({ source: pointer, random: fc.integer({ min: 1, max: 10_000 }) }),
    fc.record({ source: pointer, pattern: fc.constantFrom('^(a|a)*$', '\\S+@\\S+\\.\\S+', 'a*a*a*a*b') })
  ),
}))
const compound = fc
  .array(fc.dictionary(target, descriptor.node, { minKeys: 1, maxKeys: 4 }), { minLength: 1, maxLength: 4 })
  .map((maps) => ({ mappings: Object.fromEntries(maps.map((mapping, i) => [`m${i}`, { $id: `m${i}`, mapping }])) }))
const input = fc.record({ l: fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 3 })), { maxLength: 60 }), a: fc.constant({ b: 'a'.repeat(40) + '!' }), x: fc.string() })

t.test('property: any document within the body limit evaluates within its budgets or gets 422, never a crash', async (t) => {
  // The shared server: the explicit budgets at their defaults (timeMs 2000; the generated documents
  // trip the count budgets long before, when they trip any).
  const { app } = shared
  const seen = new Map<string, number>()
  await fc.assert(
    fc.asyncProperty(compound, input, async (mapping, value) => {
      const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping, input: value } })
      const body = JSON.parse(response.body)
      const outcome = response.statusCode === 200 ? 'evaluated' : `${response.statusCode} ${body.code} ${body.budget ?? body.report?.errors?.[0]?.rule ?? ''}`
      seen.set(outcome, (seen.get(outcome) ?? 0) + 1)
      if (response.statusCode === 200) return typeof body.valid === 'boolean'
      // EvaluationError: the input made a pairing write through a primitive (a fact of this input).
      return response.statusCode === 422 && ['BudgetExceeded', 'InvalidMappingDocument', 'EvaluationError'].includes(body.code)
    }),
    { numRuns: 200 }
  )
  t.ok((seen.get('evaluated') ?? 0) > 20, `outcomes: ${JSON.stringify(Object.fromEntries(seen))}`)
  t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200)
})

t.test('engine API: budgets per instance and per evaluation, the error names its pairing', async (t) => {
  const mapper = new Mapper({ mappings: [{ $id: 'fan', mapping: { '/out': { source: '/l', each: { '/v': '/' } } } }] }, {}, { limits: { fanOut: 50 } })
  const list = Array.from({ length: 60 }, (_, i) => i)
  await t.rejects(mapper.map('fan', { l: list }), { code: 'BudgetExceeded', budget: 'fanOut', limit: 50, mapping: 'fan', pointer: '/mapping/~1out' })
  t.equal((await mapper.map('fan', { l: list }, undefined, { limits: { fanOut: 100 } })).valid, true, 'widened for one evaluation')
  await t.rejects(mapper.map('fan', { l: list.slice(0, 10) }, undefined, { limits: { steps: 5 } }), { name: 'BudgetExceeded', budget: 'steps', limit: 5 })
  await t.rejects(
    mapper.map({ mapping: { '/m': { source: '/s', pattern: 'a+' } } }, { s: 'a'.repeat(101) }, undefined, { limits: { patternInput: 100 } }),
    { name: 'BudgetExceeded', budget: 'patternInput', limit: 100, used: 101, pointer: '/mapping/~1m' }
  )
  // The plugin's timer unref'd: the evaluation gives up on it at 50 ms, and the process need not
  // wait out its five seconds before it exits.
  const slow = new Mapper({}, { plugins: { wait: (_options: unknown, value: unknown) => new Promise((resolve) => setTimeout(() => resolve(value), 5000).unref()) } }, { limits: { timeMs: 50 } })
  let signal: AbortSignal | undefined
  const watch = (_o: unknown, v: unknown, context: { signal?: AbortSignal }): unknown => {
    signal = context.signal
    return v
  }
  const watcher = new Mapper({}, { plugins: { watch } }, { limits: { timeMs: 50 } })
  await watcher.map({ mapping: { '/v': { source: '/v', watch: {} } } }, { v: 1 })
  t.ok(signal instanceof AbortSignal, 'a plugin sees the deadline as its signal')
  await t.rejects(slow.map({ mapping: { '/v': { source: '/v', wait: {} } } }, { v: 1 }), { name: 'BudgetExceeded', budget: 'timeMs', limit: 50, pointer: '/mapping/~1v' }, 'a plugin await races the deadline')
  const calls = new Mapper({}, { plugins: { id: async (_o: unknown, v: unknown) => v } }, { limits: { pluginCalls: 3 } })
  await t.rejects(calls.map({ mapping: { '/v': { source: '/l', each: { '/x': { source: '/', id: {} } } } } }, { l: [1, 2, 3, 4] }), { name: 'BudgetExceeded', budget: 'pluginCalls', limit: 3 })
  t.throws(() => new Mapper({}, {}, { limits: { nope: 1 } as never }), /limits\.nope is not a budget/)
})
