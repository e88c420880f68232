// Every rule of validation.md §2, table-driven: a document that draws it (exact rule, message,
// pointer, descriptor) and a near miss that does not. The examples of §2 appear verbatim.
import t from 'tap'
import { Mapper, PATTERN_LENGTH_LIMIT, PATTERN_RANGE_LIMIT, validate, type Diagnostic, type MappingDocument, type ValidationReport } from '../engine/index.js'
import { patternRanges } from '../engine/validation/pattern-screen.js'
import { buildServer } from '../server.js'
import { listening, watchingHealth } from './attack-support.js'

const instance = new Mapper(
  { mappings: [{ $id: 'mapping:Known', mapping: { '/k': '/k' } }] },
  {
    initializers: { uuid: () => 'id' },
    transformers: { slugify: (v) => v, trim: (v) => v },
    plugins: { request: async (_o, v) => v },
  }
)

/** A compound document whose members each name the next one twice, `levels` deep. */
function doubling(levels: number): Record<string, unknown> {
  const mappings: Record<string, unknown> = { [`m${levels}`]: { $id: `m${levels}`, mapping: { '/x': '/x' } } }
  for (let i = levels - 1; i >= 0; i--) mappings[`m${i}`] = { $id: `m${i}`, mapping: { '/a': `m${i + 1}`, '/b': `m${i + 1}` } }
  return { mappings }
}

interface Row {
  rule: string
  level: 'document' | 'instance'
  draws: unknown
  expect: Omit<Diagnostic, 'rule'>
  nearMiss: unknown
}

const deep = (levels: number): unknown => {
  let value: unknown = { '/leaf': { constant: 1 } }
  for (let i = 1; i < levels; i++) value = [value]
  return { mapping: { '/x': { constant: value } } }
}

