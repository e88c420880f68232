// Registration and validation in slices (issue 30): `registerInSlices` and `validateInSlices` run the
// steps `register` and `validate` run, with turns of the event loop between them, so a member of a
// hundred thousand pairings never holds the loop for one long turn. Here, against the synchronous
// API on the same documents: the same registered documents, the same plans (their levels' pairings,
// weights, generated forms), the same answers, the same reports in the same order, the same
// refusals; the work yields at least once per pairing, inner levels included; and nothing is
// registered until the whole batch is, at once.
import t from 'tap'
import { DocumentError, Mapper, type Extensions, type MappingDocument } from '../engine/index.js'
import type { Pairings, Plan } from '../engine/context.js'
import { MAX_GENERATED } from '../engine/codegen/level.js'
import { Slice } from '../engine/slices.js'
import type { Slicing } from '../engine/steps.js'
import { PAIRINGS_PER_YIELD } from '../engine/validation/validate.js'

/** `count` pairings, each reading its own member (`/s<i>/v`) into its own (`/<prefix>f<i>/v`). */
const pairings = (count: number, prefix = ''): Record<string, string> => Object.fromEntries(Array.from({ length: count }, (_, i) => [`/${prefix}f${i}/v`, `/s${i}/v`]))

/** A scheduler that ends every slice at once and counts the turns it gives: the most interleaving there can be. */
function everyStep(between: () => Promise<void> | void = () => {}): Slicing & { turns: number } {
  return {
    turns: 0,
    due: () => true,
    async next() {
      this.turns++
      await new Promise((resolve) => setImmediate(resolve))
      await between()
    },
  }
}

const twice = Object.assign((_options: unknown, value: unknown) => Number(value) * 2, {
  validateOptions: (options: unknown) => (options !== null && typeof options === 'object' && 'bad' in options ? [{ rule: 'EXT-OPTIONS', message: 'bad is not an option of twice', at: ['bad'] }] : []),
})
const extensions: Extensions = { plugins: { twice }, transformers: { upper: (value) => String(value).toUpperCase() } }

// Above MAX_GENERATED pairings a level keeps its closure plan; below it, a generated one: both kinds here.
const LARGE = MAX_GENERATED + 500
const SET: MappingDocument[] = [
  { $id: 'small', mapping: { '/a': '/a', '/b': { source: '/b', default: 1 }, '/c': ['/x', '/c'], '/d': { constant: { k: [1, 2] } } } },
  { $id: 'top', description: 'one level of many pairings', mapping: pairings(LARGE) },
  { $id: 'each', mapping: { '/items': { source: '/list', each: pairings(LARGE, 'e') }, '/n': '/n' } },
  { $id: 'switch', mapping: { '/out': { source: '/', switch: { source: '/k', cases: { a: { mapping: pairings(LARGE, 'w') }, b: 'small', default: '/' } } } } },
  {
    $id: 'nested',
    mapping: {
      '/deep': { source: '/d', mapping: { '/inner': { source: '/i', each: { '/x': '/x', '/y': { all: ['/a', '/b'], concat: true }, '/up': { source: '/u', transform: 'upper' } } } } },
      '/named': 'small',
      '/ref': { $ref: 'small' },
      '/doubled': { source: '/n', twice: {} },
    },
  },
  { mappings: { base: { $id: 'base', description: 'inherited', mapping: { '/z': '/z', '/f0/v': '/overridden' } }, ext: { $id: 'ext', $extend: 'base', mapping: pairings(LARGE) } } } as MappingDocument,
]

/** The number of pairings the set's levels hold, inner ones included. */
const TOTAL_PAIRINGS = 4 + LARGE + (LARGE + 1) + (LARGE + 1) + 7 + 2 + LARGE

/** What a plan is made of, as far as anything about it can be seen: its kind, counts, levels and their generated forms. */
function summary(plan: Plan | undefined, seen = new Set<object>()): unknown {
  if (plan === undefined) return undefined
  if (seen.has(plan)) return 'seen'
  seen.add(plan)
  return {
    kind: plan.kind,
    weight: plan.weight,
    structural: plan.structural,
    dispatches: plan.dispatches,
    passesThrough: plan.passesThrough,
    observesPaths: plan.observesPaths,
    sourcePath: plan.sourcePath,
    targetPath: plan.targetPath,
    generated: plan.emit !== undefined,
    fixed: levelSummary(plan.fixedPairings, seen),
  }
}

function levelSummary(pairings: Pairings | undefined, seen: Set<object>): unknown {
  if (pairings === undefined) return undefined
  return {
    weight: pairings.weight,
    keyBytes: pairings.keyBytes,
    reach: pairings.reach,
    free: pairings.free !== undefined,
    level: pairings.level !== undefined,
    frozen: Object.isFrozen(pairings) && Object.isFrozen(pairings.list),
    pairings: pairings.list.map((pairing) => ({
      pointer: pairing.pointer,
      place: pairing.place,
      inline: pairing.inline === undefined ? undefined : { read: pairing.inline.read, ownKey: pairing.inline.ownKey, plan: summary(pairing.inline.plan, seen), nested: levelSummary(pairing.inline.nested, seen) },
    })),
  }
}

