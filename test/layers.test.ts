// The direction of the service's layers (README "Architecture", CONTRIBUTING "Layout"): an import
// may go down, never up. From the bottom: the engine (engine/), which knows no HTTP and no service;
// the helpers everything shares (support/: URL redaction, optional packages, ConfigError); the
// extensions the engine ships (extensions/); reading mapping and extension sources (sources/);
// service-wide options (config/); the service layer (service/, workers/, observability/: the served
// set, evaluation, errors and their answers, the thread pools, metrics and tracing); the HTTP
// plugins and what they share (http/plugins/, http/*.ts, http/schemas/); the routes (http/routes/),
// which reach the engine only through the service layer; and the entry points (app.ts, server.ts,
// index.ts, bin/). Every static and dynamic import of every shipped TypeScript file is read; that no
// files import each other in a circle is test/package-deps.test.ts's.
import { readFileSync } from 'node:fs'
import { dirname, join, normalize, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** The files `npm run build` compiles (tsconfig.build.json's), relative to the root. */
function shippedFiles(): string[] {
  const config = ts.readConfigFile(join(root, 'tsconfig.build.json'), ts.sys.readFile)
  return ts.parseJsonConfigFileContent(config.config, ts.sys, root).fileNames.map((file) => relative(root, file).split(sep).join('/'))
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
  const [first, second] = file.split('/')
  if (first === 'service' || first === 'workers' || first === 'observability') return 'service'
  if (first === 'http') return second === 'routes' ? 'routes' : 'http'
  if (first === 'app.ts' || first === 'server.ts' || first === 'index.ts' || first === 'bin') return 'entry'
  return first!
}

/** What each layer may import besides itself. */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  engine: [],
  support: [],
  extensions: ['engine', 'support'],
  sources: ['engine', 'support'],
  config: ['engine', 'support', 'sources'],
  service: ['engine', 'support', 'extensions', 'sources', 'config'],
  http: ['service', 'engine', 'support', 'extensions', 'sources', 'config'],
  // Routes reach the engine through the service layer.
  routes: ['http', 'service', 'support', 'extensions', 'config'],
  entry: ['routes', 'http', 'service', 'engine', 'support', 'extensions', 'sources', 'config'],
}

const files = shippedFiles()

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
      if (!MAY_IMPORT[from]!.includes(to)) wrong.push(`${arrow} (${from} -> ${to})`)
    }
  }
  t.ok(arrows > 100, `${arrows} arrows between layers read`)
  t.same(wrong, [], 'no arrow from a lower layer to a higher one')
})

t.test('the rule sees a wrong arrow', async (t) => {
  // The classifier and the table, on arrows that must be refused.
  for (const [from, to] of [['engine/mapper.ts', 'service/mapping-service.ts'], ['service/ndjson.ts', 'http/plugins/body.ts'], ['http/routes/map.ts', 'engine/index.ts'], ['http/plugins/body.ts', 'http/routes/map.ts'], ['extensions/stock.ts', 'config/resolve.ts'], ['support/redact.ts', 'engine/index.ts'], ['workers/isolation.ts', 'http/plugins/errors.ts'], ['config/resolve.ts', 'service/errors.ts']] as const) {
    t.notOk(MAY_IMPORT[layer(from)]!.includes(layer(to)), `${from} -> ${to} is refused`)
  }
})

t.test('every shipped file belongs to a layer, and the layers form one order', async (t) => {
  t.same(files.filter((file) => MAY_IMPORT[layer(file)] === undefined), [], 'no shipped file outside the table (a new folder is placed in it)')
  // Remove layers that import no remaining layer until none is left: a cycle would stop it.
  const left = new Map(Object.entries(MAY_IMPORT).map(([name, below]) => [name, new Set(below)]))
  while (left.size > 0) {
    const bottom = [...left].find(([, below]) => [...below].every((name) => !left.has(name)))
    if (bottom === undefined) break
    left.delete(bottom[0])
  }
  t.same([...left.keys()], [], 'the table has no circle')
})
