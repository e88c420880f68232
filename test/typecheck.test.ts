// The project's type check (`npm run typecheck`: TypeScript 7's tsc --noEmit -p tsconfig.json, see
// test/tsc.ts) as a test of the suite: every source, test and benchmark file compiles under
// `strict` with no diagnostic. Run here, it shares the machine with the other test processes
// instead of holding the cores alone before them.
import t from 'tap'
import { tsc } from './tsc.js'

t.setTimeout(300000)

t.test('tsc --noEmit -p tsconfig.json: no diagnostic', async (t) => {
  const checked = await tsc(['--noEmit', '-p', 'tsconfig.json', '--diagnostics'])
  t.same(checked.diagnostics, [], 'no error in any file')
  t.equal(checked.code, 0, checked.code === 0 ? 'tsc exits 0' : checked.output)
  // --diagnostics ends with the program's figures: the project's files and what they import.
  const files = Number(/^Files:\s+(\d+)$/m.exec(checked.output)?.[1])
  t.ok(files > 1000, `it checked the project's files and their declarations (${files})`)
})
