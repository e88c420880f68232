// `node --import ./test/loader/register.mjs file.ts`: how tap runs the TypeScript tests (.taprc), and
// how the tests' child processes and the benchmarks run from source (it reaches worker threads, tsx's does not).
// tsx would do, but it compiles with esbuild's keepNames, which gives every function it creates an
// own `name` property: a compiled plan (a tree of closures) then takes about 1.6 times the memory
// it takes in the shipped build (tsc's output), and the tests that bound memory would measure the
// loader instead of the service. These hooks compile with esbuild as tsc's target does, nothing
// added; the type check is `npm run typecheck`, run first by `npm test`.
import { register } from 'node:module'

register('./hooks.mjs', import.meta.url)

// The tests (and the benchmarks run through this loader) use the engine as the service runs it:
// with V8's linear-time RegExp engine on, which the service turns on at start-up and an embedder
// with enableLinearRegExp() (engine/linear-regexp.ts). test/linear-regexp.test.ts runs the engine
// without it, in a child started with MAPPER_LINEAR_REGEXP=off.
if (process.env.MAPPER_LINEAR_REGEXP !== 'off') {
  const { setFlagsFromString } = await import('node:v8')
  setFlagsFromString('--enable-experimental-regexp-engine')
}
