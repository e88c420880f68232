// The compiler the project builds and type-checks with: TypeScript 7, the native port (the
// devDependency `typescript-7`; `npm run build` and `npm run typecheck` run it). It runs as a
// process of its own and checks in parallel; the whole project takes it a few seconds of CPU where
// TypeScript 5.9's compiler took about forty. The `typescript` package (5.9) stays for its API,
// which typescript-eslint needs (it does not support TypeScript 7 yet) and which the tests that
// read source code through TypeScript use.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { ROOT, untracked } from './startup-support.js'

/** TypeScript 7's `tsc`, named by path: node_modules/.bin/tsc may be either release's. */
export const TSC = join(ROOT, 'node_modules', 'typescript-7', 'bin', 'tsc')

/** One error of a run, as `--pretty false` prints it: `file(line,col): error TS1234: message`. */
export interface Diagnostic {
  readonly file: string
  readonly line: number
  readonly code: string
  readonly message: string
}

export interface Compiled {
  /** The exit status: 0 when the program has no error. */
  readonly code: number
  readonly diagnostics: readonly Diagnostic[]
  /** Everything it printed. */
  readonly output: string
}

const ERROR = /^(.+)\((\d+),\d+\): error (TS\d+): (.*)$/

/** `tsc ...args` in `cwd` (by default the project's root), errors printed plainly and read back. */
export function tsc(args: readonly string[], cwd = ROOT): Promise<Compiled> {
  const [command, argv] = untracked(process.execPath, [TSC, '--pretty', 'false', ...args])
  return new Promise((resolve, reject) => {
    execFile(command, argv, { cwd, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : undefined
      if (code === undefined) return reject(error ?? new Error('tsc did not run'))
      const output = stdout + stderr
      const diagnostics = output.split('\n').flatMap((line) => {
        const found = ERROR.exec(line)
        return found === null ? [] : [{ file: found[1]!, line: Number(found[2]), code: found[3]!, message: found[4]! }]
      })
      resolve({ code, diagnostics, output })
    })
  })
}
