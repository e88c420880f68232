// A full garbage collection between evaluations leaves the engine's optimized code in place. V8
// frees a hidden class no live object has and deoptimizes the code compiled against it ("weak
// objects"); no Run is alive between two evaluations, so before engine/context.ts kept one
// (SHAPE_KEEPERS) every full collection sent the evaluation path back to the interpreter: the
// Run's constructor and meter, the entry's evaluate, the generated levels (Node 20; Node 24's V8
// keeps these classes by itself, and the check holds there as well). The evaluations' last
// envelope is kept, so that the output's own classes, which any code building that shape would
// lose alike, stay alive: what is left to lose is the engine's.
import { execFile } from 'node:child_process'
import t from 'tap'

const script = `
import { Mapper } from './engine/index.ts'
const compiled = new Mapper().compile({ mapping: { '/a': '/b', '/c': { source: '/d', each: { '/e': '/f' } }, '/g': { first: ['/x', '/b'], as: 'string' } } })
let kept
for (let round = 0; round < 4; round++) {
  for (let i = 0; i < 20000; i++) kept = compiled.run({ b: i, d: [{ f: i }, { f: -i }] })
  globalThis.gc()
}
process.stdout.write(JSON.stringify(kept))
`

t.test('full collections between evaluations do not deoptimize the evaluation path', async (t) => {
  const loader = new URL('./loader/register.mjs', import.meta.url).href
  const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', '--trace-deopt', '--import', loader, '--input-type=module', '-e', script],
      { cwd: new URL('..', import.meta.url), timeout: 60000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => (error === null ? resolve({ stdout }) : reject(new Error(`${error.message}\n${stderr}`)))
    )
  })
  // The trace and the script's own output share stdout: the envelope is the last line.
  const lines = stdout.trimEnd().split('\n')
  t.strictSame(JSON.parse(lines.at(-1)!), { a: 19999, c: [{ e: 19999 }, { e: -19999 }], g: '19999', valid: true, errors: [] })
  // "[marking dependent code … (… <SharedFunctionInfo enterLevel>) … for deoptimization, reason: weak objects]"
  const lost = lines.filter((line) => line.includes('reason: weak objects')).map((line) => /<SharedFunctionInfo ([^>]*)>/.exec(line)?.[1] ?? line)
  // The TypeScript loader's messaging with its worker (node:internal/modules/esm/hooks, event_target) is not the engine's.
  const engine = lost.filter((name) => !/^(make(Sync|Async)Request|waitForWorker|(add|remove)EventListener)$/.test(name))
  t.strictSame(engine, [], 'no engine function was deoptimized for a freed hidden class')
})