/** Every container of a value frozen. */
function deepFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true
  return Object.isFrozen(value) && Object.values(value).every(deepFrozen)
}

const INPUTS = [
  { a: 1, b: 2, x: 'x', s0: { v: 0 }, s1: { v: 1 }, n: 4, k: 'a', list: [{ s2: { v: 2 } }, { s3: { v: 3 } }], d: { i: [{ x: 1, a: 'p', b: 'q', u: 'up' }] }, z: 'zz' },
  { k: 'b', a: 7, c: 8, n: 1 },
  [{ s1: { v: 'first' } }, { k: 'other' }],
]

t.test('registerInSlices registers what register does: the same documents, plans and answers', async (t) => {
  const whole = new Mapper({}, extensions)
  const sliced = new Mapper({}, extensions)
  const slice = everyStep()
  for (const document of SET) {
    t.same(await sliced.registerInSlices(document, slice), whole.register(document), 'the same ids')
  }
  t.ok(slice.turns >= TOTAL_PAIRINGS, `${slice.turns} turns for ${TOTAL_PAIRINGS} pairings: one at least per pairing compiled, inner levels included`)
  t.same(Object.keys(sliced.mappings), Object.keys(whole.mappings))
  t.same(sliced.mappings, whole.mappings, 'the same flattened documents')
  for (const id of Object.keys(whole.mappings)) {
    t.ok(deepFrozen(sliced.mappings[id]) && deepFrozen(whole.mappings[id]), `${id}: frozen through and through, both ways`)
    t.same(summary(sliced.registryView.lookup(id)), summary(whole.registryView.lookup(id)), `${id}: the same plan`)
    for (const input of INPUTS) t.same(await sliced.map(id, input), await whole.map(id, input), `${id}: the same answer`)
  }
  t.same((await sliced.map('ext', { z: 1, overridden: 2 })).z, 1, 'the ancestor is merged in')
})

t.test('the default scheduler (engine/slices.ts Slice) gives the same registration', async (t) => {
  const whole = new Mapper({ mappings: SET }, extensions)
  const sliced = new Mapper({}, extensions)
  for (const document of SET) await sliced.registerInSlices(document)
  t.same(Object.keys(sliced.mappings), Object.keys(whole.mappings))
  for (const id of Object.keys(whole.mappings)) t.same(summary(sliced.registryView.lookup(id)), summary(whole.registryView.lookup(id)), id)
})

t.test('a registration in slices changes nothing until it ends, then everything at once', async (t) => {
  const before = [{ $id: 'a', mapping: { '/old': '/' } }, { $id: 'b', mapping: { '/b': 'a' } }]
  const update = { mappings: { a: { $id: 'a', mapping: { '/new': '/', ...pairings(2000) } }, b: { $id: 'b', mapping: { '/b2': 'a' } } } }
  const input = { x: 1, s5: { v: 5 } }
  const mapper = new Mapper({ mappings: before })
  const seen: string[] = []
  const slice = everyStep(async () => {
    seen.push(JSON.stringify([await mapper.map('b', input), Object.keys(mapper.mappings.a!.mapping as object)]))
  })
  const ids = await mapper.registerInSlices(update, slice)
  t.same(ids, ['a', 'b'])
  t.ok(seen.length > 2000, `looked at between ${seen.length} steps`)
  const old = new Mapper({ mappings: before })
  const oldAnswer = JSON.stringify([await old.map('b', input), ['/old']])
  t.same(seen.filter((answer) => answer !== oldAnswer), [], 'every evaluation between the steps saw the old set, whole')
  old.register(update)
  t.same(await mapper.map('b', input), await old.map('b', input), 'then the new one, whole')
  t.same(mapper.mappings, old.mappings)
})

t.test('a registration in slices refuses what register refuses, with the same message, and registers nothing', async (t) => {
  const refused: unknown[] = [
    { mappings: { a: { $id: 'a', $extend: 'b', mapping: pairings(300) }, b: { $id: 'b', $extend: 'a', mapping: {} } } },
    { $id: 'c', $extend: 'unknown', mapping: pairings(300) },
    { mapping: pairings(10) },
    { $id: 'deep', mapping: { '/x': JSON.parse(`${'['.repeat(120)}${']'.repeat(120)}`) as unknown } },
  ]
  for (const document of refused) {
    const whole = new Mapper({ mappings: [{ $id: 'kept', mapping: { '/k': '/' } }] })
    const sliced = new Mapper({ mappings: [{ $id: 'kept', mapping: { '/k': '/' } }] })
    let thrown: unknown
    try {
      whole.register(document)
    } catch (error) {
      thrown = error
    }
    t.ok(thrown instanceof DocumentError, 'register throws')
    const message = (thrown as Error).message
    const rejected = await sliced.registerInSlices(document, everyStep()).then(() => undefined, (error: unknown) => error)
    t.ok(rejected instanceof DocumentError, `registerInSlices rejects: ${message}`)
    t.equal((rejected as Error).message, message, 'with the same message')
    t.same(Object.keys(sliced.mappings), ['kept'], 'nothing registered')
  }
})

