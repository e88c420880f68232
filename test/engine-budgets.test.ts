// Budgets that see intermediate values (docs/engine.md §2.12): what a keyword builds counts against
// builtBytes before it is built, the nesting of what the engine prints is bounded by outputDepth
// before JSON.stringify recurses into it, error objects are measured as the output is, and a
// SharedBudget lets several evaluations (the examples of one /validate request) draw on one budget.
import t, { type Test } from 'tap'
import { BudgetExceeded, DEFAULT_LIMITS, MAX_OUTPUT_DEPTH, Mapper, SharedBudget, resolveLimits } from '../engine/index.js'

const KB900 = 'x'.repeat(900 * 1024)
/** 500 references to the same input string: 450 MB once joined, 2.7 KB of document. */
const REFS = Array(500).fill('/s')
const SMALL = { builtBytes: 1024 * 1024 }

/** A document whose first pairing writes an output `levels` deep through one long pointer. */
const deepWrite = (levels: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  mapping: { ['/a'.repeat(levels)]: { constant: 1 }, ...extra },
})

/** Fails the test unless `promise` rejects with a BudgetExceeded of `budget`; returns the error. */
async function tripped(t: Test, promise: Promise<unknown>, budget: string, fields: Record<string, unknown> = {}): Promise<BudgetExceeded> {
  const started = performance.now()
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught
  )
  t.type(error, BudgetExceeded, `${budget}: a BudgetExceeded`)
  t.match(error, { code: 'BudgetExceeded', budget, ...fields }, `${budget}: named, with its fields`)
  t.ok(performance.now() - started < 2000, `${budget}: stopped at once`)
  return error as BudgetExceeded
}

t.test('the new budgets have defaults, and outputDepth is capped', async (t) => {
  t.equal(DEFAULT_LIMITS.builtBytes, 128 * 1024 * 1024)
  t.equal(DEFAULT_LIMITS.outputDepth, 1000)
  t.equal(MAX_OUTPUT_DEPTH, 2000)
  t.equal(resolveLimits({ outputDepth: 2000 }).outputDepth, 2000)
  t.throws(() => resolveLimits({ outputDepth: 2001 }), { message: 'limits.outputDepth cannot exceed 2000' })
  t.throws(() => resolveLimits({ outputDepth: Infinity }), TypeError)
})

t.test('builtBytes: every keyword that builds text or structure counts it before building it', async (t) => {
  const mapper = new Mapper({}, {}, { limits: SMALL, stdout: () => {} })
  const input = { s: KB900 }
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>?]> = [
    ['as: string joins', { all: REFS, as: 'string' }],
    ['as: number joins an array first', { all: REFS, as: 'number' }],
    ['as: json', { all: REFS, as: 'json' }],
    ['regexp_i', { all: REFS, regexp_i: true }],
    ['a switch key', { source: '/', switch: { source: '/k', cases: { default: { constant: 1 } } } }, { k: Array(20).fill(KB900.slice(0, 100_000)) }],
    ['concat (a reference per member)', { all: Array(500).fill('/n'), concat: true, random: 1 }, { n: Array(100_000).fill(0) }],
    [
      'template',
      {
        source: '/',
        template: REFS.map((_, i) => `{{p${i}}}`).join(' '),
        mapping: Object.fromEntries(REFS.map((pointer, i) => [`/p${i}`, pointer])),
      },
    ],
  ]
  for (const [name, descriptor, other] of cases) {
    const error = await tripped(t, mapper.map({ mapping: { '/r': descriptor } }, other ?? input), 'builtBytes', { limit: SMALL.builtBytes, pointer: '/mapping/~1r' })
    t.ok(error.used > SMALL.builtBytes, `${name}: used is past the limit`)
  }
  // A `stdout` print counts its text too (here the pretty-printed value of a large string).
  await tripped(t, mapper.map({ mapping: { '/a': '/s', '/b': '/s' }, stdout: true }, input), 'builtBytes')
  t.equal(process.memoryUsage().rss < 2 * 1024 ** 3, true, 'nothing near 450 MB was built')
})

