// Attacks on the budgets of intermediate values and of /validate, through a real listening server
// (127.0.0.1, explicit form on). Each row asserts the answer (422 and the budget named, or the
// /validate report), that the process is alive and serving afterwards, and that /health kept
// answering while the attack ran: a probe asks /health every 25 ms, and the longest wait for an
// answer — or between two answers — stays within a generous bound. The server runs in this
// process, so an attack that blocked the event loop would block the probe as well and show here.
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { buildServer } from '../server.js'

/** A generous bound (the tight figure is a benchmark's): seconds, where the attacks used to take minutes or kill the process. */
const HEALTH_BOUND_MS = 3000

const KB900 = 'x'.repeat(900 * 1024)
const refs = (count: number): string[] => Array(count).fill('/s')

interface Answer {
  readonly status: number
  readonly body: any
}

let app: FastifyInstance
let origin: string

t.before(async () => {
  app = await buildServer({ options: { logging: { level: 'silent' }, map: { explicit: true } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
})

t.teardown(() => app.close())

async function post(path: string, body: unknown): Promise<Answer> {
  const response = await fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: response.status, body: await response.json() }
}

/**
 * Run `attack` while a probe asks /health; the longest the probe waited (for an answer, or from one
 * answer to the next) is returned with the attack's result, and every /health answer must be 200.
 */
async function whileProbing<T>(t: Test, attack: () => Promise<T>): Promise<{ result: T; worstMs: number }> {
  const state = { running: true }
  let worstMs = 0
  let last = performance.now()
  const probe = (async () => {
    while (state.running) {
      const response = await fetch(`${origin}/health`)
      await response.arrayBuffer()
      if (response.status !== 200) t.fail(`/health answered ${response.status} during the attack`)
      const now = performance.now()
      worstMs = Math.max(worstMs, now - last)
      last = now
      await new Promise((resolve) => setTimeout(resolve, 25))
      last = performance.now()
    }
  })()
  try {
    const result = await attack()
    return { result, worstMs: Math.max(worstMs, performance.now() - last) }
  } finally {
    state.running = false
    await probe
  }
}

/** The checks every row ends with: the bound held, and the process still serves. */
async function stillServing(t: Test, worstMs: number): Promise<void> {
  t.ok(worstMs < HEALTH_BOUND_MS, `/health kept answering during the attack (worst wait ${Math.round(worstMs)} ms)`)
  const health = await fetch(`${origin}/health`)
  t.equal(health.status, 200, 'the process is alive and serves /health afterwards')
  const map = await post('/map', { mapping: { mapping: { '/a': '/a' } }, input: { a: 1 } })
  t.strictSame(map.body, { a: 1, valid: true, errors: [] }, 'and evaluates afterwards')
}

/** An explicit /map attack expected to be 422 BudgetExceeded of `budget`. */
async function budgetAttack(t: Test, body: unknown, budget: string, fields: Record<string, unknown> = {}): Promise<void> {
  const { result, worstMs } = await whileProbing(t, () => post('/map', body))
  t.equal(result.status, 422, 'answered 422')
  t.match(result.body, { code: 'BudgetExceeded', budget, ...fields }, `BudgetExceeded naming ${budget}`)
  await stillServing(t, worstMs)
}

/** A document that writes an output `levels` deep through one long pointer, as raw JSON text. */
const deepWrite = (levels: number, extra = ''): string => `{"mapping":{"${'/a'.repeat(levels)}":{"constant":1}${extra}}}`

t.test('500 references to a 900 KB string with as: string (used to take RSS from 109 to 799 MB)', async (t) => {
  const rss = process.memoryUsage().rss
  await budgetAttack(t, { mapping: { mapping: { '/r': { all: refs(500), as: 'string' } } }, input: { s: KB900 } }, 'builtBytes', { limit: 8 * 1024 * 1024, pointer: '/mapping/~1r' })
  t.ok(process.memoryUsage().rss - rss < 200 * 1024 * 1024, 'nothing like 450 MB was built')
})

t.test('600 references (used to be a 500: string too long)', async (t) => {
  await budgetAttack(t, { mapping: { mapping: { '/r': { all: refs(600), as: 'string' } } }, input: { s: KB900 } }, 'builtBytes')
})

t.test('14 such requests in parallel (used to end in "JavaScript heap out of memory")', async (t) => {
  const body = JSON.stringify({ mapping: { mapping: { '/r': { all: refs(500), as: 'string' } } }, input: { s: KB900 } })
  const { result, worstMs } = await whileProbing(t, () => Promise.all(Array.from({ length: 14 }, () => post('/map', body))))
  for (const answer of result) t.match(answer, { status: 422, body: { code: 'BudgetExceeded', budget: 'builtBytes' } })
  await stillServing(t, worstMs)
})

t.test('the other keywords that build: template, regexp_i, a switch key, concat, as: json', async (t) => {
  const input = { s: KB900 }
  const template = {
    source: '/',
    template: refs(500).map((_, i) => `{{p${i}}}`).join(''),
    mapping: Object.fromEntries(refs(500).map((pointer, i) => [`/p${i}`, pointer])),
  }
  await budgetAttack(t, { mapping: { mapping: { '/r': template } }, input }, 'builtBytes')
  await budgetAttack(t, { mapping: { mapping: { '/r': { all: refs(500), regexp_i: true } } }, input }, 'builtBytes')
  await budgetAttack(t, { mapping: { mapping: { '/r': { all: refs(500), as: 'json' } } }, input }, 'builtBytes')
  await budgetAttack(t, { mapping: { mapping: { '/r': { all: [{ all: refs(500) }], switch: { source: '/0', cases: {} } } } }, input }, 'builtBytes')
  await budgetAttack(t, { mapping: { mapping: { '/r': { all: Array(500).fill('/n'), concat: true, random: 1 } } }, input: { n: Array(100_000).fill(0) } }, 'builtBytes')
})

t.test('a refusal holding 500 references prints them all: its error objects are measured', async (t) => {
  // The value is refused by `type` (its error object holds it) and written as `true`: only the
  // error objects carry the 450 MB the answer used to print.
  await budgetAttack(t, { mapping: { mapping: { '/r': { all: refs(500), type: 'string', as: 'boolean' } } }, input: { s: KB900 } }, 'outputBytes', { pointer: '' })
})

t.test('as: json on a value 10,000 levels deep (used to be a 500: stack overflow in JSON.stringify)', async (t) => {
  const asJson = ',"/r":{"output":"/a","as":"json"}'
  await budgetAttack(t, `{"mapping":${deepWrite(10_000, asJson)},"input":{}}`, 'outputDepth', { limit: 1000, used: 1001, pointer: '/mapping/~1r' })
  await budgetAttack(t, `{"mapping":${deepWrite(10_000, asJson)},"input":{},"explain":true}`, 'outputDepth', { pointer: '/mapping/~1r' })
  // An output as deep is refused before the route prints it, explained or not.
  await budgetAttack(t, `{"mapping":${deepWrite(10_000)},"input":{},"explain":true}`, 'outputDepth', { used: 1001, pointer: '' })
})

t.test('/validate: 400 examples that each fan out to 65,000 levels share one budget (used to run 30 s with /health unanswered)', async (t) => {
  const input = { a: Array.from({ length: 255 }, (_, i) => i) }
  const mapping = {
    mapping: { '/r': { source: '/a', each: { '/x': { input: '/a', each: { '/v': '/' } } } } },
    examples: Array.from({ length: 400 }, () => ({ input, output: {} })),
  }
  const started = performance.now()
  const { result, worstMs } = await whileProbing(t, () => post('/validate', { mapping }))
  t.ok(performance.now() - started < 5000, 'answered in seconds at most')
  t.equal(result.status, 200, 'the report, at 200 as always')
  t.equal(result.body.valid, false)
  const errors = result.body.errors as Array<{ rule: string; pointer: string; message: string }>
  const spent = errors.find((error) => /budget/.test(error.message))
  t.match(spent, { rule: 'EXAMPLE-1', message: /evaluation threw: evaluation exceeded its (fanOut|outputValues|steps|timeMs) budget/ }, 'the example that spent the budget fails with it')
  t.ok(errors.length <= 2, `only the examples run before it are reported (${errors.length})`)
  t.match(result.body.warnings, [{ rule: 'EXAMPLE-2', message: /^\d+ examples not run: the examples of one request share one evaluation budget, and it is spent$/ }])
  await stillServing(t, worstMs)
})