/** A document whose keywords report findings between nested descriptors, pairing maps among them. */
const FINDINGS = {
  $id: 'findings',
  mapping: {
    '/valid': '/x',
    'no-pointer': '/y',
    '/o': {
      switch: {
        source: 5,
        input: '/a/../b',
        cases: { a: '#/fragment', b: { mapping: { '/p': '/q/../r', '/q': { find: { eq: {}, pointer: 'bad' } } } }, c: 'unknown-name' },
      },
    },
    '/t': { source: '/t', transform: ['missing', 'upper'], init: 'nothing' },
    '/e': { source: '/l', each: { '/a': { twice: { bad: 1 } }, '/b': [{ typo: 1 }, '/ok', 'also-unknown'] } },
    '/valid/x': { source: '/v', sourc: '/w' },
    '/errors': '/e',
    '/m': { mapping: 'small', each: { '/ignored': 1 } },
  },
}

t.test('validateInSlices reports what validate does, in the same order', async (t) => {
  const mapper = new Mapper({ mappings: [SET[0]!, FINDINGS] }, extensions)
  for (const strict of [false, true]) {
    const report = mapper.validate(FINDINGS, { strict })
    t.ok(report.errors.length >= 8, `${report.errors.length} errors and ${report.warnings.length} warnings`)
    t.same(await mapper.validateInSlices(FINDINGS, { strict }, everyStep()), report, `the document, strict ${strict}`)
    t.same(await mapper.validateInSlices('findings', { strict }, everyStep()), mapper.validate('findings', { strict }), `the registered id, strict ${strict}`)
  }
  // Findings in the order the document holds them, a keyword's own between the descriptors it holds.
  t.same(
    mapper.validate(FINDINGS).errors.map((error) => `${error.rule} ${error.pointer}`),
    [
      'PTR-10 /mapping/no-pointer',
      'KW-locate-1 /mapping/~1o/switch/source',
      'PTR-9 /mapping/~1o/switch/input',
      'DOC-2 /mapping/~1o/switch/cases/a',
      'PTR-9 /mapping/~1o/switch/cases/b/mapping/~1p',
      'PTR-10 /mapping/~1o/switch/cases/b/mapping/~1q/find/pointer',
      'REG-1 /mapping/~1o/switch/cases/c',
      'KW-transform-1 /mapping/~1t/transform/0',
      'KW-init-1 /mapping/~1t/init',
      'EXT-OPTIONS /mapping/~1e/each/~1a/twice/bad',
      'REG-1 /mapping/~1e/each/~1b/2',
    ]
  )
  const big = { $id: 'big', mapping: { ...pairings(3000), '/bad': '/x/../y', '/nested': { source: '/n', each: { ...pairings(3000, 'n'), '/typo': { soruce: '/s' } } } } }
  const slice = everyStep()
  t.same(await mapper.validateInSlices(big, { strict: true }, slice), mapper.validate(big, { strict: true }), 'a large document')
  t.ok(slice.turns >= 6000 / PAIRINGS_PER_YIELD, `${slice.turns} turns for 6,000 pairings: one at least every ${PAIRINGS_PER_YIELD}`)
  const realSlice = new Slice()
  t.same(await mapper.validateInSlices(big, {}, realSlice), mapper.validate(big), 'with engine/slices.ts Slice')
})

t.test('the static expansion bound and its refusal are the same in slices', async (t) => {
  // A level that names another twice, twelve deep: 2^12 levels on any input.
  const chain: MappingDocument[] = Array.from({ length: 12 }, (_, i) => ({ $id: `l${i}`, mapping: { '/a': `l${i + 1}`, '/b': `l${i + 1}`, ...pairings(50) } }))
  chain.push({ $id: 'l12', mapping: pairings(50) })
  const mapper = new Mapper({ mappings: chain }, {}, { limits: { fanOut: 1000 } })
  const report = mapper.validate('l0')
  t.match(report.errors, [{ rule: 'BUDGET-1' }])
  t.same(await mapper.validateInSlices('l0', {}, everyStep()), report)
  t.same(await mapper.validateInSlices('l0', { limits: { fanOut: 10_000 } }, everyStep()), mapper.validate('l0', { limits: { fanOut: 10_000 } }))
  t.same(mapper.report('l0', { limits: { fanOut: 10_000 } }).expansion, 8191)
})