const rows: Row[] = [
  { rule: 'DOC-3', level: 'document', draws: 'mapping:Known', expect: { message: 'a mapping document must be an object', pointer: '', descriptor: 'mapping:Known' }, nearMiss: { mapping: {} } },
  { rule: 'DOC-3', level: 'document', draws: { mappings: { a: 7 } }, expect: { message: 'a mapping document must be an object', pointer: '/mappings/a', descriptor: 7 }, nearMiss: { mappings: { a: { $id: 'a', mapping: {} } } } },
  { rule: 'DOC-3', level: 'document', draws: { mappings: [1] }, expect: { message: 'a mapping document must be an object', pointer: '/mappings', descriptor: [1] }, nearMiss: { mappings: {} } },
  { rule: 'DOC-2', level: 'document', draws: { mapping: { '/v': '#/a' } }, expect: { message: 'fragment pointers are not valid mapping grammar; use the plain pointer form', pointer: '/mapping/~1v', descriptor: '#/a' }, nearMiss: { mapping: { '/v': { source: '#/a' } } } },
  { rule: 'DOC-5', level: 'document', draws: { mapping: { '/v': 5 } }, expect: { message: 'a descriptor must be a string, an object or an array', pointer: '/mapping/~1v', descriptor: 5 }, nearMiss: { mapping: { '/v': { constant: 5 } } } },
  { rule: 'DOC-5', level: 'document', draws: { mapping: { '/v': { first: [['/a']] } } }, expect: { message: 'a variant list is a descriptor only as the right side of a pairing', pointer: '/mapping/~1v/first/0', descriptor: ['/a'] }, nearMiss: { mapping: { '/v': ['/a'] } } },
  { rule: 'DOC-6', level: 'document', draws: deep(99), expect: { message: 'mapping nesting exceeds the maximum depth of 100', pointer: '/mapping/~1x/constant' + '/0'.repeat(97), descriptor: null }, nearMiss: deep(96) },
  { rule: 'PTR-9', level: 'document', draws: { mapping: { '/v': { source: '/a/../b' } } }, expect: { message: '/a/../b must not contain .. segments', pointer: '/mapping/~1v/source', descriptor: '/a/../b' }, nearMiss: { mapping: { '/v': '../b' } } },
  { rule: 'PTR-9', level: 'document', draws: { mapping: { '/v': '/a/../b' } }, expect: { message: '/a/../b must not contain .. segments', pointer: '/mapping/~1v', descriptor: '/a/../b' }, nearMiss: { mapping: { '/v': '/a/..b' } } },
  { rule: 'PTR-10', level: 'document', draws: { mapping: { each: '/a' } }, expect: { message: 'each is not a valid JSON Pointer', pointer: '/mapping/each', descriptor: 'each' }, nearMiss: { mapping: { '/each': '/a' } } },
  { rule: 'PTR-10', level: 'document', draws: { mapping: { '/v': { source: 'a' } } }, expect: { message: 'a is not a valid JSON Pointer', pointer: '/mapping/~1v/source', descriptor: 'a' }, nearMiss: { mapping: { '/v': { source: '/a' } } } },
  { rule: 'PTR-10', level: 'document', draws: { mapping: { '/a~2': '/a' } }, expect: { message: '/a~2 is not a valid JSON Pointer', pointer: '/mapping/~1a~02', descriptor: '/a~2' }, nearMiss: { mapping: { '/a~1': '/a' } } },
  { rule: 'REG-5', level: 'document', draws: { $id: '', mapping: {} }, expect: { message: '$id must be a non-empty string', pointer: '/$id', descriptor: '' }, nearMiss: { $id: 'x', mapping: {} } },
  { rule: 'REG-5', level: 'document', draws: { mapping: { '/v': { $ref: 5 } } }, expect: { message: '$ref must be a mapping id string', pointer: '/mapping/~1v/$ref', descriptor: 5 }, nearMiss: { mapping: { '/v': { $ref: 'x' } } } },
  { rule: 'REG-5', level: 'document', draws: { $id: 'x', $extend: [], mapping: {} }, expect: { message: '$extend must be a mapping id or a non-empty list of mapping ids', pointer: '/$extend', descriptor: [] }, nearMiss: { $id: 'x', $extend: ['y'], mapping: {} } },
  { rule: 'REG-6', level: 'document', draws: { mappings: { p: { $id: '__proto__', mapping: {} } } }, expect: { message: '"__proto__" is not allowed as a mapping $id', pointer: '/mappings/p/$id', descriptor: '__proto__' }, nearMiss: { mappings: { p: { $id: 'proto', mapping: {} } } } },
  { rule: 'KW-locate-1', level: 'document', draws: { mapping: { '/v': { input: 3 } } }, expect: { message: 'input must be a JSON Pointer string', pointer: '/mapping/~1v/input', descriptor: 3 }, nearMiss: { mapping: { '/v': { input: '/3' } } } },
  { rule: 'KW-mapping-1', level: 'document', draws: { mapping: { '/v': { each: 3 } } }, expect: { message: 'each must be an object of pairings or a mapping reference', pointer: '/mapping/~1v/each', descriptor: 3 }, nearMiss: { mapping: { '/v': { each: { '/n': '/n' } } } } },
  { rule: 'KW-combinator-1', level: 'document', draws: { mapping: { '/v': { all: '/a' } } }, expect: { message: 'all must be an array of descriptors', pointer: '/mapping/~1v/all', descriptor: '/a' }, nearMiss: { mapping: { '/v': { all: ['/a'] } } } },
  { rule: 'KW-switch-1', level: 'document', draws: { mapping: { '/v': { switch: { target: '/k', cases: {} } } } }, expect: { message: 'switch must name source, input or output and give cases', pointer: '/mapping/~1v/switch', descriptor: { target: '/k', cases: {} } }, nearMiss: { mapping: { '/v': { switch: { output: '/k', cases: {} } } } } },
  { rule: 'KW-find-1', level: 'document', draws: { mapping: { '/v': { source: '/ids', find: { pointer: '/v' } } } }, expect: { message: 'find must be an object with an eq object', pointer: '/mapping/~1v/find', descriptor: { pointer: '/v' } }, nearMiss: { mapping: { '/v': { source: '/ids', find: { eq: {}, pointer: '/v' } } } } },
  { rule: 'KW-pipeline-1', level: 'document', draws: { mapping: { '/v': { source: '/a', transform: ['trim', { split: ',', slice: 1 }] } } }, expect: { message: 'a transform step object must have exactly one key', pointer: '/mapping/~1v/transform/1', descriptor: { split: ',', slice: 1 } }, nearMiss: { mapping: { '/v': { source: '/a', transform: ['trim', { split: ',' }, { slice: 1 }] } } } },
  { rule: 'KW-pipeline-1', level: 'document', draws: { mapping: { '/v': { init: ['uuid'] } } }, expect: { message: 'init must be an initializer name', pointer: '/mapping/~1v/init', descriptor: ['uuid'] }, nearMiss: { mapping: { '/v': { init: 'uuid' } } } },
  { rule: 'KW-pipeline-1', level: 'document', draws: { mapping: { '/v': { source: '/a', concat: 'yes' } } }, expect: { message: 'concat must be true or false', pointer: '/mapping/~1v/concat', descriptor: 'yes' }, nearMiss: { mapping: { '/v': { source: '/a', concat: true } } } },
  { rule: 'KW-pipeline-1', level: 'document', draws: { mapping: { '/v': { source: '/a', template: 5, mapping: {} } } }, expect: { message: 'template must be a string', pointer: '/mapping/~1v/template', descriptor: 5 }, nearMiss: { mapping: { '/v': { source: '/a', template: '{{x}}', mapping: {} } } } },
  { rule: 'KW-validate-1', level: 'document', draws: { mapping: { '/v': { source: '/a', type: 'float' } } }, expect: { message: 'type must be one of array, boolean, integer, null, number, object, string', pointer: '/mapping/~1v/type', descriptor: 'float' }, nearMiss: { mapping: { '/v': { source: '/a', type: 'number' } } } },
  { rule: 'KW-validate-1', level: 'document', draws: { mapping: { '/v': { source: '/a', multipleOf: 0 } } }, expect: { message: 'multipleOf must be a positive number', pointer: '/mapping/~1v/multipleOf', descriptor: 0 }, nearMiss: { mapping: { '/v': { source: '/a', multipleOf: 0.5 } } } },
  { rule: 'KW-validate-1', level: 'document', draws: { mapping: { '/v': { source: '/a', minLength: 1.5 } } }, expect: { message: 'minLength must be a non-negative integer', pointer: '/mapping/~1v/minLength', descriptor: 1.5 }, nearMiss: { mapping: { '/v': { source: '/a', minLength: 0 } } } },
  { rule: 'KW-validate-1', level: 'document', draws: { mapping: { '/v': { source: '/a', required: 'yes' } } }, expect: { message: 'required must be true or false', pointer: '/mapping/~1v/required', descriptor: 'yes' }, nearMiss: { mapping: { '/v': { source: '/a', required: false } } } },
  { rule: 'KW-validate-1', level: 'document', draws: { mapping: { '/v': { source: '/a', enum: 'a' } } }, expect: { message: 'enum must be an array', pointer: '/mapping/~1v/enum', descriptor: 'a' }, nearMiss: { mapping: { '/v': { source: '/a', enum: ['a'] } } } },
  { rule: 'KW-validate-1', level: 'document', draws: { mapping: { '/v': { source: '/a', minimum: '1' } } }, expect: { message: 'minimum must be a number', pointer: '/mapping/~1v/minimum', descriptor: '1' }, nearMiss: { mapping: { '/v': { source: '/a', minimum: 1 } } } },
  { rule: 'KW-pattern-1', level: 'document', draws: { mapping: { '/v': { source: '/a', pattern: '([a-z' } } }, expect: { message: 'pattern must be a valid regular expression', pointer: '/mapping/~1v/pattern', descriptor: '([a-z' }, nearMiss: { mapping: { '/v': { source: '/a', pattern: '([a-z])' } } } },
  { rule: 'KW-pattern-2', level: 'document', draws: { mapping: { '/code': { source: '/a', pattern: '(a+)+$' } } }, expect: { message: 'pattern must not quantify a group that contains a quantifier', pointer: '/mapping/~1code/pattern', descriptor: '(a+)+$' }, nearMiss: { mapping: { '/code': { source: '/a', pattern: '(a)+$' } } } },
  { rule: 'KW-pattern-3', level: 'document', draws: { mapping: { '/v': { source: '/a', pattern: 'a?'.repeat(26) } } }, expect: { message: 'pattern must not contain more than 25 quantifiers', pointer: '/mapping/~1v/pattern', descriptor: 'a?'.repeat(26) }, nearMiss: { mapping: { '/v': { source: '/a', pattern: 'a?'.repeat(25) } } } },
  { rule: 'KW-random-1', level: 'document', draws: { mapping: { '/v': { source: '/a', random: 1.5 } } }, expect: { message: 'random must be a positive integer', pointer: '/mapping/~1v/random', descriptor: 1.5 }, nearMiss: { mapping: { '/v': { source: '/a', random: 2, unique: true } } } },
  { rule: 'KW-pattern-4', level: 'document', draws: { mapping: { '/v': { source: '/a', pattern: 'a'.repeat(1001) } } }, expect: { message: 'pattern must not be longer than 1000 characters', pointer: '/mapping/~1v/pattern', descriptor: 'a'.repeat(1001) }, nearMiss: { mapping: { '/v': { source: '/a', pattern: '(?:)'.repeat(225) + 'x'.repeat(100) } } } },
  { rule: 'KW-pattern-4', level: 'document', draws: { mapping: { '/v': { source: '/a', pattern: '[\\s\\S]{16}' } } }, expect: { message: 'pattern must not compile to more than 128 character ranges', pointer: '/mapping/~1v/pattern', descriptor: '[\\s\\S]{16}' }, nearMiss: { mapping: { '/v': { source: '/a', pattern: '[a-h]{16}' } } } },
  { rule: 'KW-pattern-4', level: 'document', draws: { mapping: { '/v': { source: '/a', pattern: 'x'.repeat(129) } } }, expect: { message: 'pattern must not compile to more than 128 character ranges', pointer: '/mapping/~1v/pattern', descriptor: 'x'.repeat(129) }, nearMiss: { mapping: { '/v': { source: '/a', pattern: 'x'.repeat(128) } } } },
  { rule: 'KW-pattern-1', level: 'document', draws: { mapping: { '/v': { source: '/a', pattern: '(a)\\1' } } }, expect: { message: 'pattern must run in linear time: no backreferences, lookahead or lookbehind, and no repetition count above 16', pointer: '/mapping/~1v/pattern', descriptor: '(a)\\1' }, nearMiss: { mapping: { '/v': { source: '/a', pattern: '(a)b{16}' } } } },
  { rule: 'KW-pattern-1', level: 'document', draws: { mapping: { '/v': { source: '/a', pattern: '^(?=x)' } } }, expect: { message: 'pattern must run in linear time: no backreferences, lookahead or lookbehind, and no repetition count above 16', pointer: '/mapping/~1v/pattern', descriptor: '^(?=x)' }, nearMiss: { mapping: { '/v': { source: '/a', pattern: '^(?:x)' } } } },
  { rule: 'KW-random-1', level: 'document', draws: { mapping: { '/v': { source: '/a', random: 300_000_000 } } }, expect: { message: 'random must not exceed 10000', pointer: '/mapping/~1v/random', descriptor: 300_000_000 }, nearMiss: { mapping: { '/v': { source: '/a', random: 10_000 } } } },
  { rule: 'BUDGET-1', level: 'instance', draws: doubling(21), expect: { message: 'the mapping enters 4194303 mapping levels on any input, more than the fanOut budget of 2000000', pointer: '', descriptor: null }, nearMiss: doubling(19) },
  { rule: 'CTX-3', level: 'document', draws: { mapping: { '/errors': { constant: [] } } }, expect: { message: 'a top level pairing writes an envelope key', pointer: '/mapping/~1errors', descriptor: '/errors' }, nearMiss: { mapping: { '/out': { source: '/', mapping: { '/errors': { constant: [] } } } } } },
  { rule: 'KW-transform-1', level: 'instance', draws: { mapping: { '/slug': { source: '/title', transform: ['trim', { sluggify: {} }] } } }, expect: { message: 'sluggify matches no registered transformer', pointer: '/mapping/~1slug/transform/1/sluggify', descriptor: 'sluggify' }, nearMiss: { mapping: { '/slug': { source: '/title', transform: ['trim', { slugify: {} }] } } } },
  { rule: 'KW-init-1', level: 'instance', draws: { mapping: { '/id': { init: 'uuid4' } } }, expect: { message: 'uuid4 matches no registered initializer', pointer: '/mapping/~1id/init', descriptor: 'uuid4' }, nearMiss: { mapping: { '/id': { init: 'uuid' } } } },
  { rule: 'REG-1', level: 'instance', draws: { mapping: { '/x': { $ref: 'mapping:Nope' } } }, expect: { message: 'mapping:Nope matches no registered mapping', pointer: '/mapping/~1x/$ref', descriptor: 'mapping:Nope' }, nearMiss: { mapping: { '/x': { $ref: 'mapping:Known' } } } },
  { rule: 'REG-1', level: 'instance', draws: { mappings: { a: { $id: 'a', mapping: { '/inner': 'missing' } } } }, expect: { message: 'missing matches no registered mapping', pointer: '/mappings/a/mapping/~1inner', descriptor: 'missing' }, nearMiss: { mappings: { b: { $id: 'b', mapping: {} }, a: { $id: 'a', mapping: { '/inner': 'b' } } } } },
  { rule: 'REG-3', level: 'instance', draws: { $id: 'c', $extend: ['mapping:Known', 'mapping:Gone'], mapping: {} }, expect: { message: 'mapping:Gone matches no registered mapping', pointer: '/$extend/1', descriptor: 'mapping:Gone' }, nearMiss: { $id: 'c', $extend: ['mapping:Known'], mapping: {} } },
  { rule: 'KW-2', level: 'instance', draws: { mapping: { '/v': { source: '/a', requst: {} } } }, expect: { message: 'requst matches no keyword or registered extension (did you mean request?)', pointer: '/mapping/~1v/requst', descriptor: {} }, nearMiss: { mapping: { '/v': { source: '/a', request: {} } } } },
]

