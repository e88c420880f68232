// Module hooks for the tests (register.mjs says why): `.ts` files are compiled by esbuild to ES2022
// modules with an inline source map, and a relative `./x.js` import made from a `.ts` file resolves
// to `./x.ts` when only that exists, as TypeScript's NodeNext resolution has it.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync } from 'node:fs'
import { readFile, rename, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

// Compiled output is kept by content hash: every test process and worker thread would otherwise
// compile the same few hundred files again (seconds for each worker thread the service starts).
const CACHE = fileURLToPath(new URL('../../node_modules/.cache/mapper-test-loader/', import.meta.url))
mkdirSync(CACHE, { recursive: true })

// esbuild's version keys the cache; esbuild itself is loaded only on a miss. Every test process,
// child process and worker thread starts a hooks thread, and loading esbuild there cost about 80 ms
// of CPU each, with every file it was asked for already compiled.
const version = createRequire(import.meta.url)('esbuild/package.json').version

const TS_OPTIONS = {
  loader: 'ts',
  format: 'esm',
  target: 'es2022',
  sourcemap: 'inline',
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
}

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL
  if (parent !== undefined && parent.startsWith('file:') && parent.endsWith('.ts') && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const typescript = new URL(`${specifier.slice(0, -3)}.ts`, parent)
    if (!existsSync(new URL(specifier, parent)) && existsSync(typescript)) return { url: typescript.href, shortCircuit: true }
  }
  return nextResolve(specifier, context)
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context)
  const path = fileURLToPath(url)
  const text = await readFile(path, 'utf8')
  const key = createHash('sha1').update(version).update('\0').update(path).update('\0').update(text).digest('hex')
  const cached = `${CACHE}${key}.js`
  const hit = await readFile(cached, 'utf8').catch(() => undefined)
  if (hit !== undefined) return { format: 'module', source: hit, shortCircuit: true }
  const { transform } = await import('esbuild')
  const { code } = await transform(text, { ...TS_OPTIONS, sourcefile: path })
  // Written aside and renamed: a concurrent reader sees the whole file or none.
  const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`
  await writeFile(partial, code).then(() => rename(partial, cached)).catch(() => {})
  return { format: 'module', source: code, shortCircuit: true }
}
