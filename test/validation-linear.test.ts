// Validation, flattening and compilation of reference chains are linear in the chain (issue 30):
// a compound document whose members each name the next — by `mapping`, `each`, `$ref`, `$extend`,
// or a mix — is walked once per member, not once per member per member. Work is counted (lookups
// of mapping ids), never timed; the diagnostics for loops and unknown names are those of before.
import t from 'tap'
import { DocumentError, Mapper, outputSchema } from '../engine/index.js'
import { Ancestry, flattenBatch, MAX_FLATTENED_PAIRINGS } from '../engine/keywords/registry/ancestry.js'
import { validateDocument, withMembers, type Reachability } from '../engine/validation/validate.js'

type Doc = Record<string, unknown>
const id = (i: number): string => `m${i}`

/** Chains of n members, member k naming member k + 1, the last giving pairings. */
const FORMS: Record<string, (n: number) => Doc> = {
  'mapping names': (n) => chain(n, (next) => ({ mapping: next })),
  'mapping $ref': (n) => chain(n, (next) => ({ mapping: { $ref: next } })),
  '$ref members': (n) => chain(n, (next) => ({ $ref: next })),
  'pairings naming the next': (n) => chain(n, (next) => ({ mapping: { '/y': next } })),
  'each names': (n) => chain(n, (next) => ({ source: '/a', each: next })),
  '$extend, one key': (n) => chain(n, (next) => ({ $extend: next })),
  '$extend, a key each': (n) => chain(n, (next, i) => ({ $extend: next, mapping: { [`/k${i % 20}`]: '/x' } })),
  mixed: (n) => chain(n, (next, i) => [{ mapping: next }, { source: '/a', each: next }, { mapping: { $ref: next } }, { mapping: { '/y': { source: '/a', each: next } } }][i % 4]!),
}

function chain(n: number, member: (next: string, i: number) => Doc): Doc {
  const mappings: Doc = {}
  for (let i = 0; i < n; i++) mappings[id(i)] = { $id: id(i), ...member(id(i + 1), i) }
  mappings[id(n)] = { $id: id(n), mapping: { '/x': '/x' } }
  return { mappings }
}

/** Mapping lookups validating `document` at the instance level (nothing registered), and its report. */
function validated(document: Doc): { lookups: number; report: ReturnType<typeof validateDocument> } {
  const members = withMembers(document, { mapping: () => undefined, initializer: () => false, transformer: () => false, plugin: () => false })
  let lookups = 0
  const report = validateDocument(document, {
    ...members,
    mapping: (name) => {
      lookups++
      return members.mapping(name)
    },
  } satisfies Reachability)
  return { lookups, report }
}

t.test('validation of every chain form looks each member up a bounded number of times', async (t) => {
  // Lookups are counted, not timed, so the lengths need only tell linear from quadratic apart: 250
  // and 1,000 members do (a quadratic walk would make sixteen times the lookups, not four), at a
  // quarter of the validation work of 1,000 and 4,000. Each walk is iterative: the chains of 20,000
  // below run at the default stack.
  for (const [name, make] of Object.entries(FORMS)) {
    const small = validated(make(250))
    const large = validated(make(1000))
    t.equal(large.report.valid, small.report.valid, `${name}: the same verdict at either length`)
    t.ok(large.lookups <= 8 * 1001, `${name}: ${large.lookups} lookups for 1,001 members (at most 8 each)`)
    // Linear: four times the members, about four times the lookups (quadratic would be sixteen).
    t.ok(large.lookups <= 4.5 * small.lookups + 100, `${name}: ${small.lookups} → ${large.lookups} lookups from 251 to 1,001 members`)
  }
})