const WARNING_RULES = new Set(['CTX-3', 'KW-2'])
const check = (level: Row['level'], document: unknown): ValidationReport => (level === 'document' ? validate(document) : instance.validate(document))

for (const row of rows) {
  t.test(`${row.rule}: ${row.expect.pointer || '(root)'}`, async (t) => {
    const report = check(row.level, row.draws)
    const list = WARNING_RULES.has(row.rule) ? report.warnings : report.errors
    t.same(list.filter((d) => d.rule === row.rule), [{ rule: row.rule, ...row.expect }], 'drawn exactly')
    t.same(Object.keys(list.find((d) => d.rule === row.rule) ?? {}), ['rule', 'message', 'pointer', 'descriptor'], 'key order')
    t.equal(report.valid, report.errors.length === 0)
    const near = check(row.level, row.nearMiss)
    t.same([...near.errors, ...near.warnings].filter((d) => d.rule === row.rule), [], 'the near miss does not draw it')
    if (row.level === 'instance') {
      t.same(validate(row.draws).errors.filter((d) => d.rule === row.rule), [], 'the document level never reports reachability')
    }
  })
}

t.test('every rule of the table has a row', async (t) => {
  const covered = new Set(rows.map((r) => r.rule))
  for (const rule of ['DOC-3', 'DOC-2', 'DOC-5', 'DOC-6', 'PTR-9', 'PTR-10', 'REG-5', 'REG-6', 'KW-locate-1', 'KW-mapping-1', 'KW-combinator-1', 'KW-switch-1', 'KW-find-1', 'KW-pipeline-1', 'KW-validate-1', 'KW-pattern-1', 'KW-pattern-2', 'KW-pattern-3', 'KW-pattern-4', 'KW-random-1', 'CTX-3', 'KW-transform-1', 'KW-init-1', 'REG-1', 'REG-3', 'KW-2', 'BUDGET-1']) {
    t.ok(covered.has(rule), rule)
  }
})

