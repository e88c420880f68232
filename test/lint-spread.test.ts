// The lint rule that keeps spread arguments out of shipped code (eslint.config.js): a spread of a
// caller-sized array into an argument list (`push(...x)`, `Math.max(...x)`, `new Set(...x)`,
// `f.apply(null, x)`) overflows the stack, so shipped code has none and the rule says why. Tests
// and benchmarks are outside it. Run through ESLint's own API on the project's configuration.
// That shipped code has no spread argument today is `npm run lint`'s to say (the rule is an error
// there, and CI and a fresh clone's check run it): this file asserts the rule itself, where it
// applies and what it catches, without parsing the whole tree a second time (about 5 s of CPU in
// the suite on a fresh clone, whose ESLint cache is empty).
import t from 'tap'
import { ESLint } from 'eslint'

const cwd = new URL('..', import.meta.url).pathname
// Only the rule under test runs (ruleFilter): the project's configuration still decides where it
// applies and what it says, and every message asserted below is this rule's.
const eslint = new ESLint({ cwd, ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-syntax' })

const restricted = async (code: string, file: string): Promise<string[]> => {
  const [result] = await eslint.lintText(code, { filePath: file })
  return result!.messages.filter((message) => message.ruleId === 'no-restricted-syntax').map((message) => message.message)
}

t.test('a spread argument in shipped code is an error that says why', async (t) => {
  for (const file of ['engine/sample.ts', 'service/sample.ts', 'http/routes/sample.ts', 'bin/sample.ts', 'app.ts']) {
    const found = await restricted('export function f(out: number[], x: number[]): void {\n  out.push(...x)\n}\n', file)
    t.equal(found.length, 1, `${file}: push(...x)`)
    t.match(found[0], /overflows the stack/)
  }
  t.equal((await restricted('export const m = (x: number[]): number => Math.max(...x)\n', 'engine/sample.ts')).length, 1, 'Math.max(...x)')
  t.equal((await restricted('export const m = (a: number, b: number): number => Math.max(...[a, b])\n', 'engine/sample.ts')).length, 1, 'no exception for a small fixed array')
  t.equal((await restricted('export const s = (x: string[]): Set<string> => new Set(...[x])\n', 'extensions/sample.ts')).length, 1, 'new C(...x)')
  t.equal((await restricted('export const m = (x: number[]): number => Math.max.apply(null, x)\n', 'engine/sample.ts')).length, 1, 'f.apply(null, x)')
  t.equal((await restricted('export const s = (x: number[]): number => Math.max(x.length, 1)\n', 'engine/sample.ts')).length, 0, 'plain arguments are fine')
  t.equal((await restricted('export const c = (x: number[]): number[] => [...x, 1]\n', 'engine/sample.ts')).length, 0, 'an array literal spread is no argument list')
  t.equal((await restricted('const f = () => 0\nf(...[1])\n', 'playground/sample.js')).length, 1, 'playground scripts too')
})

t.test('tests and benchmarks may spread', async (t) => {
  t.same(await restricted('export const m = (x: number[]): number => Math.max(...x)\n', 'test/sample.test.ts'), [])
  t.same(await restricted('export const m = (x: number[]): number => Math.max(...x)\n', 'bench/sample.ts'), [])
})
