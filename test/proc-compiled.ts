// The shipped files compiled to JavaScript, for the tests whose subject is a process of the service
// or the CLI: `node bin/mapper-service.js`, as `npm start` runs the build, with no loader in the
// process or its worker threads. Through test/loader every module of the child (and of each worker
// thread it starts) passes the loader's hooks; compiled once, a child starts in about half the
// time. The files are those tsconfig.build.json names, compiled as test/loader compiles them
// (esbuild to ES2022 modules, the options tsc's target gives), beside package.json.
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { transform, version } from 'esbuild'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** test/loader/hooks.mjs's options, less the inline source map (the build has none). */
const TS_OPTIONS = { loader: 'ts', format: 'esm', target: 'es2022', tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } } } as const

/** The files `npm run build` compiles (tsconfig.build.json's include, less its exclude), relative to the root, with their text. */
export function shippedSources(): Map<string, string> {
  const config = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[]; exclude: string[] }
  const isSource = (path: string): boolean => path.endsWith('.ts') && !path.endsWith('.d.ts')
  const files: string[] = []
  for (const entry of config.include) {
    if (entry === '*.ts') {
      for (const name of readdirSync(ROOT)) if (isSource(name) && statSync(join(ROOT, name)).isFile()) files.push(name)
    } else if (/^[\w-]+$/.test(entry)) {
      for (const name of readdirSync(join(ROOT, entry), { recursive: true, encoding: 'utf8' })) if (isSource(name)) files.push(`${entry}/${name}`)
    } else {
      throw new Error(`proc-compiled: tsconfig.build.json include ${entry} is neither a folder nor *.ts`)
    }
  }
  const kept = files.filter((file) => !config.exclude.includes(file.split('/')[0]!)).sort()
  return new Map(kept.map((file) => [file, readFileSync(join(ROOT, file), 'utf8')]))
}

/** Compile `sources` into `target` (x.ts → x.js) and copy package.json beside them. */
export async function compileInto(target: string, sources: ReadonlyMap<string, string> = shippedSources()): Promise<void> {
  await Promise.all(
    [...sources].map(async ([file, text]) => {
      const { code } = await transform(text, { ...TS_OPTIONS, sourcefile: join(ROOT, file) })
      const out = join(target, file.replace(/\.ts$/, '.js'))
      mkdirSync(dirname(out), { recursive: true })
      writeFileSync(out, code)
    })
  )
  cpSync(join(ROOT, 'package.json'), join(target, 'package.json'))
}

const CACHE = join(ROOT, 'node_modules', '.cache', 'mapper-service-compiled')
/** Trees of sources that have since changed are removed once this old. */
const STALE_MS = 3600_000

let compiled: Promise<string> | undefined

/**
 * The compiled tree of the shipped files as they are now, kept by content hash under
 * node_modules/.cache (test/loader keeps its compiled files there too): built by the first test
 * process to need it, the sources read once and hashed as compiled, so a change to any of them
 * gives a tree of its own. mappings/ and playground/ are links to this tree's own; packages resolve
 * from this tree's node_modules, which holds the cache. Resolves with the path of
 * bin/mapper-service.js in it.
 */
export function compiledEntry(): Promise<string> {
  compiled ??= (async () => {
    const sources = shippedSources()
    const hash = createHash('sha1').update(version).update('\0').update(readFileSync(join(ROOT, 'package.json')))
    for (const [file, text] of sources) hash.update('\0').update(file).update('\0').update(text)
    const key = hash.digest('hex')
    const tree = join(CACHE, key)
    if (!existsSync(join(tree, 'bin', 'mapper-service.js'))) {
      // Built aside and renamed: a concurrent test process sees the whole tree or none.
      const partial = `${tree}.${process.pid}.${Math.random().toString(36).slice(2)}`
      await compileInto(partial, sources)
      for (const folder of ['mappings', 'playground']) symlinkSync(join(ROOT, folder), join(partial, folder), 'dir')
      try {
        renameSync(partial, tree)
      } catch {
        rmSync(partial, { recursive: true, force: true })
      }
      for (const name of readdirSync(CACHE)) {
        const path = join(CACHE, name)
        if (name !== key && Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { recursive: true, force: true })
      }
    }
    return join(tree, 'bin', 'mapper-service.js')
  })()
  return compiled
}