t.test('a chain validates as valid on an instance, and compiles and runs', async (t) => {
  for (const [name, make] of Object.entries(FORMS)) {
    if (name === '$extend, a key each') continue
    // What is asserted is that each form is valid, prepared and registered, not how long it may be
    // (linearity is counted above, the stack at 20,000 members below): 1,000 members, half the
    // compilation of 2,000.
    const document = make(1000)
    const mapper = new Mapper()
    t.equal(mapper.validate(document).valid, true, `${name}: valid`)
    const prepared = mapper.prepare(document)
    t.ok(prepared.compiled !== null, `${name}: prepared`)
    t.equal(new Mapper({ mappings: document.mappings as Doc }).mappings[id(0)]?.$id, id(0), `${name}: registered`)
  }
})

t.test('loops: every member on a loop or leading into it is reported, with the messages of before', async (t) => {
  // a → b → c → b: a leads into the loop at b; b and c are on it.
  const document = {
    mappings: {
      a: { $id: 'a', mapping: 'b' },
      b: { $id: 'b', mapping: 'c' },
      c: { $id: 'c', mapping: { $ref: 'b' } },
      d: { $id: 'd', mapping: { '/x': { source: '/x', each: 'a' } } },
    },
  }
  t.same(
    new Mapper().validate(document).errors.map((e) => [e.pointer, e.message]),
    [
      ['/mappings/a/mapping', 'b never reaches pairings: its mapping references loop through b'],
      ['/mappings/b/mapping', 'c never reaches pairings: its mapping references loop through c'],
      ['/mappings/c/mapping/$ref', 'b never reaches pairings: its mapping references loop through b'],
      ['/mappings/d/mapping/~1x/each', 'a never reaches pairings: its mapping references loop through b'],
    ]
  )
  // A long loop: every member reported, each with its own name, at the cost of one walk.
  const n = 3000
  const loop: Doc = {}
  for (let i = 0; i < n; i++) loop[id(i)] = { $id: id(i), mapping: id((i + 1) % n) }
  const { report, lookups } = validated({ mappings: loop })
  t.equal(report.valid, false)
  t.equal((report.errors.length ?? 0) + (report.omitted ?? 0), n, 'one error per member')
  t.equal(report.errors[5]?.message, `${id(6)} never reaches pairings: its mapping references loop through ${id(6)}`)
  t.ok(lookups <= 4 * n, `${lookups} lookups for a loop of ${n}`)
})

t.test('unknown names are reported as before', async (t) => {
  const report = new Mapper().validate({ mappings: { a: { $id: 'a', mapping: 'nope' }, b: { $id: 'b', $extend: 'gone', mapping: {} }, c: { $id: 'c', mapping: { '/x': 'missing' } } } })
  t.same(
    report.errors.map((e) => [e.rule, e.pointer, e.message]),
    [
      ['REG-1', '/mappings/a/mapping', 'nope matches no registered mapping'],
      ['REG-3', '/mappings/b/$extend', 'gone matches no registered mapping'],
      ['REG-1', '/mappings/c/mapping/~1x', 'missing matches no registered mapping'],
    ]
  )
})