t.test('validation.md §2 examples, verbatim', async (t) => {
  const slugs = new Mapper({}, { transformers: { slugify: (v) => v } })
  t.same(validate({ mapping: { '/year': { source: '/published', as: 'integer' } } }), {
    valid: false,
    errors: [{ rule: 'KW-pipeline-1', message: 'as must be string, number, boolean, or json', pointer: '/mapping/~1year/as', descriptor: 'integer' }],
    warnings: [],
  })
  t.same(slugs.validate({ mapping: { '/slug': { source: '/title', transform: 'sluggify' } } }), {
    valid: false,
    errors: [{ rule: 'KW-transform-1', message: 'sluggify matches no registered transformer', pointer: '/mapping/~1slug/transform', descriptor: 'sluggify' }],
    warnings: [],
  })
  t.same(slugs.validate({ mapping: { '/v': { source: '/a', wibble: { k: 1 } } } }), {
    valid: true,
    errors: [],
    warnings: [{ rule: 'KW-2', message: 'wibble matches no keyword or registered extension', pointer: '/mapping/~1v/wibble', descriptor: { k: 1 } }],
  })
  t.same(validate({ mapping: { '/slug': { source: '/title', transform: 'sluggify' } } }), { valid: true, errors: [], warnings: [] }, 'sluggify passes at the document level')
})

