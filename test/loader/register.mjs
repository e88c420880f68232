// `node --import ./test/loader/register.mjs file.ts`: how tap runs the TypeScript tests (.taprc), and
// how the tests' child processes and the benchmarks run from source.
// tsx would do, but it compiles with esbuild's keepNames, which gives every function it creates an
// own `name` property: a compiled plan (a tree of closures) then takes about 1.6 times the memory
// it takes in the shipped build (tsc's output), and the tests that bound memory would measure the
// loader instead of the service. These hooks compile with esbuild as tsc's target does, nothing
// added; the type check is `npm run typecheck`, run first by `npm test`.
import { register, syncBuiltinESMExports } from 'node:module'
import workerThreads from 'node:worker_threads'

if (workerThreads.isMainThread) {
  register('./hooks.mjs', import.meta.url)
  startWorkersPlain()
}

/**
 * Worker threads start as they do in the service, with no module hooks: hooks.mjs loads the
 * service's modules from a compiled copy of the sources (its mirror), so the workers the service
 * starts (its isolation pool, the loading thread, the parse pool, through piscina or not) have only
 * JavaScript to load. A worker otherwise runs every `--import` of its parent again: this loader's
 * (the process's execArgv) and tap's process-info hooks (NODE_OPTIONS, which a worker reads from
 * its environment; the suite does not use them, coverage is off). Each gives the worker a hooks
 * thread of its own through which every module it loads passes (Node 20 and 22): about a second of
 * CPU for a worker that loads the service, and the suite starts about fifty. The rest of the
 * environment is kept; a worker whose entry is a `.ts` file, or that is given its own `execArgv`,
 * starts as asked.
 */
function startWorkersPlain() {
  const { Worker, SHARE_ENV } = workerThreads
  const imports = (arg, index, all) => arg.startsWith('--import') || all[index - 1] === '--import'
  // Of the rest, only what a worker may be given (source maps: tap runs the tests with them). V8's
  // flags (--expose-gc, --max-semi-space-size…) are the process's, its workers' too, and given to a
  // worker by name they throw ERR_WORKER_INVALID_EXEC_ARGV.
  const execArgv = process.execArgv.filter((arg) => arg === '--enable-source-maps')
  const withoutImports = (env) => {
    if (env === SHARE_ENV || env?.NODE_OPTIONS === undefined) return env
    const options = env.NODE_OPTIONS.split(' ').map((arg) => arg.replace(/^"(.*)"$/, '$1'))
    return { ...env, NODE_OPTIONS: options.filter((arg, index, all) => !imports(arg, index, all)).join(' ') }
  }
  const typescript = (entry) => String(entry instanceof URL ? entry.pathname : entry).endsWith('.ts')
  workerThreads.Worker = class extends Worker {
    constructor(entry, options = {}) {
      const plain = options.execArgv === undefined && !typescript(entry)
      super(entry, plain ? { ...options, execArgv, env: withoutImports(options.env ?? process.env) } : options)
    }
  }
  syncBuiltinESMExports()
}

// The tests (and the benchmarks run through this loader) use the engine as the service runs it:
// with V8's linear-time RegExp engine on, which the service turns on at start-up and an embedder
// with enableLinearRegExp() (engine/linear-regexp.ts). test/linear-regexp.test.ts runs the engine
// without it, in a child started with MAPPER_LINEAR_REGEXP=off. The flag is the process's: worker
// threads have it too.
if (process.env.MAPPER_LINEAR_REGEXP !== 'off') {
  const { setFlagsFromString } = await import('node:v8')
  setFlagsFromString('--enable-experimental-regexp-engine')
}
