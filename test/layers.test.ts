// The direction of the service's layers (README "Architecture"): an import may go down, never up.
// From the bottom: the engine (engine/), which knows no HTTP and no service; the extensions it ships
// (extensions/); the service layer (runtime/, config/, errors.ts, schemas/: the served set,
// evaluation, workers, errors and their answers); the HTTP plugins (plugins/); the routes (routes/),
// which reach the engine only through the service layer; and the entry points (app.ts, server.ts,
// index.ts, bin/). Every static and dynamic import of every shipped TypeScript file is read.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const SHIPPED = ['engine', 'extensions', 'runtime', 'config', 'schemas', 'plugins', 'routes', 'bin']
const TOP_FILES = ['app.ts', 'server.ts', 'index.ts', 'errors.ts']

function tsFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return tsFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** The project files a file imports (relative specifiers, resolved; `.js` named as the `.ts` it compiles from). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8')
  const found: string[] = []
  for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    found.push(normalize(join(dirname(file), match[1]!)).replace(/\.js$/, '.ts'))
  }
  return found
}

/** The layer of a project file, by its folder (or name, for the files at the root). */
function layer(file: string): string {
  const [first] = file.split('/')
  if (file === 'errors.ts' || first === 'runtime' || first === 'config' || first === 'schemas') return 'service'
  if (first === 'app.ts' || first === 'server.ts' || first === 'index.ts' || first === 'bin') return 'entry'
  return first!
}

/** What each layer may import besides itself. */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  engine: [],
  extensions: ['engine'],
  service: ['engine', 'extensions'],
  plugins: ['service', 'engine', 'extensions'],
  // Routes reach the engine through the service layer.
  routes: ['plugins', 'service', 'extensions'],
  entry: ['routes', 'plugins', 'service', 'engine', 'extensions'],
}

/**
 * Arrows that still go the wrong way, each with the reason it is left: the list may only shrink.
 * The request plugin redacts URLs and loads its optional packages with the service's helpers; the
 * stock extensions refuse their settings with the service's ConfigError.
 */
const KNOWN = new Set([
  'extensions/stock.ts -> config/errors.ts',
  'extensions/request/call-options.ts -> config/optional.ts',
  'extensions/request/cheerio.ts -> config/optional.ts',
  'extensions/request/parse-thread.ts -> config/optional.ts',
  'extensions/request/parse-worker.ts -> config/optional.ts',
  'extensions/request/deadline.ts -> runtime/redact.ts',
  'extensions/request/exchange.ts -> runtime/redact.ts',
  'extensions/request/index.ts -> runtime/redact.ts',
  'extensions/request/redirect.ts -> runtime/redact.ts',
  'extensions/request/telemetry.ts -> runtime/redact.ts',
  'extensions/request/url.ts -> runtime/redact.ts',
])

const files = [...SHIPPED.flatMap(tsFiles), ...TOP_FILES]

t.test('every import goes down the layers, never up', async (t) => {
  const wrong: string[] = []
  let arrows = 0
  for (const file of files) {
    const from = layer(file)
    for (const target of importsOf(file)) {
      const to = layer(relative('.', target))
      if (to === from || to === 'test' || to === 'node_modules') continue
      arrows++
      const arrow = `${file} -> ${target}`
      if (!MAY_IMPORT[from]!.includes(to) && !KNOWN.has(arrow)) wrong.push(`${arrow} (${from} -> ${to})`)
    }
  }
  t.ok(arrows > 100, `${arrows} arrows between layers read`)
  t.same(wrong, [], 'no arrow from a lower layer to a higher one')
})

t.test('the known exceptions still exist (a fixed one leaves the list)', async (t) => {
  const present = new Set(files.flatMap((file) => importsOf(file).map((target) => `${file} -> ${target}`)))
  for (const arrow of KNOWN) t.ok(present.has(arrow), arrow)
})

t.test('the rule sees a wrong arrow', async (t) => {
  // The classifier and the table, on arrows that must be refused.
  for (const [from, to] of [['engine/mapper.ts', 'runtime/engine.ts'], ['runtime/ndjson.ts', 'plugins/body.ts'], ['routes/map.ts', 'engine/index.ts'], ['plugins/body.ts', 'routes/map.ts']] as const) {
    t.notOk(MAY_IMPORT[layer(from)]!.includes(layer(to)), `${from} -> ${to} is refused`)
  }
})