t.test('builtBytes is cumulative, and values within it are what they always were', async (t) => {
  const mapper = new Mapper({}, {}, { limits: { builtBytes: 100 } })
  // Each join alone fits; together they pass the budget.
  const document = { mapping: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`/t${i}`, { source: '/list', as: 'string' }])) }
  await tripped(t, mapper.map(document, { list: ['abcdefghij', 'abcdefghij'] }), 'builtBytes', { limit: 100 })
  const plain = new Mapper()
  const envelope = await plain.map(
    {
      mapping: {
        '/joined': { source: '/nested', as: 'string' },
        '/number': { source: '/one', as: 'number' },
        '/json': { source: '/nested', as: 'json' },
        '/re': { source: '/nested', regexp_i: true },
        '/flat': { source: '/lists', concat: true },
        '/text': { source: '/', template: '{{x}} and {{y}}!', mapping: { '/x': '/nested', '/y': '/one' } },
        '/case': { source: '/', switch: { source: '/one', cases: { 7: { constant: 'seven' } } } },
      },
    },
    { nested: [1, [2, [3, null]], [], 'x', { o: 1 }], one: [7], lists: [[1, 2], 3, [[4]], []] }
  )
  t.strictSame(envelope.joined, '1,2,3,,,x,[object Object]')
  t.equal(envelope.number, 7)
  t.equal(envelope.json, '[1,[2,[3,null]],[],"x",{"o":1}]')
  t.equal(envelope.re, '/1,2,3,,,x,[object Object]/i')
  t.strictSame(envelope.flat, [1, 2, 3, [4]])
  t.equal(envelope.text, '1,2,3,,,x,[object Object] and 7!')
  t.equal(envelope.case, 'seven')
  // concat flattens what Array.prototype.concat flattens; long lists do not overflow the stack.
  const lists = [[1, [2]], [], 3, null, [null, 'x'], { o: [4] }]
  const flat = await plain.map({ mapping: { '/flat': { source: '/lists', concat: true } } }, { lists })
  t.strictSame(flat.flat, ([] as unknown[]).concat(...lists))
  const long = await plain.map({ mapping: { '/n': { source: '/lists', concat: true, as: 'string' } } }, { lists: Array(200_000).fill([1]) })
  t.equal((long.n as string).length, 399_999, '200,000 members flattened (the spread used to overflow the stack)')
})

t.test('explain counts what run counts (a switch key is joined once)', async (t) => {
  const mapper = new Mapper({}, {}, { limits: { builtBytes: 1500 } })
  const document = { mapping: { '/r': { source: '/', switch: { source: '/k', cases: { default: { constant: 'taken' } } } } } }
  const input = { k: Array(100).fill('abcdefghi') }
  t.equal((await mapper.map(document, input)).r, 'taken', 'a 999-character key within 1,500 bytes')
  const explained = await mapper.explain(document, input)
  t.equal(explained.envelope.r, 'taken', 'and under explain')
  t.match(explained.explain.pairings[0], { branch: { switch: 'default' } })
})

