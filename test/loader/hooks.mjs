// Module hooks for the tests (register.mjs says why): `.ts` files are compiled by esbuild to ES2022
// modules with an inline source map, and a relative `./x.js` import made from a `.ts` file resolves
// to `./x.ts` when only that exists, as TypeScript's NodeNext resolution has it.
//
// The shipped sources (tsconfig.build.json's `include`) are not loaded from their `.ts` files but
// from a compiled copy of the whole set, laid out as the sources are (the mirror, below): a module's
// `import.meta.url` then ends in `.js`, as in dist/, so the worker threads the service starts
// (its isolation pool, the loading thread, the parse pool) start from plain JavaScript files and
// need no hooks. With hooks, each worker thread had a hooks thread of its own (Node 20 and 22),
// through which every module it loaded passed: about half a second of CPU per worker, and the suite
// starts about fifty. register.mjs registers the hooks on main threads only.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createRequire } from 'node:module'

// Compiled output is kept by content hash: every test process would otherwise compile the same few
// hundred files again.
const CACHE = fileURLToPath(new URL('../../node_modules/.cache/mapper-test-loader/', import.meta.url))
mkdirSync(CACHE, { recursive: true })

// esbuild's version keys the cache; esbuild itself is loaded only on a miss. Every test process and
// child process starts a hooks thread, and loading esbuild there cost about 80 ms of CPU each, with
// every file it was asked for already compiled.
const version = createRequire(import.meta.url)('esbuild/package.json').version

const TS_OPTIONS = {
  loader: 'ts',
  format: 'esm',
  target: 'es2022',
  sourcemap: 'inline',
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
}

/** The JavaScript of the TypeScript file `path` whose text is `text`, from the cache or compiled now. */
async function compiled(path, text) {
  const key = createHash('sha1').update(version).update('\0').update(path).update('\0').update(text).digest('hex')
  const cached = `${CACHE}${key}.js`
  const hit = await readFile(cached, 'utf8').catch(() => undefined)
  if (hit !== undefined) return hit
  const { transform } = await import('esbuild')
  const { code } = await transform(text, { ...TS_OPTIONS, sourcefile: path })
  await writeAside(cached, code)
  return code
}

/** Written aside and renamed: a concurrent reader sees the whole file or none. */
function writeAside(path, text) {
  const partial = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`
  return writeFile(partial, text).then(() => rename(partial, path)).catch(() => {})
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const ROOT_URL = pathToFileURL(ROOT).href

// The shipped sources: tsconfig.build.json's `include`, folders and the root's `*.ts`.
const INCLUDE = JSON.parse(readFileSync(`${ROOT}tsconfig.build.json`, 'utf8')).include
const FOLDERS = new Set(INCLUDE.filter((entry) => !entry.includes('*')))

/** The path of `url` under the root (as a URL's path) when it is a shipped source file, else undefined. */
function shippedSource(url) {
  if (!url.startsWith(ROOT_URL) || !url.endsWith('.ts') || url.endsWith('.d.ts')) return undefined
  const relative = url.slice(ROOT_URL.length)
  const slash = relative.indexOf('/')
  return slash === -1 || FOLDERS.has(relative.slice(0, slash)) ? relative : undefined
}

/** Every shipped source file, relative to the root, in a stable order. */
function shippedSources() {
  const files = readdirSync(ROOT).filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts') && statSync(ROOT + name).isFile())
  for (const folder of FOLDERS) {
    for (const name of readdirSync(ROOT + folder, { recursive: true, encoding: 'utf8' })) {
      if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push(`${folder}/${name}`)
    }
  }
  return files.sort()
}

const MIRROR_PREFIX = 'mirror-'
// A mirror made this long ago is removed when another is made (the sources changed since).
const MIRROR_KEPT_MS = 60 * 60 * 1000

/**
 * The mirror of the sources as they are now: every shipped source compiled, at the same place
 * under a folder of the cache named by the hash of all of them, with a package.json that makes its
 * `.js` files ES modules (and names no package: support/package.ts walks past it to the project's).
 * Made once per state of the sources, aside, then renamed into place; bare imports resolve from
 * the project's node_modules, above it. Returns the folder's URL.
 */
async function buildMirror() {
  const files = shippedSources()
  const texts = await Promise.all(files.map((file) => readFile(ROOT + file, 'utf8')))
  const hash = createHash('sha1').update(version)
  files.forEach((file, index) => hash.update('\0').update(file).update('\0').update(texts[index]))
  const folder = `${CACHE}${MIRROR_PREFIX}${hash.digest('hex')}`
  if (!existsSync(folder)) {
    const partial = `${folder}.${process.pid}.${Math.random().toString(36).slice(2)}`
    await Promise.all(files.map(async (file, index) => {
      const code = await compiled(ROOT + file, texts[index])
      const target = `${partial}/${file.slice(0, -3)}.js`
      await mkdir(dirname(target), { recursive: true })
      await writeFile(target, code)
    }))
    await writeFile(`${partial}/package.json`, '{ "type": "module", "private": true }\n')
    // Another process may have made the same one meanwhile: then its copy stays and this one goes.
    await rename(partial, folder).catch(() => rm(partial, { recursive: true, force: true }))
    prune(folder)
  }
  return pathToFileURL(folder).href + '/'
}

/** Mirrors of earlier states of the sources, made more than MIRROR_KEPT_MS ago, removed. */
function prune(kept) {
  for (const name of readdirSync(CACHE)) {
    const path = CACHE + name
    if (!name.startsWith(MIRROR_PREFIX) || path === kept) continue
    try {
      if (Date.now() - statSync(path).mtimeMs > MIRROR_KEPT_MS) rmSync(path, { recursive: true, force: true })
    } catch {
      // Removed by another process meanwhile.
    }
  }
}

let mirror

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL
  let url
  if (parent !== undefined && parent.startsWith('file:') && parent.endsWith('.ts') && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const typescript = new URL(`${specifier.slice(0, -3)}.ts`, parent)
    if (!existsSync(new URL(specifier, parent)) && existsSync(typescript)) url = typescript.href
  }
  if (url === undefined) {
    const resolved = await nextResolve(specifier, context)
    if (shippedSource(resolved.url) === undefined) return resolved
    url = resolved.url
  }
  const source = shippedSource(url)
  if (source === undefined) return { url, shortCircuit: true }
  mirror ??= buildMirror()
  return { url: `${await mirror}${source.slice(0, -3)}.js`, format: 'module', shortCircuit: true }
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context)
  const path = fileURLToPath(url)
  return { format: 'module', source: await compiled(path, await readFile(path, 'utf8')), shortCircuit: true }
}
