// Module hooks for the tests (register.mjs says why): `.ts` files are compiled by esbuild to ES2022
// modules with an inline source map, and a relative `./x.js` import made from a `.ts` file resolves
// to `./x.ts` when only that exists, as TypeScript's NodeNext resolution has it.
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { transform } from 'esbuild'

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
  const { code } = await transform(await readFile(path, 'utf8'), { ...TS_OPTIONS, sourcefile: path })
  return { format: 'module', source: code, shortCircuit: true }
}
