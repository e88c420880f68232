// Large outputs printed a slice at a time (service/print.ts, issue 30): the text is exactly what
// JSON.stringify prints, for any JSON value (deep ones, unicode, lone surrogates, index-like and
// `__proto__` keys, undefined members, non-finite numbers, -0, toJSON), whatever the slice length,
// and a large value is printed over several turns of the event loop. Outputs the engine counted as
// large are noted on their envelope; the known-size lookup of the output budgets counts a noted
// value without a walk, and still trips the budgets.
import fc from 'fast-check'
import t from 'tap'
import { BudgetExceeded, largeOutputBytes, LARGE_OUTPUT_BYTES, Mapper, measure, noteSize } from '../engine/index.js'
import { printSliced, RUN_WEIGHT } from '../service/print.js'
// fast-check's binary unit as drawn, without the second its first use costs a process.
import { binaryUnit } from './codegen-binary.js'

/** Weights of a run printed by one JSON.stringify: 0 walks every container here, member by member. */
const runWeights = fc.constantFrom(0, 1, 12, 40, 200, RUN_WEIGHT)

/** Strings of any UTF-16 code units: lone surrogates, controls, quotes, backslashes. */
const anyString = fc.oneof(fc.string({ unit: binaryUnit }), fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) }), fc.string({ unit: 'grapheme' }))
const anyKey = fc.oneof(anyString, fc.constantFrom('__proto__', '0', '1', '10', '4294967295', 'toJSON', 'length', ''))

/** JSON-like values with the edges JSON.stringify has to decide: undefined, non-finite numbers, -0, holes. */
const { value: edgy } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false, undefined, 0, -0, NaN, Infinity, -Infinity, 1e21, 5e-324, -1.5),
    fc.double(),
    anyString,
    fc.array(tie('value'), { maxLength: 6 }),
    fc.array(fc.tuple(anyKey, tie('value')), { maxLength: 6 }).map((entries) => {
      const object: Record<string, unknown> = {}
      for (const [key, member] of entries) Object.defineProperty(object, key, { value: member, enumerable: true, writable: true, configurable: true })
      return object
    })
  ),
}))

/** A chain of `depth` containers around a value. */
function deep(depth: number, inner: unknown, arrays: boolean): unknown {
  let value = inner
  for (let i = 0; i < depth; i++) value = arrays ? [value] : { d: value }
  return value
}

t.test('the sliced text is exactly JSON.stringify, for any JSON value', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.jsonValue({ maxDepth: 6 }), edgy), fc.constantFrom(0, 1, 4), runWeights, async (value, slice, weight) => {
      const printed = await printSliced(value, slice, weight)
      t.equal(printed, JSON.stringify(value))
      return printed === JSON.stringify(value)
    }),
    { numRuns: 1_000 }
  )
  t.end()
})

t.test('large values, heavy members and light ones, in many slices', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), fc.integer({ min: 1, max: 3_000 }), fc.integer({ min: 0, max: 1_200 }), fc.boolean(), async (value, copies, depth, arrays) => {
      // Many copies of a value (and long strings): members heavy enough to be walked, not stringified whole.
      const wide = { list: Array.from({ length: copies }, () => value), text: 'x\u2028"\ud800'.repeat(copies * 2), deep: deep(depth, value, arrays), sparse: new Array(3) }
      const printed = await printSliced(wide, 0)
      t.equal(printed, JSON.stringify(wide))
      return printed === JSON.stringify(wide)
    }),
    { numRuns: 60 }
  )
  t.end()
})

t.test('objects with many keys, index-like keys and __proto__, heavy and light members in turn', async (t) => {
  const object = JSON.parse('{"__proto__":{"a":1}}') as Record<string, unknown>
  for (let i = 0; i < 5_000; i++) {
    object[`k${i}`] = i % 7 === 0 ? Array.from({ length: 300 }, (_, j) => ({ j, s: 'é'.repeat(j % 5) })) : i % 3 === 0 ? undefined : `v${i}`
    if (i % 500 === 0) object[String(i)] = { index: i }
  }
  for (const weight of [0, 30, RUN_WEIGHT]) t.equal(await printSliced(object, 1, weight), JSON.stringify(object), `run weight ${weight}`)
  t.equal(await printSliced({ only: undefined, big: Array.from({ length: 20_000 }, () => undefined) }, 0), JSON.stringify({ only: undefined, big: Array.from({ length: 20_000 }, () => undefined) }))
})