t.test('outputDepth: as: json, stdout and the output are bounded before anything recurses', async (t) => {
  const mapper = new Mapper({}, {}, { stdout: () => {} })
  // as: json on a value 10,000 levels deep (built through one long pointer, read back from the output).
  await tripped(t, mapper.map(deepWrite(10_000, { '/r': { output: '/a', as: 'json' } }), {}), 'outputDepth', { limit: 1000, used: 1001, pointer: '/mapping/~1r' })
  await tripped(t, mapper.explain(deepWrite(10_000, { '/r': { output: '/a', as: 'json' } }), {}), 'outputDepth', { pointer: '/mapping/~1r' })
  // The same value written by reference is refused as it is written.
  await tripped(t, mapper.map(deepWrite(10_000, { '/r': { output: '/a' } }), {}), 'outputDepth', { pointer: '/mapping/~1r' })
  // The output itself, when nothing else measured it: at the end, before it can be printed.
  await tripped(t, mapper.map(deepWrite(10_000), {}), 'outputDepth', { used: 1001, pointer: '' })
  await tripped(t, mapper.explain(deepWrite(10_000), {}), 'outputDepth', { pointer: '' })
  await tripped(t, mapper.map({ ...deepWrite(3000), stdout: true }, {}), 'outputDepth')
  // Exactly the limit passes, one more does not (a pointer of k tokens nests the output k deep).
  const ten = { outputDepth: 10 }
  t.equal((await mapper.map(deepWrite(10), {}, undefined, { limits: ten })).valid, true, '10 levels within outputDepth 10')
  await tripped(t, mapper.map(deepWrite(11), {}, undefined, { limits: ten }), 'outputDepth', { limit: 10, used: 11 })
  t.equal((await mapper.map({ mapping: { '/r': { source: '/v', as: 'json' } } }, { v: [[[[[[[[[[1]]]]]]]]]] }, undefined, { limits: ten })).r, '[[[[[[[[[[1]]]]]]]]]]')
  await tripped(t, mapper.map({ mapping: { '/r': { source: '/v', as: 'json' } } }, { v: [[[[[[[[[[[1]]]]]]]]]]] }, undefined, { limits: ten }), 'outputDepth', { used: 11 })
  // Nesting through mapping levels (each, mapping, references) is seen as well as through pointers.
  const chain = (levels: number): unknown => {
    let value: unknown = { v: 0 }
    for (let i = 1; i < levels; i++) value = { v: i, c: value }
    return value
  }
  const node = new Mapper({ mappings: [{ $id: 'node', mapping: { '/v': '/v', '/c': { source: '/c', mapping: 'node' } } }] })
  t.equal((await node.map('node', chain(10), undefined, { limits: ten })).valid, true)
  await tripped(t, node.map('node', chain(11), undefined, { limits: ten }), 'outputDepth', { limit: 10, used: 11, mapping: 'node' })
  // The output, its list, an element, the element's list, its element: 5 levels.
  const lists = await node.map({ mapping: { '/l': { source: '/l', each: { '/x': { source: '/x', each: { '/y': '/y' } } } } } }, { l: [{ x: [{ y: 1 }] }] }, undefined, { limits: { outputDepth: 5 } })
  t.strictSame(lists.l, [{ x: [{ y: 1 }] }], 'each adds its array and its element')
  await tripped(t, node.map({ mapping: { '/l': { source: '/l', each: { '/x': { source: '/x', each: { '/y/z': '/y' } } } } } }, { l: [{ x: [{ y: 1 }] }] }, undefined, { limits: { outputDepth: 5 } }), 'outputDepth', { used: 6 })
})

t.test('error objects hold the values they refuse: they are measured like the output', async (t) => {
  const mapper = new Mapper({}, {}, { limits: { outputBytes: 1024 * 1024 } })
  // Refused by `type`, written as `true`: only the error object holds the 500 references.
  await tripped(t, mapper.map({ mapping: { '/r': { all: REFS, type: 'string', as: 'boolean' } } }, { s: KB900 }), 'outputBytes', { limit: 1024 * 1024, pointer: '' })
  const fine = await mapper.map({ mapping: { '/r': { source: '/s', type: 'number' } } }, { s: 'short' })
  t.match(fine, { valid: false, errors: [{ source: '/s', value: 'short' }] })
})