t.test('KW-2 suggests the nearest keyword or registered plugin for a one-letter misspelling, and nothing for a far-off key', async (t) => {
  const kw2 = (key: string): string | undefined => instance.validate({ mapping: { '/v': { source: '/a', [key]: 1 } } }).warnings.find((d) => d.rule === 'KW-2')?.message
  const cases: Array<[string, string]> = [
    ['sourc', 'source'], // a deletion
    ['sourcee', 'source'], // an insertion
    ['sourse', 'source'], // a substitution
    ['soruce', 'source'], // a transposition
    ['eahc', 'each'], // a transposition of the first letters
    ['Target', 'target'], // case alone
    ['requst', 'request'], // a registered plugin, not a keyword
    ['maxLenght', 'maxLength'], // two edits (a transposition) in a long name
  ]
  for (const [key, meant] of cases) t.equal(kw2(key), `${key} matches no keyword or registered extension (did you mean ${meant}?)`, key)
  t.equal(kw2('maximun'), 'maximun matches no keyword or registered extension (did you mean maximum?)', 'only the nearest: minimum is three edits away')
  t.equal(kw2('minLengths'), 'minLengths matches no keyword or registered extension (did you mean minLength?)')
  for (const far of ['wibble', 'src', 'transformation', 'sorce_']) {
    t.equal(kw2(far), `${far} matches no keyword or registered extension`, `${far}: nothing near, no suggestion`)
  }
  t.equal(kw2('x'), 'x matches no keyword or registered extension', 'a one-letter key suggests nothing two letters long')
})

