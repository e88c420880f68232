// Sequencing and concurrency (language.md §13): pairings in order, fan-out concurrent only where
// plugins are involved, one compiled plan shared by concurrent runs.
import t from 'tap'
import { Mapper, type Plugin } from '../engine/index.js'

/** A plugin that records how many calls are in flight at once. */
function gauge(): { plugin: Plugin; peak: () => number; order: string[] } {
  let inFlight = 0
  let peak = 0
  const order: string[] = []
  const plugin: Plugin = async (options: { ms?: number; tag?: string } | null, value) => {
    inFlight++
    peak = Math.max(peak, inFlight)
    order.push(`start ${String(options?.tag ?? value)}`)
    await new Promise((resolve) => setTimeout(resolve, options?.ms ?? 5))
    order.push(`end ${String(options?.tag ?? value)}`)
    inFlight--
    return value
  }
  return { plugin, peak: () => peak, order }
}

t.test('each fans out concurrently when its elements reach a plugin, and keeps element order', async (t) => {
  const { plugin, peak } = gauge()
  const mapper = new Mapper({}, { plugins: { slow: plugin } })
  // Later elements finish first: element i waits (10 - i) * 3 ms.
  const items = Array.from({ length: 10 }, (_, i) => ({ n: i, ms: (10 - i) * 3 }))
  const envelope = await mapper.map(
    { mapping: { '/out': { source: '/items', each: { '/v': { source: '/n', slow: {} } } } } },
    { items }
  )
  t.same(envelope.out, items.map((item) => ({ v: item.n })))
  t.ok(peak() > 1, `${peak()} plugin calls were in flight at once`)
})

t.test('variant lists and first/all evaluate their elements concurrently', async (t) => {
  const { plugin, peak } = gauge()
  const mapper = new Mapper({}, { plugins: { slow: plugin } })
  const envelope = await mapper.map(
    {
      mapping: {
        '/v': [{ source: '/missing', slow: { ms: 10 } }, { source: '/a', slow: { ms: 1 } }],
        '/all': { all: [{ source: '/a', slow: { ms: 5 } }, { source: '/b', slow: { ms: 5 } }] },
      },
    },
    { a: 1, b: 2 }
  )
  t.same(envelope, { v: 1, all: [1, 2], valid: true, errors: [] })
  t.ok(peak() > 1)
})

t.test('pairings of a level run strictly in order, even when asynchronous', async (t) => {
  const { plugin, order } = gauge()
  const mapper = new Mapper({}, { plugins: { slow: plugin } })
  const envelope = await mapper.map(
    {
      mapping: {
        '/a': { source: '/x', slow: { tag: 'a', ms: 15 } },
        '/b': { target: '/a', slow: { tag: 'b', ms: 1 } },
        '/c': { output: '/b' },
      },
    },
    { x: 7 }
  )
  t.same(envelope, { a: 7, b: 7, c: 7, valid: true, errors: [] })
  t.same(order, ['start a', 'end a', 'start b', 'end b'])
})

t.test('a document without plugins evaluates synchronously; one with a plugin returns a promise', async (t) => {
  const mapper = new Mapper({}, { plugins: { slow: gauge().plugin } })
  const pure = mapper.compile({ mapping: { '/a': '/a', '/list': { source: '/l', each: { '/v': '/' } } } })
  const result = pure.run({ a: 1, l: [1, 2] })
  t.notOk(result instanceof Promise)
  t.same(result, { a: 1, list: [{ v: 1 }, { v: 2 }], valid: true, errors: [] })
  const effectful = mapper.compile({ mapping: { '/a': { source: '/a', slow: { ms: 1 } } } })
  const pending = effectful.run({ a: 1 })
  t.ok(pending instanceof Promise)
  t.same(await pending, { a: 1, valid: true, errors: [] })
})