t.test('a SharedBudget: evaluations draw on one budget in turn', async (t) => {
  const mapper = new Mapper()
  const document = { mapping: { '/r': { source: '/list', each: { '/v': '/' } } } }
  const input = { list: Array.from({ length: 100 }, (_, i) => i) }
  const probe = new SharedBudget()
  await mapper.map(document, input, undefined, { budget: probe })
  const levels = probe.levels
  t.ok(levels > 100, `one evaluation enters ${levels} levels`)
  const limit = 2 * levels + 10
  const shared = new SharedBudget({ fanOut: limit })
  t.equal((await mapper.map(document, input, undefined, { budget: shared })).valid, true)
  t.equal((await mapper.map(document, input, undefined, { budget: shared })).valid, true)
  t.equal(shared.levels, 2 * levels, 'the second evaluation went on from the first')
  await tripped(t, mapper.map(document, input, undefined, { budget: shared }), 'fanOut', { limit, used: limit + 1 })
  t.type(shared.tripped, BudgetExceeded, 'the budget remembers its trip')
  await tripped(t, mapper.map({ mapping: { '/a': { constant: 1 } } }, {}, undefined, { budget: shared }), 'fanOut', { used: limit + 1 })
  // An evaluation that fails for another reason still spends what it used.
  const other = new SharedBudget({ steps: 5000 })
  const throwing = { mapping: { '/r': { source: '/list', each: { '/v': '/' } }, '/s': { constant: 'text' }, '/s/x': { constant: 1 } } }
  await t.rejects(mapper.map(throwing, input, undefined, { budget: other }), { code: 'EvaluationError' })
  t.ok(other.steps > 100, 'the failed evaluation counted its steps')
  // The clock is shared too: it runs from the budget's creation.
  const clock = new SharedBudget({ timeMs: 0 })
  await new Promise((resolve) => setTimeout(resolve, 5))
  await tripped(t, mapper.map({ mapping: { '/r': { source: '/list', each: { '/v': '/' } } } }, { list: Array(2000).fill(0) }, undefined, { budget: clock }), 'timeMs')
})

t.test('examples on a SharedBudget: the one that spends it fails, the rest are not run', async (t) => {
  const mapper = new Mapper()
  const example = { input: { list: Array.from({ length: 100 }, (_, i) => i) }, output: { n: 100 } }
  const document = { mapping: { '/n': { source: '/list', each: { '/v': '/' } } }, examples: Array(10).fill(example) }
  const probe = new SharedBudget()
  await mapper.examples({ ...document, examples: [example] }, { budget: probe })
  const limit = 2 * probe.levels + 10
  const each = await mapper.examples(document, { run: { limits: { fanOut: limit } } })
  t.equal(each.length, 10, 'budgets of their own: every example runs')
  const shared = await mapper.examples(document, { budget: new SharedBudget({ fanOut: limit }) })
  t.equal(shared.length, 3, 'the third example spends the budget; the other seven do not run')
  t.match(shared[2], { pass: false, error: new RegExp(`fanOut budget: ${limit + 1} of at most ${limit}`) })
})

t.test('the depth budget holds on every path, whatever the extra an evaluation is given', async (t) => {
  // A context's own fields are not extras: an extra named `depth` once overwrote the count the
  // depth budget is kept by, and nested levels then never reached it.
  const nested = { mapping: { '/a': { source: '/a', each: { '/b': { source: '/b', each: { '/c': '/c' } } } } } }
  const input = { a: [{ b: [{ c: 1 }] }] }
  for (const codegen of [true, false]) {
    const mapper = new Mapper({}, {}, { codegen, limits: { depth: 3 } })
    for (const extra of [undefined, { depth: -100 }, { cachedPaths: { source: '/', target: '/' } }]) {
      let thrown: unknown
      try {
        mapper.compile(nested).run(input, extra)
      } catch (error) {
        thrown = error
      }
      t.match(thrown, { budget: 'depth', limit: 3, used: 4 }, `codegen ${String(codegen)}, extra ${JSON.stringify(extra)}`)
    }
    t.strictSame(new Mapper({}, {}, { codegen, limits: { depth: 6 } }).compile(nested).run(input, { depth: -100 }), { a: [{ b: [{ c: 1 }] }], valid: true, errors: [] })
  }
})
