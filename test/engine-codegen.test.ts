// Generated levels (engine/codegen/level.ts): the same envelopes as the closure plan, whatever text a
// document carries, and document text never runs as code.
import { pathToFileURL } from 'node:url'
import fc from 'fast-check'
import t from 'tap'
import { literal } from '../engine/codegen/code.js'
import { MAX_GENERATED, MAX_INLINE_TOKENS, MAX_SOURCE, PART_SOURCE } from '../engine/codegen/level.js'
import { Mapper } from '../engine/index.js'
import { escapeToken } from '../engine/pointer.js'
import { binaryUnit } from './codegen-binary.js'
import { compiledEntry } from './proc-compiled.js'
import { untracked } from './startup-support.js'

const SENTINEL = '__codegenRan'
const sentinelCode = `globalThis.${SENTINEL} = 1`

/** Text built to break out of a string literal, a template or a comment if it were pasted into source. */
const HOSTILE = [
  `"]; ${sentinelCode}; ["`,
  `'); ${sentinelCode}; ('`,
  `\${${sentinelCode}}`,
  `\`; ${sentinelCode}; \``,
  `*/ ${sentinelCode} /*`,
  `\n${sentinelCode}\n//`,
  '\u2028',
  '\u2029',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'length',
  '\\',
  '"',
  "'",
  '${}',
  '}',
  '~0~1/',
  '',
  '0',
  '-',
]

// binaryUnit: fast-check's 'binary' unit, the same draws without its first use costing seconds (codegen-binary.ts).
const hostileKey = fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ maxLength: 6 }), fc.string({ unit: binaryUnit, maxLength: 4 }))
/** Few keys, so that documents and inputs meet: reads find values, finds match, each runs over arrays. */
const narrowKey = fc.constantFrom('a', 'b', 'c', '0', '1', '-', '__proto__', 'constructor', '')
const pointerTo = (tokens: string[]): string => tokens.map((token) => `/${escapeToken(token)}`).join('')

/** The documents, inputs and budgets of one property, over keys drawn from `key`. */
function arbitraries(key: fc.Arbitrary<string>) {
  const hostile = key
  const pointer = fc.array(hostile, { minLength: 1, maxLength: 3 }).map(pointerTo)
  const value = fc.oneof(hostile, fc.jsonValue({ maxDepth: 2 }))

  // Right sides in every form a generated level writes out (keyword steps, the combinators of
  // pointers, structural levels nested in place), and some it leaves to the compiled plan.
  const { rightSide } = fc.letrec<{ rightSide: unknown; pairings: Record<string, unknown> }>((tie) => ({
    rightSide: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      pointer,
      fc.record({ source: pointer, default: value }),
      fc.record({ constant: value }),
      fc.record({ source: pointer, as: fc.constantFrom('string', 'number', 'boolean', 'json') }),
      fc.record({ input: pointer, type: fc.constantFrom('string', 'number', 'integer', 'object', 'array', 'null', 'boolean') }, { requiredKeys: [] }),
      fc.record({ source: pointer, required: fc.boolean() }, { requiredKeys: ['required'] }),
      fc.record(
        { source: pointer, minimum: fc.integer({ min: -5, max: 5 }), maxLength: fc.nat(4), enum: fc.array(value, { maxLength: 3 }), pattern: fc.constantFrom('^a', 'b$', '.') },
        { requiredKeys: ['source'] }
      ),
      fc.record({ source: pointer, find: fc.record({ eq: fc.dictionary(hostile, value, { maxKeys: 2 }), pointer }, { requiredKeys: ['eq'] }) }),
      fc.record({ first: fc.array(pointer, { maxLength: 3 }), as: fc.constantFrom('string', 'number') }, { requiredKeys: ['first'] }),
      fc.record({ last: fc.array(fc.oneof(pointer, fc.constant('name')), { maxLength: 3 }) }),
      fc.record({ source: pointer, each: tie('pairings') }),
      fc.record({ source: pointer, mapping: tie('pairings'), default: value }, { requiredKeys: ['mapping'] }),
      fc.array(pointer, { minLength: 1, maxLength: 3 })
    ),
    pairings: fc.dictionary(pointer, tie('rightSide'), { maxKeys: 3 }),
  }))

  /** Budgets small enough that the properties meet every kind of trip, placed in a nested level or not. */
  const limitsOf = fc.option(
    fc.record({ depth: fc.integer({ min: 0, max: 4 }), steps: fc.integer({ min: 1, max: 60 }), outputValues: fc.integer({ min: 1, max: 40 }) }, { requiredKeys: [] }),
    { nil: undefined }
  )

  const documentOf = fc.dictionary(pointer, rightSide, { minKeys: 1, maxKeys: 8 }).map((mapping) => ({ mapping }))
  const member = fc.oneof(value, fc.dictionary(hostile, value, { maxKeys: 3 }))
  const inputOf = fc.dictionary(hostile, fc.oneof(member, fc.dictionary(hostile, member, { maxKeys: 3 }), fc.array(fc.dictionary(hostile, member, { maxKeys: 3 }), { maxLength: 3 })), { maxKeys: 6 })
  return { documentOf, inputOf, limitsOf }
}

