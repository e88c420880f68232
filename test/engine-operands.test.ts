// Every keyword's operand grammar (its record's `operand`), pinned over a fixed corpus of operands:
// the rule, message and place of each issue, as validation reports them. The corpus holds every
// JSON type and the shapes the keywords' grammars look at (pointers, lists, `find`'s and
// `switch`'s objects, transform steps, examples). The grammar is judged by the message, exactly;
// this file says when a change to a record (or a grammar derived another way, issue 33) gives a
// different answer for any of them. To accept a deliberate change: UPDATE_OPERANDS=1 npx tap
// test/engine-operands.test.ts, and review the diff of test/data/operand-issues.json.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { KEYWORDS } from '../engine/index.js'
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
      issues = record.operand?.(value) ?? []
    } catch (error) {
      issues = `threw ${(error as Error).message}`
    }
    return [JSON.stringify(value), issues]
  })
}

const SNAPSHOT = join(ROOT, 'test', 'data', 'operand-issues.json')

t.test('every record\'s operand grammar answers the corpus as pinned', async (t) => {
  const now = Object.fromEntries((KEYWORDS as readonly KeywordRecord[]).filter((record) => record.operand !== undefined).map((record) => [record.name, issuesOf(record)]))
  // One line per keyword and operand, so that a change reads as the lines it changes.
  const lines = Object.entries(now).map(([name, answers]) => `${JSON.stringify(name)}: [\n${answers.map((answer) => `  ${JSON.stringify(answer)}`).join(',\n')}\n]`)
  if (process.env.UPDATE_OPERANDS === '1') writeFileSync(SNAPSHOT, `{\n${lines.join(',\n')}\n}\n`)
  const pinned = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as Record<string, Array<[string, unknown]>>
  t.same(Object.keys(now).sort(), Object.keys(pinned).sort(), 'the same keywords have a grammar')
  for (const [name, answers] of Object.entries(now)) t.same(answers, pinned[name], name)
  const reported = Object.values(now).flat().filter(([, issues]) => Array.isArray(issues) && issues.length > 0).length
  t.ok(reported > 300, `${reported} operands of the corpus draw issues`)
})