t.test('document forms: bare pairing maps, compound members, registered ids', async (t) => {
  t.same(validate({ '/year': { source: '/published', as: 'integer' } }).errors.map((d) => d.pointer), ['/~1year/as'])
  const compound = { mappings: { base: { $id: 'base', mapping: { '/a': { transform: 'nope' } } }, entry: { $id: 'entry', $extend: 'base', mapping: { '/b': { $ref: 'base' } } } } }
  t.same(instance.validate(compound), {
    valid: false,
    errors: [{ rule: 'KW-transform-1', message: 'nope matches no registered transformer', pointer: '/mappings/base/mapping/~1a/transform', descriptor: 'nope' }],
    warnings: [],
  }, 'members see each other: $extend and $ref resolve to the submitted member')
  t.same(instance.validate('mapping:Known'), { valid: true, errors: [], warnings: [] })
  t.same(instance.validate('mapping:Unknown').errors, [{ rule: 'REG-1', message: 'mapping:Unknown matches no registered mapping', pointer: '', descriptor: 'mapping:Unknown' }])
  t.same(instance.validate({ $id: 'x', $extend: 'x', mapping: {} }).errors.map((d) => d.rule), ['REG-3'], 'a cycle is reported, not thrown')
})

t.test('a report lists every violation in document order', async (t) => {
  const report = validate({ mapping: { '/a': { source: 3, as: 'int' }, '/b': ['#/x', 7], c: { pattern: '(x*)*' } } })
  t.same(report.errors.map((d) => `${d.rule} ${d.pointer}`), [
    'KW-locate-1 /mapping/~1a/source',
    'KW-pipeline-1 /mapping/~1a/as',
    'DOC-2 /mapping/~1b/0',
    'DOC-5 /mapping/~1b/1',
    'PTR-10 /mapping/c',
    'KW-pattern-2 /mapping/c/pattern',
  ])
})

