// The language's conformance suite (test/conformance/engine, format in test/conformance/README.md): every case
// runs, by file and description, and none is skipped.
import { basename } from 'node:path'
import t from 'tap'
import { caseFiles, loadFile, runCase, SUITE_DIR } from './conformance/suite.js'

const files = caseFiles([SUITE_DIR])
const total = files.reduce((n, file) => n + loadFile(file).cases.length, 0)

t.test('the suite is present and complete', async (t) => {
  t.ok(files.length >= 14, `found ${files.length} case files in ${SUITE_DIR}`)
  t.ok(total >= 189, `found ${total} cases`)
})

for (const file of files) {
  const { cases } = loadFile(file)
  t.test(basename(file), async (t) => {
    for (const c of cases) {
      t.test(c.description, async (t) => {
        t.same(await runCase(c), [], `${c.level} level`)
      })
    }
  })
}