t.test('$extend: each ancestry is flattened once, failures included', async (t) => {
  const n = 20_000
  const members: Doc[] = [{ $id: id(n), mapping: { '/x': '/x' } }]
  for (let i = n - 1; i >= 0; i--) members.push({ $id: id(i), $extend: id(i + 1), mapping: { '/x': '/y' } })
  let lookups = 0
  const byId = new Map(members.map((m) => [m.$id as string, m]))
  const flat = flattenBatch(members, () => undefined)
  t.same(flat.get(id(0)), { $id: id(0), mapping: { '/x': '/y' } }, 'a chain of 20,000 flattens (no recursion, no stack overflow)')
  const ancestry = new Ancestry((name) => {
    lookups++
    return byId.get(name)
  })
  for (const member of members) ancestry.flatten(member)
  t.ok(lookups <= n + 1, `${lookups} lookups flattening ${n + 1} members, each once`)

  // A cycle of 3,000: each member fails, each with its own path, shown abbreviated past 16 names.
  const cycle: Doc[] = []
  for (let i = 0; i < 3000; i++) cycle.push({ $id: id(i), $extend: id((i + 1) % 3000) })
  lookups = 0
  const cyclic = new Map(cycle.map((m) => [m.$id as string, m]))
  const failing = new Ancestry((name) => {
    lookups++
    return cyclic.get(name)
  })
  const messages = cycle.map((member) => failing.problem(member))
  t.ok(lookups <= 3000, `${lookups} lookups for a cycle of 3,000`)
  t.equal(messages[0], '$extend cycle: m0 → m1 → m2 → m3 → m4 → m5 → m6 → m7 → … (2985 more) → m2993 → m2994 → m2995 → m2996 → m2997 → m2998 → m2999 → m0')
  t.equal(messages[7], '$extend cycle: m7 → m8 → m9 → m10 → m11 → m12 → m13 → m14 → … (2985 more) → m0 → m1 → m2 → m3 → m4 → m5 → m6 → m7')
  t.throws(() => new Mapper({ mappings: [{ $id: 'a', $extend: 'b', mapping: {} }, { $id: 'b', $extend: 'c', mapping: {} }, { $id: 'c', $extend: 'b', mapping: {} }] }), {
    message: '$extend cycle: a → b → c → b',
  })
})

t.test('$extend chains whose flattening grows with the square of their length are refused, as a DocumentError', async (t) => {
  // 600 members flatten to 180,300 pairings, past the bound (2,000 flattened no further: flattening
  // stops at the bound, and building and walking the longer chain cost more than refusing it).
  const document = chain(600, (next, i) => ({ $extend: next, mapping: { [`/k${i}`]: '/x' } }))
  let thrown: unknown
  try {
    new Mapper().compile(document)
  } catch (error) {
    thrown = error
  }
  t.ok(thrown instanceof DocumentError, 'a DocumentError')
  t.match(thrown, { code: 'MappingDocumentError', statusCode: 422, message: /flattens to more than 100000 pairings/ })
  const report = new Mapper().validate(document)
  t.equal(report.valid, false)
  t.equal(report.errors[0]?.rule, 'REG-3')
  t.match(report.errors[0]?.message, `flattens to more than ${MAX_FLATTENED_PAIRINGS} pairings`)
  // Under the bound it is validated and registered as before: validated at 300 members (45,150
  // pairings, near half the bound), registered at 150 (11,325): registration compiles every
  // member's flattened level, a cost that grows with the square of the length (about 1 s at 300).
  const fine = chain(300, (next, i) => ({ $extend: next, mapping: { [`/k${i}`]: '/x' } }))
  t.equal(new Mapper().validate(fine).valid, true)
  const registered = chain(150, (next, i) => ({ $extend: next, mapping: { [`/k${i}`]: '/x' } }))
  t.equal(Object.keys(new Mapper({ mappings: registered.mappings as Doc }).mappings[id(0)]!.mapping as Doc).length, 151)
})

t.test('output-schema inference and the expansion bound follow a chain of any length without running out of stack', async (t) => {
  for (const make of [(next: string) => ({ mapping: { '/y': next } }), (next: string) => ({ mapping: { '/y': { $ref: next } } }), (next: string) => ({ mapping: { '/a': { source: '/a', each: next } } })]) {
    const document = chain(20_000, make)
    const members = document.mappings as Record<string, Doc>
    // The head of the chain last: it is the entry.
    const reversed: Doc = {}
    for (let i = 20_000; i >= 0; i--) reversed[id(i)] = members[id(i)]
    const entry = { mappings: reversed }
    const schema = outputSchema(entry, () => undefined)
    t.match(schema, { anyOf: [{ type: 'object' }] }, 'the entry still outputs an object')
    t.ok(JSON.stringify(schema).length < 1024 * 1024, 'rendered within its bound (each level holds the next twice: a tree would double per level)')
    t.equal(new Mapper().expansion(entry), undefined, 'deeper than evaluation may nest: no static bound')
  }
})
