// The shipped sources compiled to JavaScript as a tree laid out as the sources are, kept by content
// hash under node_modules/.cache: test/loader/hooks.mjs loads the service's modules from one (its
// mirror, with inline source maps), and test/proc-compiled.ts starts the service's processes from
// another (no source maps, the package's own package.json beside it). Plain JavaScript: the
// loader's hooks thread imports it, before any TypeScript can be loaded.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The project's root, with a trailing separator. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** esbuild's version: it keys every compiled file and tree; esbuild itself is loaded only to compile. */
export const ESBUILD_VERSION = createRequire(import.meta.url)('esbuild/package.json').version

/** How TypeScript is compiled for the tests: ES2022 modules, as tsc's target has it, nothing added. */
export function transformOptions(sourcemap) {
  return {
    loader: 'ts',
    format: 'esm',
    target: 'es2022',
    ...(sourcemap ? { sourcemap: 'inline' } : {}),
    tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
  }
}

const BUILD = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8'))
for (const entry of BUILD.include) {
  if (entry !== '*.ts' && !/^[\w-]+$/.test(entry)) throw new Error(`compiled-tree: tsconfig.build.json include ${entry} is neither a folder nor *.ts`)
}
const FOLDERS = new Set(BUILD.include.filter((entry) => entry !== '*.ts' && !BUILD.exclude.includes(entry)))
const ROOT_FILES = BUILD.include.includes('*.ts')

/** Whether `relative` (a path under the root, `/`-separated) is a file `npm run build` compiles. */
export function isShipped(relative) {
  if (!relative.endsWith('.ts') || relative.endsWith('.d.ts')) return false
  const slash = relative.indexOf('/')
  return slash === -1 ? ROOT_FILES : FOLDERS.has(relative.slice(0, slash))
}

/** The files `npm run build` compiles (tsconfig.build.json's include, less its exclude), relative to the root, with their text, in a stable order. */
export function shippedSources() {
  const files = ROOT_FILES ? readdirSync(ROOT).filter((name) => isShipped(name) && statSync(ROOT + name).isFile()) : []
  for (const folder of FOLDERS) {
    for (const name of readdirSync(ROOT + folder, { recursive: true, encoding: 'utf8' })) {
      const file = `${folder}/${name.split('\\').join('/')}`
      if (isShipped(file)) files.push(file)
    }
  }
  return new Map(files.sort().map((file) => [file, readFileSync(ROOT + file, 'utf8')]))
}

/** Trees of sources that have since changed are removed once this old. */
const STALE_MS = 3600_000

/**
 * The tree `name` of the shipped sources as they are now: node_modules/.cache/<name>/<hash>, the
 * hash over esbuild's version, `salt` and every source. Built by the first process to need it:
 * each source compiled (by `compile`, else by esbuild without source maps) to <file>.js, then
 * `finish(folder)` adds what else the tree holds, all aside, then renamed into place, so a
 * concurrent process sees the whole tree or none; trees of earlier sources are then removed.
 * Packages resolve from the project's node_modules, above it. Resolves with the tree's path.
 */
export async function compiledTree(name, { salt = '', compile, finish = async () => {} } = {}) {
  const sources = shippedSources()
  const hash = createHash('sha1').update(ESBUILD_VERSION).update('\0').update(salt)
  for (const [file, text] of sources) hash.update('\0').update(file).update('\0').update(text)
  const key = hash.digest('hex')
  const cache = join(ROOT, 'node_modules', '.cache', name)
  const tree = join(cache, key)
  if (existsSync(tree)) return tree
  mkdirSync(cache, { recursive: true })
  const options = transformOptions(false)
  const transform = compile ?? (async (path, text) => (await (await import('esbuild')).transform(text, { ...options, sourcefile: path })).code)
  const partial = `${tree}.${process.pid}.${Math.random().toString(36).slice(2)}`
  await Promise.all(
    [...sources].map(async ([file, text]) => {
      const code = await transform(ROOT + file, text)
      const out = join(partial, `${file.slice(0, -3)}.js`)
      await mkdir(dirname(out), { recursive: true })
      await writeFile(out, code)
    })
  )
  await finish(partial)
  // Another process may have built the same tree meanwhile: then its copy stays and this one goes.
  await rename(partial, tree).catch(() => rm(partial, { recursive: true, force: true }))
  for (const entry of readdirSync(cache)) {
    const path = join(cache, entry)
    try {
      if (entry !== key && Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { recursive: true, force: true })
    } catch {
      // Removed by another process meanwhile.
    }
  }
  return tree
}