t.test('one compiled plan serves many concurrent runs without sharing state', async (t) => {
  const mapper = new Mapper({}, { plugins: { slow: gauge().plugin } })
  const plan = mapper.compile({
    mapping: {
      '/id': { source: '/id', slow: { ms: 2 } },
      '/check': { source: '/n', minimum: 5 },
      '/rows': { source: '/rows', each: { '/x': { source: '/', slow: { ms: 1 } } } },
    },
  })
  const runs = Array.from({ length: 50 }, (_, i) => plan.run({ id: i, n: i % 10, rows: [i, i + 1] }))
  const envelopes = await Promise.all(runs)
  envelopes.forEach((envelope, i) => {
    if (i % 10 < 5) {
      t.same(envelope, { valid: false, errors: [{ source: '/n', value: i % 10, minimum: 5, message: 'cannot be less than 5' }] }, `run ${i}`)
    } else {
      t.same(envelope, { id: i, check: i % 10, rows: [{ x: i }, { x: i + 1 }], valid: true, errors: [] }, `run ${i}`)
    }
  })
})

t.test('an error appended by a concurrently running sibling short-circuits the level', async (t) => {
  const mapper = new Mapper({}, {
    plugins: {
      refuse: async (_options, value, context) => {
        context.errors.push({ plugin: 'refuse', message: `refused ${String(value)}` })
        return value
      },
    },
  })
  const envelope = await mapper.map(
    { mapping: { '/out': { source: '/items', each: { '/v': { source: '/', refuse: {} }, '/w': '/' } }, '/after': { constant: 1 } } },
    { items: [1, 2] }
  )
  t.same(envelope, {
    valid: false,
    errors: [
      { plugin: 'refuse', message: 'refused 1' },
      { plugin: 'refuse', message: 'refused 2' },
    ],
  })
})

// A compiled mapping reuses the run of an evaluation that ran generated code alone (Run.again):
// nothing of one evaluation may reach the next, whatever the one before did.
t.test('evaluations one after another share nothing: counts, errors, stops, output', async (t) => {
  const mapper = new Mapper({
    mappings: [{ $id: 'm', mapping: { '/a': '/a', '/b': { source: '/b', required: true }, '/list': { source: '/list', each: { '/x': '/x' } } } }],
  }, {})
  const compiled = mapper.compile('m')
  const ok = { a: 'x', b: 1, list: [{ x: 1 }] }
  const first = compiled.run(ok)
  t.same(first, { a: 'x', b: 1, list: [{ x: 1 }], valid: true, errors: [] })
  const failed = compiled.run({ a: 'y' }) as { valid: boolean; errors: unknown[] }
  t.equal(failed.valid, false, 'an evaluation with an error')
  t.equal(failed.errors.length, 1)
  const after = compiled.run(ok) as { errors: unknown[] }
  t.same(after, first, 'the next one has no error of the one before')
  t.not(after.errors, failed.errors, 'and an error list of its own')
  t.not(after, first, 'and an output of its own')
  // A budget that trips stops its run; the next evaluation is whole.
  const long = { a: 'x', b: 1, list: Array.from({ length: 50 }, (_, x) => ({ x })) }
  t.throws(() => compiled.run(long, undefined, { limits: { outputValues: 20 } }), { name: 'BudgetExceeded' })
  t.throws(() => compiled.run(long, undefined, { limits: { steps: 5 } }), { name: 'BudgetExceeded' })
  for (let i = 0; i < 3; i++) t.same(compiled.run(long), { ...long, valid: true, errors: [] }, `whole after the stops (${i})`)
  // Counts start from nothing each time: many evaluations of an input near a budget all pass.
  const near = new Mapper({ mappings: [{ $id: 'n', mapping: { '/list': { source: '/list', each: { '/x': '/x' } } } }] }, {}, { limits: { outputValues: 120 } })
  const nearCompiled = near.compile('n')
  const input = { list: Array.from({ length: 50 }, (_, x) => ({ x })) }
  for (let i = 0; i < 20; i++) nearCompiled.run(input)
  t.same(nearCompiled.run(input), { ...input, valid: true, errors: [] }, 'the twentieth as the first')
})