t.test('toJSON is called with the member key, once, and undefined from it leaves the member out', async (t) => {
  const keys: string[] = []
  const stamp = (value: unknown) => ({
    toJSON(key: string) {
      keys.push(key)
      return value
    },
  })
  const heavy = Array.from({ length: 4_000 }, (_, i) => `item ${i}`)
  const value = {
    date: new Date(0),
    list: [...heavy, stamp('a'), stamp(heavy), stamp(undefined)],
    gone: stamp(undefined),
    big: stamp({ heavy, again: heavy }),
  }
  const expected = JSON.stringify(value)
  const expectedKeys = keys.splice(0)
  for (const weight of [0, 30, RUN_WEIGHT]) {
    t.equal(await printSliced(value, 0, weight), expected, `run weight ${weight}`)
    t.same(keys.splice(0), expectedKeys, 'the same keys, in the same order')
    t.equal(await printSliced(stamp({ heavy }), 0, weight), JSON.stringify(stamp({ heavy })))
    t.equal(await printSliced(stamp(stamp(heavy)), 0, weight), JSON.stringify(stamp(stamp(heavy))), "toJSON's own value with a toJSON is printed by its members")
    keys.length = 0
  }
})

t.test('what JSON.stringify throws, it throws: too deep, circular, BigInt', async (t) => {
  const tooDeep = deep(200_000, 1, true)
  t.throws(() => JSON.stringify(tooDeep), RangeError)
  await t.rejects(printSliced({ heavy: 'x'.repeat(100_000), tooDeep }, 0), RangeError)
  const cycle: Record<string, unknown> = { heavy: 'x'.repeat(100_000), list: Array.from({ length: 5_000 }, (_, i) => i) }
  ;(cycle.list as unknown[]).push(cycle)
  await t.rejects(printSliced(cycle, 0), TypeError)
  await t.rejects(printSliced({ list: [...Array.from({ length: 5_000 }, (_, i) => i), 1n] }, 0), TypeError)
})

t.test('a large value is printed over several turns of the event loop', async (t) => {
  const value = { rows: Array.from({ length: 200_000 }, (_, i) => ({ id: i, name: `row ${i}`, tags: ['a', 'b'] })) }
  let turns = 0
  let going = true
  const spin = (): void => {
    turns++
    if (going) setImmediate(spin)
  }
  setImmediate(spin)
  const printed = await printSliced(value, 1)
  going = false
  t.equal(printed, JSON.stringify(value))
  t.ok(turns > 2, `other callbacks ran while it printed (${turns})`)
})

t.test('the engine notes an envelope as large only when its counted output bytes pass the bound', async (t) => {
  const mapper = new Mapper()
  const plan = mapper.compile({ '/out': '/text' })
  const small = plan.run({ a: 1 }) as object
  t.equal(largeOutputBytes(small), undefined, 'a small output is not noted')
  const input = { text: 'x'.repeat(LARGE_OUTPUT_BYTES + 1) }
  const large = plan.run(input) as object
  t.ok((largeOutputBytes(large) ?? 0) > LARGE_OUTPUT_BYTES, 'a large output is noted with its bytes')
})

t.test('known sizes: measure reads a noted size, at the top and nested, and the budgets still trip', async (t) => {
  const body = { rows: Array.from({ length: 1_000 }, (_, i) => ({ id: i, name: `row ${i}` })) }
  const walked = measure(body, Infinity, Infinity)
  const rows = body.rows
  const rowsSize = measure(rows, Infinity, Infinity)
  noteSize(rows, rowsSize)
  t.same(measure(body, Infinity, Infinity), walked, 'a nested noted container counts as its walk did')
  noteSize(body, walked)
  t.same(measure(body, Infinity, Infinity), walked, 'a noted container at the top counts as its walk did')
  t.same(measure({ wrap: [body] }, Infinity, Infinity), { values: walked.values + 2, bytes: walked.bytes + 2 + 1 + 2 + 4 + 4, depth: walked.depth + 2 }, 'nested two levels down')
  // A noted value written whole still trips each output budget.
  const mapper = new Mapper()
  const plan = mapper.compile({ '/out': '/body' })
  for (const [budget, limit] of [
    ['outputBytes', walked.bytes - 1],
    ['outputValues', walked.values - 1],
    ['outputDepth', walked.depth],
  ] as const) {
    try {
      plan.run({ body }, undefined, { limits: { [budget]: limit } })
      t.fail(`${budget} should trip`)
    } catch (error) {
      t.ok(error instanceof BudgetExceeded && error.budget === budget, `${budget} trips`)
    }
  }
  t.ok(plan.run({ body }), 'and within the budgets it runs')
})