async function envelope(codegen: boolean, document: object, input: unknown, limits?: object): Promise<string> {
  try {
    const mapper = new Mapper({}, {}, { codegen, stdout: () => {}, ...(limits === undefined ? {} : { limits }) })
    return JSON.stringify(await mapper.map(document as never, input))
  } catch (error) {
    return `threw ${(error as Error).name}: ${(error as Error).message}`
  }
}

t.test('a string literal is the only way document text enters generated source, and it round-trips', async (t) => {
  fc.assert(
    fc.property(fc.oneof(hostileKey, fc.string({ unit: binaryUnit })), (text) => {
      const source = literal(text)
      t.notOk(/[\u2028\u2029]/.test(source), 'line and paragraph separators are escaped')
      // eslint-disable-next-line no-new-func -- the property under test
      return new Function(`return ${source}`)() === text && JSON.parse(source) === text
    }),
    { numRuns: 500 }
  )
})

// The two properties draw 400 documents each (1000 each before, about half of this file's CPU):
// every right-side form they draw from, and every budget they set, is also run below as an
// explicit case (`every right-side form …`), so the runs they no longer make are random
// combinations, not forms or budgets left unmet.
for (const [keys, key] of [['hostile', hostileKey], ['few', narrowKey]] as const) {
  t.test(`generated levels give the closure plan's envelope on ${keys} keys and values, and run nothing`, async (t) => {
    const { documentOf, inputOf, limitsOf } = arbitraries(key)
    delete (globalThis as Record<string, unknown>)[SENTINEL]
    await fc.assert(
      fc.asyncProperty(documentOf, inputOf, limitsOf, async (document, input, limits) => {
        const generated = await envelope(true, document, input, limits)
        const closures = await envelope(false, document, input, limits)
        if (generated !== closures) throw new Error(`generated ${generated}\nclosures ${closures}`)
        return (globalThis as Record<string, unknown>)[SENTINEL] === undefined
      }),
      { numRuns: 400 }
    )
    t.equal((globalThis as Record<string, unknown>)[SENTINEL], undefined, 'no document text ran')
    t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is untouched')
  })
}

t.test('the hostile keys, every one in one document, read and write as data', async (t) => {
  const mapping: Record<string, string> = {}
  const input: Record<string, unknown> = {}
  HOSTILE.forEach((key, i) => {
    mapping[`/out${i}/${escapeToken(key)}`] = `/${escapeToken(key)}`
    mapping[`/${escapeToken(key)}`] = `/${escapeToken(key)}`
    input[key] = `value ${i}`
  })
  const generated = await envelope(true, { mapping }, input)
  t.equal(generated, await envelope(false, { mapping }, input))
  t.match(JSON.parse(generated), { valid: true, out0: { [HOSTILE[0]!]: 'value 0' } })
  t.equal((globalThis as Record<string, unknown>)[SENTINEL], undefined)
})

