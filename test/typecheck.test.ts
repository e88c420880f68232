// The project's type check (`npm run typecheck`: tsc --noEmit -p tsconfig.json) as a test of the
// suite: every source, test and benchmark file compiles under `strict` with no diagnostic. Run
// here, through TypeScript's API, it shares the machine with the other test processes instead of
// holding one core alone before them (the suite is CPU-bound on two cores). The program is
// test/typescript-project.ts's, which test/package-types.test.ts emits the declarations from.
import t from 'tap'
import ts from 'typescript'
import { ROOT } from './startup-support.js'
import { typescriptProject } from './typescript-project.js'

t.setTimeout(300000)

t.test('tsc --noEmit -p tsconfig.json: no diagnostic', async (t) => {
  const { config, program } = typescriptProject()
  t.same(config.errors.map((error) => ts.flattenDiagnosticMessageText(error.messageText, '\n')), [], 'tsconfig.json has no error')
  t.ok(config.fileNames.length > 100, `it names the project's files (${config.fileNames.length})`)
  const diagnostics = ts.getPreEmitDiagnostics(program)
  const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (name) => name, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' }
  t.equal(diagnostics.length, 0, diagnostics.length === 0 ? 'no diagnostic' : ts.formatDiagnostics(diagnostics, host))
})
