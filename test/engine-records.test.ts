// Keyword records own their structure (docs/engine.md, "Adding a keyword"): the documents a keyword's
// operand holds are what its record's `parts` says, and the drivers — validation, the static
// expansion bound, the stdout check, where the compiler places pairing maps, output-schema
// inference — walk a document through those records alone, with the one traversal.
import t from 'tap'
import { BudgetExceeded, Mapper } from '../engine/index.js'
import { KEYWORDS } from '../engine/keywords/index.js'
import type { KeywordRecord } from '../engine/keywords/record.js'

/** The schema definitions that stand for a nested document (engine/schema.ts). */
const DOCUMENT_DEFS = new Set(['#/$defs/descriptor', '#/$defs/readDescriptor', '#/$defs/pairingValue'])

function namesDocuments(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object') return false
  if (Array.isArray(schema)) return schema.some(namesDocuments)
  return Object.entries(schema).some(([key, value]) => (key === '$ref' && DOCUMENT_DEFS.has(value as string)) || namesDocuments(value))
}

t.test('a keyword whose operand holds documents says which (its record has parts)', async (t) => {
  const holding = (KEYWORDS as readonly KeywordRecord[]).filter((record) => namesDocuments(record.schema) || namesDocuments(record.objectSchema))
  t.same(holding.map((record) => record.name).sort(), ['all', 'each', 'first', 'last', 'mapping', 'switch'])
  for (const record of holding) t.type(record.parts, 'function', `${record.name} has parts`)
  const standing = (KEYWORDS as readonly KeywordRecord[]).filter((record) => record.standsAlone === true)
  t.same(
    standing.map((record) => record.name),
    ['$ref'],
    'one keyword stands for the whole descriptor'
  )
})

/** A registered mapping that enters three levels: its own and two nested ones. */
const TWO = { $id: 'two', mapping: { '/a': { source: '/a', mapping: { '/x': '/x' } }, '/b': { source: '/b', mapping: { '/y': '/y' } } } }

t.test('the static expansion bound counts what each keyword holds', async (t) => {
  const mapper = new Mapper({ mappings: [TWO] })
  t.equal(mapper.expansion('two'), 3)
  t.equal(mapper.expansion({ mapping: { '/r': { first: ['two', 'two'] } } }), 7, 'every combinator element is read')
  t.equal(mapper.expansion({ mapping: { '/r': { all: ['two', { source: '/', mapping: { '/z': 'two' } }] } } }), 8, 'nested elements count their own levels')
  const cases = { a: 'two', b: { source: '/', mapping: { '/z': '/z' } } }
  t.equal(mapper.expansion({ mapping: { '/r': { switch: { source: '/k', cases } } } }), 4, 'a switch counts its largest case')
  t.equal(mapper.expansion({ mapping: { '/r': { source: '/', mapping: { '/a': '/a' }, each: { '/x': 'two' } } } }), 2, 'each beside mapping is never read')
  t.equal(mapper.expansion({ mapping: { '/r': { source: '/', each: { '/x': 'two' } } } }), 5, 'each alone is the pairing value')
  t.equal(mapper.expansion({ mapping: { '/r': { $ref: 'two', first: ['two'] } } }), 4, '$ref stands for the whole descriptor')
  t.equal(mapper.expansion({ mapping: { '/r': { source: '/', $extend: 'two' } } }), 4, '$extend inherits the pairings of its ancestors')
  t.equal(mapper.expansion({ mapping: { '/r': { source: '/', mapping: { $ref: 'two' } } } }), 4, 'a $ref pairing value gives the pairings it names')
  t.equal(mapper.expansion({ mapping: { '/r': { source: '/', mapping: { mapping: 'two', first: ['two'] } } } }), 4, 'a descriptor as pairing value gives only its pairings')
  t.equal(mapper.expansion({ mapping: { '/r': { constant: { mapping: 'two' } } } }), 1, 'data holds no documents')
  const loop = new Mapper({ mappings: [{ $id: 'loop', mapping: { '/r': { switch: { source: '/k', cases: { again: 'loop' } } } } }] })
  t.equal(loop.expansion('loop'), undefined, 'a reference cycle through a switch case has no static bound')
})