t.test('validation changes nothing and evaluates nothing', async (t) => {
  let called = 0
  const mapper = new Mapper({}, { plugins: { spy: async (_o, v) => { called++; return v } } })
  const document = { mapping: { '/a': { source: '/a', spy: {} } } }
  const snapshot = structuredClone(document)
  t.same(mapper.validate(document), { valid: true, errors: [], warnings: [] })
  t.same(document, snapshot)
  t.equal(called, 0)
  t.same(Object.keys(mapper.mappings), [])
})

t.test('documents that validate clean evaluate without host errors (gaps closed)', async (t) => {
  const mapper = new Mapper({ mappings: [{ $id: 'e', each: { '/n': '/n' } }, { $id: 'loop', mapping: 'loop' }] })
  t.same(mapper.validate({ mapping: { '/x': { source: '/', switch: { source: 5, input: '/k', cases: {} } } } }).errors.map((d) => d.rule), ['KW-locate-1'])
  t.same(await mapper.map({ mapping: { '/x': { source: '/o', mapping: { mapping: 'e' } } } }, { o: { n: 1 } }), { x: { n: 1 }, valid: true, errors: [] }, 'a nested name resolves')
  t.same(await mapper.map({ mapping: { '/x': { source: '/o', mapping: 'e' } } }, { o: { n: 2 } }), { x: { n: 2 }, valid: true, errors: [] }, 'a registered id with each supplies its pairings')
  t.same(await mapper.map({ source: '/a', as: 'string' }, [1, 2]), { items: [{}, {}], valid: true, errors: [] }, 'a keyword entry on array input')
  t.same(mapper.validate({ mapping: { '/x': { source: '/', mapping: 'loop' } } }).errors.map((d) => d.message), ['loop never reaches pairings: its mapping references loop through loop'])
  await t.rejects(mapper.map({ mapping: { '/x': { source: '/', mapping: 'loop' } } }, {}), { message: 'mapping references loop through "loop"' })
})

t.test('KW-stdout-1: stdout refused where the host asks, data operands excepted', async (t) => {
  const mapper = new Mapper()
  const printing = { mapping: { '/a': { source: '/a', stdout: true } } }
  t.same(mapper.validate(printing, { stdout: false }).errors, [
    { rule: 'KW-stdout-1', message: 'stdout is not allowed in documents evaluated here', pointer: '/mapping/~1a/stdout', descriptor: true },
  ])
  t.equal(mapper.validate(printing).valid, true, 'allowed unless refused')
  t.equal(mapper.validate({ mapping: { '/a': { constant: { stdout: true } } } }, { stdout: false }).valid, true, 'a constant is data')
  t.equal(mapper.validate({ mapping: { '/a': { source: '/a', stdout: false } } }, { stdout: false }).valid, true, 'stdout: false prints nothing')
})

