// `npm run conformance -- <dir-or-file>…`: run case files in the conformance format and end with
// `conformance: N passed, M failed`. With no argument, the project's suite in test/conformance/engine.
import { relative } from 'node:path'
import { caseFiles, loadFile, runCase, SUITE_DIR } from './suite.js'

const targets = process.argv.slice(2)
let passed = 0
let failed = 0
try {
  for (const file of caseFiles(targets.length > 0 ? targets : [SUITE_DIR])) {
    const { cases } = loadFile(file)
    for (const c of cases) {
      const failures = await runCase(c)
      const name = `${relative(process.cwd(), file)} › ${c.description}`
      if (failures.length === 0) {
        passed++
        console.log(`ok   ${name}`)
      } else {
        failed++
        console.log(`FAIL ${name}`)
        for (const failure of failures) console.log(`       ${failure}`)
      }
    }
  }
} catch (error) {
  console.error(`conformance: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 2
}
console.log(`conformance: ${passed} passed, ${failed} failed`)
if (failed > 0) process.exitCode = 1