t.test('every right-side form the properties draw, under every budget they set, top-level and nested: the closure plan\'s envelope', async (t) => {
  const [h0, h1, h2, h3, h4, h5, h6] = [HOSTILE[0]!, '__proto__', 'constructor', '\u2028', '~0~1/', '', '${}']
  const at = (...tokens: string[]): string => pointerTo(tokens)
  // In the order of the properties' `rightSide`, each over hostile keys.
  const forms: Array<[name: string, right: unknown]> = [
    ['a pointer', at(h1, h0)],
    ['source and default', { source: at('missing'), default: h0 }],
    ['a constant', { constant: { [h6]: [h3, 1] } }],
    ['as string', { source: at(h2), as: 'string' }],
    ['as number', { source: at('n'), as: 'number' }],
    ['as boolean', { source: at(h5), as: 'boolean' }],
    ['as json', { source: at(h1), as: 'json' }],
    ['input and type', { input: at(h4), type: 'string' }],
    ['type alone', { type: 'object' }],
    ['required, missing', { source: at('missing'), required: true }],
    ['required: false', { source: at(h0), required: false }],
    ['validations that hold', { source: at('n'), minimum: 2, maxLength: 3, enum: [5, h0], pattern: '^a' }],
    ['validations that fail', { source: at(h0), minimum: 2, maxLength: 3, enum: [5], pattern: 'b$' }],
    ['find with a pointer', { source: at('list'), find: { eq: { [h1]: 'v' }, pointer: at(h2) } }],
    ['find', { source: at('list'), find: { eq: { [h6]: 1 } } }],
    ['first, as', { first: [at('missing'), at(h0)], as: 'number' }],
    ['last', { last: [at(h2), 'name'] }],
    ['each', { source: at('list'), each: { [at(h3)]: at(h1), [at('x', h1)]: { constant: h0 } } }],
    ['mapping with default', { source: at(h1), mapping: { [at(h0)]: at(h2) }, default: h4 }],
    ['an array of pointers', [at('missing'), at(h2), at('n')]],
  ]
  const input = { [h0]: `a${h0}`, [h1]: { [h0]: 1, [h2]: [h3] }, [h2]: 'abc', [h4]: 7, [h5]: '', [h6]: null, n: 5, list: [{ [h1]: 'v', [h2]: 'found' }, { [h6]: 1 }, 'str'], name: 'x' }
  const budgets = [undefined, { depth: 0 }, { depth: 1 }, { steps: 1 }, { steps: 4 }, { outputValues: 1 }, { outputValues: 3 }]
  delete (globalThis as Record<string, unknown>)[SENTINEL]
  for (const [name, right] of forms) {
    for (const limits of budgets) {
      const mapping = { [at(h0, 'out')]: right, '/k': '/n' }
      for (const [placed, document] of [
        ['top-level', { mapping }],
        ['nested', { mapping: { [at('nested', h1)]: { source: '', mapping } } }],
      ] as const) {
        t.equal(await envelope(true, document, input, limits), await envelope(false, document, input, limits), `${name}, ${placed}, ${JSON.stringify(limits ?? 'no budgets')}`)
      }
    }
  }
  t.equal((globalThis as Record<string, unknown>)[SENTINEL], undefined, 'no document text ran')
})

t.test(`a level past ${MAX_GENERATED} pairings keeps the closure plan and gives the same envelope`, async (t) => {
  const mapping: Record<string, string> = {}
  const input: Record<string, number> = {}
  for (let i = 0; i <= MAX_GENERATED; i++) {
    mapping[`/f${i}`] = `/f${i}`
    input[`f${i}`] = i
  }
  const generated = await envelope(true, { mapping }, input)
  t.equal(generated, await envelope(false, { mapping }, input))
  t.equal(JSON.parse(generated)[`f${MAX_GENERATED}`], MAX_GENERATED)
})

t.test('plugins: a generated level continues asynchronously from the pairing that returned a promise', async (t) => {
  const calls: string[] = []
  const plugins = {
    later: async (_options: unknown, value: unknown) => {
      await new Promise((resolve) => setTimeout(resolve, 1))
      calls.push(String(value))
      return `${String(value)}!`
    },
  }
  const document = { mapping: { '/a': '/a', '/b': { source: '/b', later: {} }, '/c': '/c', '/d': { source: '/d', later: {} } } }
  const run = async (codegen: boolean): Promise<unknown> => new Mapper({}, { plugins }, { codegen }).map(document, { a: 1, b: 'x', c: 3, d: 'y' })
  t.strictSame(await run(true), { a: 1, b: 'x!', c: 3, d: 'y!', valid: true, errors: [] })
  t.strictSame(await run(false), await run(true))
  t.strictSame(calls, ['x', 'y', 'x', 'y', 'x', 'y'], 'each pairing ran once per run, in order')
})

