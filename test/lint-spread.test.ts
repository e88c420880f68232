// The lint rule that keeps spread arguments out of shipped code (eslint.config.js): a spread of a
// caller-sized array into an argument list (`push(...x)`, `Math.max(...x)`, `new Set(...x)`,
// `f.apply(null, x)`) overflows the stack, so shipped code has none and the rule says why. Tests
// and benchmarks are outside it. Run through ESLint's own API on the project's configuration.
import t from 'tap'
import { ESLint } from 'eslint'

const cwd = new URL('..', import.meta.url).pathname
// Only the rule under test runs (ruleFilter): the project's configuration still decides where it
// applies and what it says, and every message asserted below is this rule's; the rest of the rule
// set (a whole `npm run lint`) would lint the tree ten times over for messages filtered out.
// lintFiles keeps ESLint's own cache, by content (ESLint keys it on its version, Node's and the
// configuration too): a file is linted again whenever it changed since the last run, and this
// test alone writes that cache, always with this filter.
const eslint = new ESLint({
  cwd,
  ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-syntax',
  cache: true,
  cacheStrategy: 'content',
  cacheLocation: `${cwd}node_modules/.cache/lint-spread/`,
})

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

t.test('shipped code has no spread argument today', async (t) => {
  const results = await eslint.lintFiles(['engine', 'support', 'extensions', 'sources', 'config', 'service', 'workers', 'observability', 'http', 'bin', 'app.ts', 'server.ts', 'index.ts', 'playground'])
  const spreads = results.flatMap((result) => result.messages.filter((message) => message.ruleId === 'no-restricted-syntax').map((message) => `${result.filePath}:${message.line}`))
  t.same(spreads, [])
})
