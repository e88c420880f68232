// Every keyword's operand grammar (its schema fragment, read by keywords/grammar.ts), pinned over a
// fixed corpus of operands: the rule, message and place of each issue, as validation reports them.
// The corpus holds every JSON type and the shapes the keywords' grammars look at (pointers, lists,
// `find`'s and `switch`'s objects, transform steps, examples). The grammar is judged by the message,
// exactly. The answers were pinned while the grammars were functions beside the fragments; the
// fragments read the same, finding for finding. To accept a deliberate change: UPDATE_OPERANDS=1
// npx tap test/engine-operands.test.ts, and review the diff of test/data/operand-issues.json.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { KEYWORDS } from '../engine/index.js'
import { operandIssues, published, refuse, SCREEN } from '../engine/keywords/grammar.js'
import type { KeywordRecord } from '../engine/keywords/record.js'
import { ROOT } from './loader/compiled-tree.mjs'

const CORPUS: readonly unknown[] = [
  null, true, false, 0, 1, -1, 1.5, 1e21, '', 'x', 'uuid', 'string', 'number', 'json', 'integer', '/a', '/a/../b', '#/a', '__proto__', 'constructor',
  '^a', '(a+)+$', '[', [], ['/a'], ['/a', 'name'], [1], [{}], [null], ['x', 'y'],
  {}, { a: 1 }, { eq: {} }, { eq: { a: 1 }, pointer: '/v' }, { eq: 1 }, { eq: {}, pointer: 5 }, { pointer: '/v' },
  { cases: {} }, { source: '/k', cases: {} }, { input: '/k', cases: { a: '/x' } }, { target: '/k', cases: {} }, { source: 5, cases: {} }, { source: '/k' },
  ['trim'], ['trim', { split: ',' }], ['trim', { split: ',', slice: 1 }], [{}], ['trim', 5],
  [{ input: {}, output: {} }], [{ input: 1 }], [{ output: {} }], [{ input: {}, output: 1 }], [{ input: {}, output: {}, valid: 'yes' }], [{ input: {}, output: {}, errors: 1 }],
  { '/a': '/a' }, { mapping: {} }, { $ref: 'x' }, 2, 100, 0.5,
]

function issuesOf(record: KeywordRecord): Array<[string, unknown]> {
  return CORPUS.map((value) => {
    let issues: unknown
    try {
      issues = operandIssues(record.schema, value)
    } catch (error) {
      issues = `threw ${(error as Error).message}`
    }
    return [JSON.stringify(value), issues]
  })
}

const SNAPSHOT = join(ROOT, 'test', 'data', 'operand-issues.json')

t.test('every record\'s operand grammar answers the corpus as pinned', async (t) => {
  const now = Object.fromEntries((KEYWORDS as readonly KeywordRecord[]).filter((record) => Object.getOwnPropertySymbols(record.schema).length > 0).map((record) => [record.name, issuesOf(record)]))
  // One line per keyword and operand, so that a change reads as the lines it changes.
  const lines = Object.entries(now).map(([name, answers]) => `${JSON.stringify(name)}: [\n${answers.map((answer) => `  ${JSON.stringify(answer)}`).join(',\n')}\n]`)
  if (process.env.UPDATE_OPERANDS === '1') writeFileSync(SNAPSHOT, `{\n${lines.join(',\n')}\n}\n`)
  const pinned = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as Record<string, Array<[string, unknown]>>
  t.same(Object.keys(now).sort(), Object.keys(pinned).sort(), 'the same keywords have a grammar')
  for (const [name, answers] of Object.entries(now)) t.same(answers, pinned[name], name)
  const reported = Object.values(now).flat().filter(([, issues]) => Array.isArray(issues) && issues.length > 0).length
  t.ok(reported > 300, `${reported} operands of the corpus draw issues`)
})

