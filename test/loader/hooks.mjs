// Module hooks for the tests (register.mjs says why): `.ts` files are compiled by esbuild to ES2022
// modules with an inline source map, and a relative `./x.js` import made from a `.ts` file resolves
// to `./x.ts` when only that exists, as TypeScript's NodeNext resolution has it.
//
// The shipped sources (tsconfig.build.json's `include`) are not loaded from their `.ts` files but
// from a compiled copy of the whole set, laid out as the sources are (the mirror,
// compiled-tree.mjs): a module's `import.meta.url` then ends in `.js`, as in dist/, so the worker
// threads the service starts (its isolation pool, the loading thread, the parse pool) start from
// plain JavaScript files and need no hooks (register.mjs starts them without). With hooks, each
// worker thread had a hooks thread of its own (Node 20 and 22), through which every module it
// loaded passed: about a second of CPU per worker, and the suite starts about fifty.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync } from 'node:fs'
import { readFile, rename, writeFile } from 'node:fs/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { compiledTree, ESBUILD_VERSION, isShipped, ROOT, transformOptions } from './compiled-tree.mjs'

// Compiled files are kept by content hash: every test process would otherwise compile the same few
// hundred files again. esbuild itself is loaded only on a miss: every test process and child
// process starts a hooks thread, and loading esbuild there cost about 80 ms of CPU each, with every
// file it was asked for already compiled.
const CACHE = `${ROOT}node_modules/.cache/mapper-test-loader/`
mkdirSync(CACHE, { recursive: true })
const TS_OPTIONS = transformOptions(true)

/** The JavaScript of the TypeScript file `path` whose text is `text`, from the cache or compiled now. */
async function compiled(path, text) {
  const key = createHash('sha1').update(ESBUILD_VERSION).update('\0').update(path).update('\0').update(text).digest('hex')
  const cached = `${CACHE}${key}.js`
  const hit = await readFile(cached, 'utf8').catch(() => undefined)
  if (hit !== undefined) return hit
  const { transform } = await import('esbuild')
  const { code } = await transform(text, { ...TS_OPTIONS, sourcefile: path })
  // Written aside and renamed: a concurrent reader sees the whole file or none.
  const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`
  await writeFile(partial, code).then(() => rename(partial, cached)).catch(() => {})
  return code
}

const ROOT_URL = pathToFileURL(ROOT).href

/** The path of `url` under the root (as a URL's path) when it is a shipped source file, else undefined. */
function shippedSource(url) {
  if (!url.startsWith(ROOT_URL)) return undefined
  const relative = url.slice(ROOT_URL.length)
  return isShipped(relative) ? relative : undefined
}

/**
 * The mirror's URL: the sources compiled as this loader compiles them (through its cache), with a
 * package.json that makes its `.js` files ES modules and names no package (support/package.ts
 * walks past it to the project's). Made once per state of the sources.
 */
let mirror
const mirrorUrl = () =>
  (mirror ??= compiledTree('mapper-test-mirror', {
    compile: compiled,
    finish: (folder) => writeFile(`${folder}/package.json`, '{ "type": "module", "private": true }\n'),
  }).then((tree) => `${pathToFileURL(tree).href}/`))

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL
  let url
  if (parent !== undefined && parent.startsWith('file:') && parent.endsWith('.ts') && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const typescript = new URL(`${specifier.slice(0, -3)}.ts`, parent)
    if (!existsSync(new URL(specifier, parent)) && existsSync(typescript)) url = typescript.href
  }
  const resolved = url === undefined ? await nextResolve(specifier, context) : { url, shortCircuit: true }
  const source = shippedSource(resolved.url)
  if (source === undefined) return resolved
  return { url: `${await mirrorUrl()}${source.slice(0, -3)}.js`, format: 'module', shortCircuit: true }
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context)
  const path = fileURLToPath(url)
  return { format: 'module', source: await compiled(path, await readFile(path, 'utf8')), shortCircuit: true }
}