t.test('a process that forbids code generation gets the closure plan and the same envelope', async (t) => {
  // A real Node process started with --disallow-code-generation-from-strings (what a locked-down
  // host runs): compiling must not throw, and the envelope is the generated path's. It imports the
  // shipped engine compiled (proc-compiled.ts), as such a host would, with neither the test loader
  // nor tap's process-info hooks in the process (untracked): no part of the subject, they cost the
  // child most of its start.
  const engine = new URL('../engine/index.js', pathToFileURL(await compiledEntry())).href
  const script = [
    `import { Mapper } from ${JSON.stringify(engine)}`,
    'const mapper = new Mapper({}, {}, { stdout: () => {} })',
    "const envelope = await mapper.map({ mapping: { '/t': '/title', '/n': { source: '/a/b', as: 'string' } } }, { title: 'x', a: { b: 2 } })",
    'process.stdout.write(JSON.stringify(envelope))',
  ].join('\n')
  const { execFile } = await import('node:child_process')
  const out = await new Promise<string>((resolve, reject) => {
    execFile(...untracked(process.execPath, ['--disallow-code-generation-from-strings', '--input-type=module', '-e', script]), { cwd: new URL('..', import.meta.url), timeout: 60000 }, (error, stdout, stderr) =>
      error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`))
    )
  })
  t.strictSame(JSON.parse(out), { t: 'x', n: '2', valid: true, errors: [] })
  t.equal(out, JSON.stringify(await new Mapper({}, {}, { stdout: () => {} }).map({ mapping: { '/t': '/title', '/n': { source: '/a/b', as: 'string' } } }, { title: 'x', a: { b: 2 } })))
})

t.test('a registered entry compiled once follows re-registration, and a name that starts shadowing pointers', async (t) => {
  const mapper = new Mapper({ mappings: [{ $id: 'entry', mapping: { '/a': '/x' } }] }, {}, { stdout: () => {} })
  const compiled = mapper.compile('entry')
  t.strictSame(compiled.run({ x: 1, y: 2 }), { a: 1, valid: true, errors: [] })
  mapper.register({ $id: 'entry', mapping: { '/b': '/y' } })
  t.strictSame(compiled.run({ x: 1, y: 2 }), { b: 2, valid: true, errors: [] }, 'the new document, not the one looked up before')
  mapper.register({ $id: '/y', mapping: { '/named': { constant: true } } })
  t.strictSame(compiled.run({ x: 1, y: 2 }), { b: { named: true }, valid: true, errors: [] }, 'a registered id now names what /y used to read')
})

t.test(`pointers past ${MAX_INLINE_TOKENS} tokens go through their compiled closures, and a level past ${MAX_SOURCE} characters of source keeps the closure plan`, async (t) => {
  // 10,000 tokens once made 40,000 lines of one function: V8 ran out of heap compiling it.
  const long = '/a'.repeat(10_000)
  const deep: Record<string, unknown> = {}
  let cursor = deep
  for (let i = 0; i < 9_999; i++) cursor = (cursor.a = {}) as Record<string, unknown>
  cursor.a = 'bottom'
  const document = { mapping: { '/short/x': '/b', ['/w' + '/a'.repeat(500)]: { constant: 1 }, '/r': { source: long, default: 'none' }, '/m': '/c'.repeat(17) } }
  const input = { b: 2, a: deep, c: JSON.parse(`${'{"c":'.repeat(16)}"m"${'}'.repeat(16)}`) }
  const generated = await envelope(true, document, input)
  t.equal(generated, await envelope(false, document, input))
  t.match(JSON.parse(generated), { short: { x: 2 }, r: { a: 'bottom' }, m: 'm', valid: true })

  // Each of these pairings writes about 7 KB of source: 100 of them write about 700 KB, well past
  // MAX_SOURCE (900 did the same at nine times the cost), and still under MAX_GENERATED pairings.
  const wide: Record<string, unknown> = {}
  for (let i = 0; i < 100; i++) wide[`/f${i}`] = { first: Array.from({ length: 40 }, (_, k) => `/p${k}/q${i}`), default: i }
  const sparse = { p39: { q5: 'last' } }
  const sources: string[] = []
  const a = await watchingSources(sources, () => envelope(true, { mapping: wide }, sparse))
  t.equal(a, await envelope(false, { mapping: wide }, sparse))
  t.match(JSON.parse(a), { f0: 0, f5: 'last', f99: 99 })
  // Document text enters generated source only as literals: had the level been generated, its
  // source would name the last pairing's tokens (30 such pairings, under the bound, do).
  t.notOk(sources.some((source) => source.includes(literal('q99'))), 'no source was generated for the level')
})

/** Run `work` with the sources the engine generates meanwhile collected in `sources`, as they are handed to the host. */
async function watchingSources<T>(sources: string[], work: () => Promise<T>): Promise<T> {
  const host = globalThis.Function
  globalThis.Function = function (...parameters: string[]) {
    sources.push(parameters.at(-1)!)
    return host(...parameters)
  } as FunctionConstructor
  try {
    return await work()
  } finally {
    globalThis.Function = host
  }
}

t.test(`a level past ${PART_SOURCE} characters of source runs in parts, each pairing as it runs in one function`, async (t) => {
  const sources: string[] = []
  // 120 coerced, validated pairings (a level of several parts), with a nested level in place.
  const mapping: Record<string, unknown> = { '/people': { source: '/people', each: { '/name': '/n', '/age': { source: '/a', as: 'number' } } } }
  const input: Record<string, unknown> = { people: [{ n: 'a', a: '1' }, { n: 'b' }] }
  for (let i = 0; i < 120; i++) {
    mapping[`/out/f${i}`] = { source: `/f${i}`, type: i % 2 === 0 ? 'string' : 'number', default: i % 2 === 0 ? `d${i}` : i, as: i % 2 === 0 ? 'number' : 'string' }
    if (i % 7 !== 3) input[`f${i}`] = i % 2 === 0 ? String(i * 1.5) : i * 2
  }
  const cases: [string, object, unknown, object?][] = [
    ['every pairing written', { mapping }, input],
    // A failing pairing in the last part stops the level there, as in one function.
    ['a type error in a late part', { mapping }, { ...input, f117: 'not a number' }],
    ['a required value missing in a late part', { mapping: { ...mapping, '/out/last': { source: '/missing', required: true } } }, input],
    // A budget tripped inside a later part is placed at its pairing.
    ['the output budget tripped in a late part', { mapping }, input, { outputValues: 100 }],
    ['the step budget tripped in a late part', { mapping }, input, { steps: 90 }],
  ]
  await watchingSources(sources, async () => {
    for (const [name, document, given, limits] of cases) {
      const generated = await envelope(true, document, given, limits)
      t.equal(generated, await envelope(false, document, given, limits), name)
    }
  })
  t.ok(sources.some((source) => /^function free2\(/m.test(source)), 'the level was split into at least three parts')
  t.match(JSON.parse(await envelope(true, { mapping }, input)), { people: [{ name: 'a', age: 1 }, { name: 'b' }], out: { f0: 0, f1: '2', f3: '3', f118: 177 }, valid: true })
  t.match(await envelope(true, { mapping }, { ...input, f117: 'not a number' }), /"valid":false/)
  t.match(await envelope(true, { mapping }, input, { outputValues: 100 }), /^threw BudgetExceeded/)

  // A level with a pairing that has no generated form (a plugin) runs its `level` function in
  // parts; a promise met in a later part continues from that pairing.
  const plugins = {
    later: async (_options: unknown, value: unknown) => {
      await new Promise((resolve) => setTimeout(resolve, 1))
      return `${String(value)}!`
    },
  }
  const withPlugin = { mapping: { ...mapping, '/out/f119': { source: '/f119', later: {} }, '/out/z': '/f0' } }
  sources.length = 0
  const generated = await watchingSources(sources, () => new Mapper({}, { plugins }, { stdout: () => {} }).map(withPlugin as never, input))
  t.ok(sources.some((source) => /^function level2\(/m.test(source)), 'the level function was split into parts')
  t.strictSame(generated, await new Mapper({}, { plugins }, { codegen: false, stdout: () => {} }).map(withPlugin as never, input))
  t.match(generated, { out: { f119: '238!', z: 0 }, valid: true })
})

t.test('a level of single-key pairings makes its object in one step, with the stores in order when a value is missing', async (t) => {
  const sources: string[] = []
  // A few keys, and more than the 128 past which V8 makes an object literal in dictionary mode.
  // Each shape: every value present, one missing (stores in order), a key written twice (its
  // first place, its last value), the envelope's own names written by the document, under `each`,
  // and a flat output measured against an output depth of 1.
  for (const size of [6, 150]) {
    const mapping: Record<string, unknown> = {}
    const input: Record<string, unknown> = {}
    for (let i = 0; i < size; i++) {
      mapping[`/k${i}`] = i % 3 === 0 ? { source: `/k${i}`, as: 'number' } : i % 3 === 1 ? { source: `/k${i}`, default: 'none' } : `/k${i}`
      input[`k${i}`] = String(i)
    }
    const missing = { ...input, k2: undefined }
    const cases: [string, object, unknown, object?][] = [
      ['every value present', { mapping }, input],
      ['one value missing', { mapping }, missing],
      ['a key written twice', { mapping: { ...mapping, '/k0': '/k5', '/k1': '/k2' } }, missing],
      ['the envelope names written', { mapping: { ...mapping, '/valid': '/k1', '/errors': '/k2' } }, input],
      ['under each', { mapping: { '/list': { source: '/list', each: mapping } } }, { list: [input, missing, input] }],
      ['output depth 1', { mapping }, input, { outputDepth: 1 }],
      ['output depth 1, each', { mapping: { '/list': { source: '/list', each: mapping } } }, { list: [input] }, { outputDepth: 1 }],
    ]
    await watchingSources(sources, async () => {
      for (const [name, document, given, limits] of cases) {
        const generated = await envelope(true, document, given, limits)
        t.equal(generated, await envelope(false, document, given, limits), `${size} keys: ${name}`)
      }
    })
    const out = JSON.parse(await envelope(true, { mapping }, missing)) as Record<string, unknown>
    t.strictSame(Object.keys(out).slice(0, 4), ['k0', 'k1', 'k3', 'k4'], `${size} keys: the missing key is left out, the rest in order`)
    t.strictSame(Object.keys(out).slice(-2), ['valid', 'errors'])
    t.equal(out.k0, 0)
    const made = (await new Mapper({}, {}, { stdout: () => {} }).map({ mapping: { '/list': { source: '/list', each: mapping } } }, { list: [input] })) as unknown as { list: object[] }
    t.equal(Object.getPrototypeOf(made.list[0]), Object.prototype, `${size} keys: the object made has the prototype of {}`)
    t.equal(Object.getPrototypeOf(await new Mapper({}, {}, { stdout: () => {} }).map({ mapping }, input)), Object.prototype)
  }
  // Paths of several tokens: made in one step only into a target of the level's own, and a path
  // through another's value (`/a` and `/a/b`) keeps the stores.
  const tree = { '/a/x': '/x', '/b': '/y', '/a/y/z': { source: '/y', as: 'string' }, '/a/w': { source: '/w', default: 0 }, '/c/d': { constant: { e: 1 } } }
  const treeCases: [string, object, unknown][] = [
    ['a tree, every value present', { mapping: tree }, { x: 1, y: 2, w: 3 }],
    ['a tree, one value missing', { mapping: tree }, { y: 2, w: 3 }],
    ['a tree under each', { mapping: { '/list': { source: '/list', each: tree } } }, { list: [{ x: 1, y: 2 }, { y: 2 }] }],
    ['a path through another value', { mapping: { ...tree, '/a': '/o', '/a/q': '/x' } }, { x: 1, y: 2, o: { k: 1 } }],
    ['a tree in a named mapping, into a target given', { mapping: { '/n': { mapping: { '/a/x': '/x', '/a/y': '/y' } }, '/n/a/z': '/x' } }, { x: 1, y: 2 }],
  ]
  await watchingSources(sources, async () => {
    for (const [name, document, given] of treeCases) t.equal(await envelope(true, document, given), await envelope(false, document, given), name)
  })
  t.strictSame(JSON.parse(await envelope(true, { mapping: tree }, { y: 2, w: 3 })), { a: { y: { z: '2' }, w: 3 }, b: 2, c: { d: { e: 1 } }, valid: true, errors: [] })
  t.ok(sources.some((source) => /return new freshMade0\(new freshMade1\(s0, new freshMade2\(s2\), s3\), s1, new freshMade3\(s4\)\)/.test(source)), 'a tree is made by nested constructors')
  t.ok(sources.some((source) => source.includes('return new freeMade0(s0, s1, s2')), 'a level of one function makes its object from locals')
  t.ok(sources.some((source) => source.includes('return new freeMade0(slots[0], slots[1]')), 'a level in parts makes it from the slots')
})