// KW-pattern-4 (engine.md §6.4): what a pattern compiles to, counted as the screen counts it.
const RANGE_COUNTS: Array<[pattern: string, ranges: number]> = [
  ['a', 1],
  ['^$', 0],
  ['\\bword\\b', 4],
  ['[a-z]{16}', 16],
  ['[a-z]{0,16}', 16],
  ['[a-z]{2,}', 3],
  ['x*', 1],
  ['x+', 2],
  ['(?:ab|c)+', 6],
  ['.{16}', 64],
  ['\\d{4}-\\d{2}', 7],
  ['^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', 68],
  ['^\\S+@\\S+\\.\\S+$', 92],
  ['\\s{16}', 240],
  ['[\\s\\S]{16}', 480],
]

t.test('KW-pattern-4 counts character ranges as engine.md §6.4 says', async (t) => {
  for (const [pattern, ranges] of RANGE_COUNTS) {
    t.equal(patternRanges(pattern, Infinity), ranges, pattern)
    const refused = validate({ mapping: { '/v': { source: '/a', pattern } } }).errors.some((d) => d.rule === 'KW-pattern-4')
    t.equal(refused, ranges > PATTERN_RANGE_LIMIT, `${pattern}: ${refused ? 'refused' : 'admitted'}`)
  }
  t.equal(PATTERN_LENGTH_LIMIT, 1000)
  t.equal(PATTERN_RANGE_LIMIT, 128)
})

/** A character class of `count` single characters from U+0100 on, written as \u escapes. */
const hugeClass = (count: number): string =>
  Array.from({ length: count }, (_, i) => `\\u${(0x100 + 2 * i).toString(16).padStart(4, '0')}`).join('')

t.test('a character class of 5,000 ranges under {16} (30 KB) is refused before it runs; /health keeps answering', async (t) => {
  const pattern = `[${hugeClass(5000)}]{16}`
  t.ok(pattern.length > 30_000, `a ${pattern.length}-character pattern`)
  const app = await buildServer({
    mappings: [{ $id: 'echo', mapping: { '/echo': '/' } } as MappingDocument],
    options: { logging: { level: 'silent' }, map: { explicit: true } },
  })
  const origin = await listening(t, app)
  // 20,000 characters, the explicit form's patternInput budget, none of them in the class.
  const input = { text: 'z'.repeat(20_000) }
  const post = async (document: unknown): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${origin}/map`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mapping: document, input }),
      signal: AbortSignal.timeout(120_000),
    })
    return { status: response.status, body: await response.json() }
  }
  const watched = await watchingHealth(origin, () => post({ mapping: { '/m': { source: '/text', pattern } } }))
  t.equal(watched.result.status, 422)
  t.match(watched.result.body, {
    code: 'InvalidMappingDocument',
    report: { errors: [{ rule: 'KW-pattern-4', message: 'pattern must not be longer than 1000 characters', pointer: '/mapping/~1m/pattern' }] },
  })
  t.ok(watched.attackMs < 5000, `answered in ${Math.round(watched.attackMs)} ms`)
  t.ok(watched.health.length > 0 && watched.health.every((status) => status === 200), `/health answered 200 throughout (${watched.health.length} times)`)
  t.ok(watched.worstMs < 5000, `the slowest /health took ${Math.round(watched.worstMs)} ms (bound 5 s)`)

  // Under the length cap, the same shape still passes the range cap by far: refused as well.
  const shorter = await post({ mapping: { '/m': { source: '/text', pattern: `[${hugeClass(150)}]` } } })
  t.equal(shorter.status, 422)
  t.match(shorter.body.report.errors, [{ rule: 'KW-pattern-4', message: 'pattern must not compile to more than 128 character ranges' }])

  const alive = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(10_000) })
  t.equal(alive.status, 200, 'the process lives and answers')
})