t.test('the stdout check walks the documents keywords hold, and nothing else', async (t) => {
  const mapper = new Mapper({}, { plugins: { tag: (_options, value) => value } })
  const refused = (document: Record<string, unknown>): unknown => mapper.validate(document, { stdout: false }).errors.filter((e) => e.rule === 'KW-stdout-1').map((e) => e.pointer)
  t.same(refused({ mapping: { '/a': { switch: { source: '/k', cases: { x: { source: '/', mapping: { '/b': '/b' }, stdout: true } } } } } }), ['/mapping/~1a/switch/cases/x/stdout'])
  t.same(refused({ mapping: { '/a': { last: ['/x', { source: '/', mapping: { '/b': '/b' }, stdout: '/b' }] } } }), ['/mapping/~1a/last/1/stdout'])
  t.same(refused({ mapping: { '/a': { source: '/', each: { mapping: { '/b': '/b' }, stdout: true } } } }), ['/mapping/~1a/each/stdout'])
  t.same(refused({ mapping: { '/a': ['/x', { source: '/', mapping: { '/b': '/b' }, stdout: true }] } }), ['/mapping/~1a/1/stdout'], 'a variant list element')
  t.same(refused({ mappings: { m: { $id: 'm', mapping: { '/a': '/a' }, stdout: true } } }), ['/mappings/m/stdout'], 'a compound member')
  for (const data of [{ constant: { stdout: true } }, { default: { stdout: true } }, { enum: [{ stdout: true }] }, { find: { eq: { stdout: true } } }, { tag: { stdout: true } }]) {
    t.same(refused({ mapping: { '/a': { source: '/a', ...data } } }), [], `${Object.keys(data)[0]}: data, never a descriptor`)
  }
})

t.test('a budget error names the pairing map it stopped in, wherever a keyword holds it', async (t) => {
  const mapper = new Mapper({}, {}, { limits: { builtBytes: 1024 * 1024 } })
  const big = { '/big': { all: ['/s', '/s'], as: 'string' } }
  const input = { k: 'a', s: 'x'.repeat(900 * 1024) }
  const documents: Array<[Record<string, unknown>, string]> = [
    [{ mapping: { '/r': { switch: { source: '/k', cases: { a: { source: '/', mapping: big } } } } } }, '/mapping/~1r/switch/cases/a/mapping/~1big'],
    [{ mapping: { '/r': { first: [{ source: '/', mapping: big }] } } }, '/mapping/~1r/first/0/mapping/~1big'],
    [{ mapping: { '/r': { source: '/', each: { mapping: big } } } }, '/mapping/~1r/each/mapping/~1big'],
  ]
  for (const [document, pointer] of documents) {
    for (const codegen of [true, false]) {
      const engine = codegen ? mapper : new Mapper({}, {}, { limits: { builtBytes: 1024 * 1024 }, codegen: false })
      const error = await engine.map(document, input).then(
        () => undefined,
        (caught: unknown) => caught
      )
      t.type(error, BudgetExceeded)
      t.match(error, { budget: 'builtBytes', pointer }, `${pointer} (codegen ${String(codegen)})`)
    }
  }
})

t.test('validation follows a $ref pairing value and a registered mapping\'s own pairing value', async (t) => {
  const mapper = new Mapper({ mappings: [{ $id: 'a', each: { $ref: 'b' } }, { $id: 'b', mapping: { $ref: 'a' } }, { $id: 'ok', each: { '/x': '/x' } }] })
  t.same(
    mapper.validate({ mapping: { '/r': { source: '/', mapping: 'a' } } }).errors.map((e) => e.message),
    ['a never reaches pairings: its mapping references loop through a']
  )
  t.same(mapper.validate({ mapping: { '/r': { source: '/', mapping: { $ref: 'ok' } } } }).errors, [])
  t.same(
    mapper.validate({ mapping: { '/r': { $ref: 'missing', mapping: { '/x': 1 } } } }).errors.map((e) => [e.rule, e.pointer]),
    [['REG-1', '/mapping/~1r/$ref']],
    'only $ref is read beside it'
  )
})

t.test('explain asks the locate keyword where its read stands in the input', async (t) => {
  const mapper = new Mapper()
  const { explain } = await mapper.explain(
    { mapping: { '/a': { source: '/x', mapping: { '/b': { input: '/top' }, '/c': { source: '/y' }, '/d': { output: '/z' } } } } },
    { x: { y: 1 }, top: 2 }
  )
  const outer = explain.pairings[0]!
  t.same(outer.reads, ['/x'], 'source: where the source stands, continued')
  t.same(
    (outer.pairings ?? []).map((pairing) => [pairing.target, pairing.reads]),
    [
      ['/b', ['/top']],
      ['/c', ['/x/y']],
      ['/d', []],
    ],
    'input: from the root; source: from the shifted source; output: reads no input'
  )
})