// The reading of a fragment (keywords/grammar.ts), on fragments made for it: what decides which
// finding an operand draws, so that a new keyword's grammar is read as its fragment says.
t.test('a fragment\'s refusals: the first failing assertion, per-keyword findings, parts where they stand', async (t) => {
  const bounded = { type: 'integer', minimum: 1, maximum: 9, ...refuse('R-1', 'n must be a positive integer', { maximum: 'n must not exceed 9' }) }
  t.same(operandIssues(bounded, 'x'), [{ rule: 'R-1', message: 'n must be a positive integer' }], 'type first')
  t.same(operandIssues(bounded, 0), [{ rule: 'R-1', message: 'n must be a positive integer' }], 'then the bounds, in order')
  t.same(operandIssues(bounded, 10), [{ rule: 'R-1', message: 'n must not exceed 9' }], 'a keyword\'s own message')
  t.same(operandIssues(bounded, 5), [], 'well-formed: no finding')
  const named = { type: 'string', not: { enum: ['a'] }, ...refuse('R-1', 'bad', { not: { rule: 'R-2', message: '"{value}" is taken' } }) }
  t.same(operandIssues(named, 'a'), [{ rule: 'R-2', message: '"a" is taken' }], 'a keyword\'s own rule, the value named')
  const list = {
    type: 'array',
    items: { anyOf: [{ type: 'string' }, { type: 'object', minProperties: 1, ...refuse(undefined, 'one key') }], ...refuse(undefined, 'a name or an object') },
    ...refuse('R-3', 'a list'),
  }
  t.same(operandIssues(list, 5), [{ rule: 'R-3', message: 'a list' }], 'at the operand: no place, no descriptor')
  t.same(operandIssues(list, ['a', 5, {}]), [
    { rule: 'R-3', message: 'a name or an object', at: ['1'], descriptor: 5 },
    { rule: 'R-3', message: 'one key', at: ['2'], descriptor: {} },
  ], 'every failing element where it stands, the rule inherited; anyOf speaks through the branch whose type matched')
  const silent = { type: 'object', required: ['k'], properties: { k: { type: 'string' }, p: { $ref: '#/$defs/pointer' } }, ...refuse('R-4', 'an object with k') }
  t.same(operandIssues(silent, { k: 1 }), [{ rule: 'R-4', message: 'an object with k' }], 'a part without a refusal of its own: the enclosing one refuses')
  t.same(operandIssues(silent, {}), [{ rule: 'R-4', message: 'an object with k' }], 'once')
  t.same(operandIssues(silent, { k: 'x', p: 5 }), [], '$ref is not followed (validation looks inside the operand)')
  const record = {
    type: 'object',
    required: ['a', 'b'],
    additionalProperties: false,
    properties: { a: {}, b: { type: 'boolean', ...refuse(undefined, 'b must be true or false') } },
    ...refuse('R-5', 'an object', { required: 'missing {key}', additionalProperties: '{key} is unknown' }),
  }
  t.same(operandIssues(record, JSON.parse('{"b": 1, "__proto__": 2}')), [
    { rule: 'R-5', message: 'missing a' },
    { rule: 'R-5', message: 'b must be true or false', at: ['b'], descriptor: 1 },
    { rule: 'R-5', message: '__proto__ is unknown', at: ['__proto__'], descriptor: 2 },
  ], 'each missing key, then each member in the operand\'s order, own keys only')
  const screened = { type: 'string', [SCREEN]: (value: unknown) => (value === 'bad' ? { rule: 'R-7', message: 'screened' } : undefined), ...refuse('R-6', 'a string') }
  t.same(operandIssues(screened, 'bad'), [{ rule: 'R-7', message: 'screened' }], 'a screen runs past the assertions')
  t.same(operandIssues(screened, 1), [{ rule: 'R-6', message: 'a string' }], 'and only past them')
  const two = { type: 'string', minLength: 2, ...refuse('R-10', 'two characters') }
  t.same(operandIssues(two, '\u{1F600}'), [{ rule: 'R-10', message: 'two characters' }], 'minLength counts code points: a surrogate pair is one')
  t.same([operandIssues(two, 'ab'), operandIssues(two, '\u{1F600}a'), operandIssues(two, 'x'.repeat(100_000))], [[], [], []], 'two of them, or many, pass')
  t.throws(() => operandIssues({ type: 'string', pattern: '^a', ...refuse('R-8', 'x') }, 'b'), /pattern, which the operand grammar does not read/, 'a keyword it does not read is refused, never ignored')
  t.same(published({ type: 'string', ...refuse('R-9', 'x'), anyOf: [{ [SCREEN]: () => undefined, minLength: 1 }] }), { type: 'string', anyOf: [{ minLength: 1 }] }, 'published without the annotations')
  t.same(JSON.parse(JSON.stringify(KEYWORDS.map((k) => published(k.schema)))), KEYWORDS.map((k) => published(k.schema)), 'every published fragment is JSON')
})
