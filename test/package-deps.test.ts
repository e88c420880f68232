// What an install brings: the shipped files (tsconfig.build.json's) import at run time only the
// packages of `dependencies`; the optional packages (`peerDependencies` marked optional: the
// OpenTelemetry SDK, @fastify/otel, tsx, pino-pretty, ioredis, cheerio) are loaded only by
// support/optional.ts, on demand (import() or require() inside a function, never as the module
// loads), which turns their absence into one line naming the package; the engine imports nothing of
// the service; no shipped files import each other in a circle. Then a real light install: the
// shipped files, compiled as the build compiles them, beside a node_modules without the optional
// packages, started through the entry point as `npm start` starts it (no test loader).
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { builtinModules, createRequire } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import t, { type Test } from 'tap'
import type TS from 'typescript'
import { mappingEntries } from '../sources/mappings.js'
import type { MappingDocument } from '../engine/index.js'
import { createRequest } from '../extensions/request/index.js'
import { stockExtensions } from '../extensions/stock.js'
import { requestPluginUsers } from '../service/cheerio-warning.js'
import { buildServer } from '../server.js'
import { capturedLog } from './log-support.js'
import { upstream } from './request-support.js'
import { compiledEntry } from './proc-compiled.js'
import { ROOT, exchange, freePort, spawnEntryPoint, tempTree, waitForHealth, type Exit } from './startup-support.js'

t.setTimeout(300000)

// Required, not imported: an import of a CommonJS module first has its 9 MB scanned for the names
// it exports (Node's cjs-module-lexer), most of a second of CPU that require() does not spend.
const ts = createRequire(import.meta.url)('typescript') as typeof TS

interface Manifest {
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
  peerDependencies: Record<string, string>
  peerDependenciesMeta: Record<string, { optional?: boolean }>
}

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest
const OPTIONAL = Object.keys(manifest.peerDependencies)
/** The one module that may import an optional package, and must handle its absence. */
const OPTIONAL_LOADER = 'support/optional.ts'

/** The files `npm run build` compiles, as paths relative to the root. */
function shippedFiles(): string[] {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.build.json'), ts.sys.readFile)
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT)
  return parsed.fileNames.map((file) => relative(ROOT, file).split(sep).join('/')).sort()
}

/** shippedFiles(), read once for the file's tests. */
const SHIPPED = shippedFiles()

interface Specifier {
  readonly text: string
  /** Loaded by an import() or require() call inside a function: when that runs, not as the module loads. */
  readonly onDemand: boolean
  /** Loaded by an import or export declaration: before the module's own first line runs. */
  readonly declared?: true
}

interface Imports {
  /** The module specifiers the text loads at run time: type-only imports are erased and left out. */
  readonly runtime: Specifier[]
  /** Every module specifier the text names, type-only imports and `import('…')` types included. */
  readonly named: string[]
}

const isCreateRequire = (node: TS.Node): boolean => ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'createRequire'

/**
 * What a source text imports, from one parse: both tests below read it (a second pass over the
 * 175 shipped files, ts.preProcessFile, cost half a second of CPU of its own).
 */
function importsIn(file: string, text: string): Imports {
  // Neither parent links nor JSDoc (a comment never loads a module): a third less of the parse,
  // which is most of this file's own CPU over the 175 shipped files.
  const source = ts.createSourceFile(file, text, { languageVersion: ts.ScriptTarget.ES2022, jsDocParsingMode: ts.JSDocParsingMode.ParseNone }, false)
  // `require`, and whatever a createRequire(…) is assigned to.
  const requires = new Set(['require'])
  const bindings = (node: TS.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined && isCreateRequire(node.initializer)) requires.add(node.name.text)
    ts.forEachChild(node, bindings)
  }
  bindings(source)
  const runtime: Specifier[] = []
  const named: string[] = []
  const visit = (node: TS.Node, inFunction: boolean): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined && clause.namedBindings !== undefined && ts.isNamedImports(clause.namedBindings) && clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((element) => element.isTypeOnly)))
      if (!typeOnly) runtime.push({ text: node.moduleSpecifier.text, onDemand: false, declared: true })
      named.push(node.moduleSpecifier.text)
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.isTypeOnly) runtime.push({ text: node.moduleSpecifier.text, onDemand: false, declared: true })
      named.push(node.moduleSpecifier.text)
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      named.push(node.moduleReference.expression.text)
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      named.push(node.argument.literal.text)
    } else if (ts.isCallExpression(node) && node.arguments.length >= 1) {
      const [first] = node.arguments
      const callee = node.expression
      // import('x'), require('x') (under any name createRequire gave it), createRequire(…)('x')
      const loads = callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && requires.has(callee.text)) || isCreateRequire(callee)
      if (loads) {
        const literal = first !== undefined && ts.isStringLiteralLike(first) ? first.text : undefined
        runtime.push({ text: literal ?? '(computed)', onDemand: inFunction })
        if (literal !== undefined) named.push(literal)
      }
    }
    ts.forEachChild(node, (child) => visit(child, inFunction || ts.isFunctionLike(node)))
  }
  visit(source, false)
  return { runtime, named }
}

/** The module specifiers a source text loads at run time: type-only imports are erased and left out. */
const specifiersIn = (file: string, text: string): Specifier[] => importsIn(file, text).runtime

/** importsIn() of each shipped file, parsed once, when a test first asks. */
let shippedImports: Map<string, Imports> | undefined
const importsOf = (file: string): Imports => {
  shippedImports ??= new Map(SHIPPED.map((shipped) => [shipped, importsIn(shipped, readFileSync(join(ROOT, shipped), 'utf8'))]))
  return shippedImports.get(file)!
}

const runtimeSpecifiers = (file: string): Specifier[] => importsOf(file).runtime

const packageOf = (specifier: string): string => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')
const isBuiltin = (specifier: string): boolean => specifier.startsWith('node:') || builtinModules.includes(specifier)

// One light install for the file (lightInstall, below), made before any test is queued: the last
// test installs the SDK into it.
const light = await lightInstall(t, OPTIONAL)

t.test('the rule tells a load on demand from one as the module loads', async (t) => {
  const loads = (text: string): string[] => specifiersIn('sample.ts', text).map((found) => `${found.text} ${found.onDemand ? 'on demand' : 'as the module loads'}`)
  t.same(loads("import a from 'a'\nimport type { B } from 'b'\nimport { type C } from 'c'\nexport { d } from 'd'\nexport type { E } from 'e'"), ['a as the module loads', 'd as the module loads'], 'static imports and re-exports; type-only ones erased')
  t.same(
    loads("const load = createRequire(import.meta.url)\nconst x = load('x')\nconst y = await import('y')\nconst z = createRequire(import.meta.url)('z')"),
    ['x as the module loads', 'y as the module loads', 'z as the module loads'],
    'import(), require() under another name and createRequire(…)(…) at the top level run as the module loads'
  )
  t.same(
    loads("const require = createRequire(import.meta.url)\nexport const x = () => require('x')\nexport async function y() { return import('y') }\nclass Z { load() { return require(name) } }"),
    ['x on demand', 'y on demand', '(computed) on demand'],
    'inside a function they run on demand; a computed specifier is reported as one'
  )
})

t.test('the shipped files load only dependencies; optional packages only through support/optional.ts', async (t) => {
  const files = SHIPPED
  t.ok(files.includes(OPTIONAL_LOADER) && files.includes('bin/mapper-service.ts') && files.includes('engine/index.ts'), `${files.length} shipped files`)
  const problems: string[] = []
  const used = new Set<string>()
  for (const file of files) {
    for (const { text, onDemand } of runtimeSpecifiers(file)) {
      if (text === '(computed)') {
        // A computed one is a module path the deployment names (MAPPINGS, EXTENSIONS).
        if (file !== 'sources/files.ts') problems.push(`${file}: loads a computed specifier`)
        continue
      }
      if (text.startsWith('.')) {
        const target = relative(ROOT, resolve(ROOT, dirname(file), text)).split(sep).join('/')
        if (file.startsWith('engine/') && !target.startsWith('engine/')) problems.push(`${file}: the engine imports ${target} of the service`)
        continue
      }
      if (isBuiltin(text)) continue
      const name = packageOf(text)
      used.add(name)
      if (name in manifest.dependencies) continue
      if (OPTIONAL.includes(name) && onDemand && file === OPTIONAL_LOADER) continue
      problems.push(
        `${file}: ${onDemand ? 'loads' : 'imports'} ${text}, which is not in dependencies${OPTIONAL.includes(name) ? ` (${name} is optional: load it on demand through ${OPTIONAL_LOADER})` : ''}`
      )
    }
  }
  t.same(problems, [], 'no shipped file loads what an install may lack')
  t.same(Object.keys(manifest.dependencies).filter((name) => !used.has(name)), [], 'every dependency is loaded by a shipped file')
  t.same(OPTIONAL.filter((name) => !used.has(name)), [], 'every optional package is loaded (by support/optional.ts)')
  for (const name of OPTIONAL) {
    t.equal(manifest.peerDependenciesMeta[name]?.optional, true, `${name} is an optional peer`)
    t.equal(manifest.devDependencies[name], manifest.peerDependencies[name], `${name} is a devDependency too, at the same range (the tests use it)`)
    t.notOk(name in manifest.dependencies, `${name} is not a dependency`)
  }
})

/**
 * The shipped files a shipped file imports or re-exports from, type-only imports included: they
 * stay in the published declaration files, where a circle is as much a circle (issue 20).
 */
function localImports(file: string, shipped: ReadonlySet<string>): string[] {
  return importsOf(file).named.flatMap((specifier) => localFile(file, specifier, shipped) ?? [])
}

/** The shipped file a relative specifier in `file` names, if any. */
function localFile(file: string, specifier: string, shipped: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined
  const target = relative(ROOT, resolve(ROOT, dirname(file), specifier)).split(sep).join('/').replace(/\.js$/, '.ts')
  return [target, `${target}.ts`, `${target}/index.ts`].find((path) => shipped.has(path))
}

/** Every circle of imports in `graph`, each as the path that closes it (`a → b → a`). */
function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const circles: string[] = []
  const done = new Set<string>()
  const path: string[] = []
  const visit = (file: string): void => {
    const open = path.indexOf(file)
    if (open >= 0) {
      circles.push([...path.slice(open), file].join(' → '))
      return
    }
    if (done.has(file)) return
    path.push(file)
    for (const target of graph.get(file) ?? []) visit(target)
    path.pop()
    done.add(file)
  }
  for (const file of [...graph.keys()].sort()) visit(file)
  return circles
}

t.test('no circle of imports among the shipped files, type-only imports included', async (t) => {
  t.same(
    importCircles(new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts', 'd.ts']], ['c.ts', ['a.ts']], ['d.ts', []]])),
    ['a.ts → b.ts → c.ts → a.ts'],
    'the check finds a circle through three files'
  )
  const files = SHIPPED
  const shipped = new Set(files)
  const graph = new Map(files.map((file) => [file, localImports(file, shipped)]))
  t.ok(graph.get('engine/context.ts')!.includes('engine/types.ts'), 'type-only imports are edges (engine/context.ts imports its types with `import type`)')
  t.same(importCircles(graph), [], `${files.length} files, ${[...graph.values()].reduce((sum, targets) => sum + targets.length, 0)} imports`)
})

/** The modules a shipped file loads before its own first line runs (its import and export declarations, type-only ones left out), and theirs. */
function loadedFirst(file: string, shipped: ReadonlySet<string>, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen
  seen.add(file)
  for (const { text, declared } of importsOf(file).runtime) {
    if (declared !== true) continue
    const local = localFile(file, text, shipped)
    if (local === undefined) seen.add(text)
    else loadedFirst(local, shipped, seen)
  }
  return seen
}

t.test("a helper thread lowers its priority before it loads the service's modules", async (t) => {
  // Loading is work: the engine takes a thread 80 to 170 ms of CPU, and a parse thread is started
  // anew after each parse its deadline stops. Each pool starts its threads on an entry that imports
  // only the scheduler (engine/slices.ts) before it lowers the priority and imports the rest.
  const shipped = new Set(SHIPPED)
  const pools = { 'workers/isolation.ts': 'workers/isolation-entry.ts', 'extensions/request/parse-thread.ts': 'extensions/request/parse-entry.ts', 'workers/load.ts': 'workers/load-entry.ts' }
  for (const [pool, entry] of Object.entries(pools)) {
    const name = entry.split('/').at(-1)!.replace(/\.ts$/, '')
    t.ok(readFileSync(join(ROOT, pool), 'utf8').includes(`'./${name}.js', import.meta.url)`), `${pool} starts its threads on ${entry}`)
    const loaded = [...loadedFirst(entry, shipped)].filter((module) => module !== entry)
    t.same(loaded.filter((module) => module !== 'engine/slices.ts' && !isBuiltin(module)), [], `${entry} loads only engine/slices.ts and Node's own modules before it lowers the priority (${loaded.join(', ')})`)
    t.match(readFileSync(join(ROOT, entry), 'utf8'), /lowerHelperPriority\(\)[\s\S]*await import\(/, `${entry} lowers the priority, then imports the worker side`)
  }
})

/**
 * The shipped files compiled into a temp dir (bin/mapper-service.js and the rest, as `npm run build`
 * gives them, with mappings/, playground/ and package.json) beside a node_modules of links to this
 * one's packages, less `absent`: what `npm install mapper-service` gives when the optional packages
 * are not installed. (Node resolves a linked package's own imports from where it really is, as an
 * install would.) One for the file; `installAlso` adds packages to it later. The compiled files are
 * copied from test/proc-compiled.ts's tree of the sources as they are now (built once for the
 * suite), which cannot be used in place: it lies under this node_modules, optional packages and all.
 */
async function lightInstall(t: Test, absent: readonly string[]): Promise<{ root: string; entry: string; installAlso(names: readonly string[]): void }> {
  const tree = tempTree(t)
  const compiled = dirname(dirname(await compiledEntry()))
  // Its mappings/ and playground/ are links to this checkout's: copied instead, as they are shipped.
  cpSync(compiled, tree.root, { recursive: true, filter: (path) => !['mappings', 'playground'].some((folder) => path === join(compiled, folder)) })
  for (const folder of ['mappings', 'playground']) cpSync(join(ROOT, folder), tree.path(folder), { recursive: true })
  const modules = join(ROOT, 'node_modules')
  const link = (name: string): void => {
    mkdirSync(dirname(tree.path(`node_modules/${name}`)), { recursive: true })
    symlinkSync(join(modules, name), tree.path(`node_modules/${name}`), 'dir')
  }
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith('.')) continue
    const names = entry.startsWith('@') ? readdirSync(join(modules, entry)).map((scoped) => `${entry}/${scoped}`) : [entry]
    for (const name of names) if (!absent.includes(name)) link(name)
  }
  return { root: tree.root, entry: tree.path('bin/mapper-service.js'), installAlso: (names) => names.forEach(link) }
}

const SILENT = JSON.stringify({ logging: { level: 'silent' }, host: '127.0.0.1' })

/** Start the copy's entry point, which must fail; resolves with its exit. */
async function startFailing(t: Test, entry: string, env: Record<string, string>): Promise<Exit> {
  return spawnEntryPoint(t, { OPTIONS: SILENT, PORT: String(await freePort()), ...env }, 60000, entry).exited
}

/** The exit must be a one-line failure. */
async function failsWith(t: Test, exiting: Promise<Exit>, line: string): Promise<void> {
  const exit = await exiting
  t.equal(exit.code, 1, 'exits 1')
  t.equal(exit.stderr, `mapper-service: ${line}\n`, 'one line on stderr naming the package to install')
  t.equal(exit.stdout, '', 'nothing on stdout')
}

// The light install's processes that must fail start as the file's tests are queued: they start up
// while the tests before parse the shipped files, and alongside the two that serve below; each is
// checked in a test of its own.
const extensions = join(light.root, 'extensions.ts')
writeFileSync(extensions, 'export default {}\n')
const failing = {
  traces: startFailing(t, light.entry, { OTEL_TRACES_EXPORTER: 'console' }),
  endpoint: startFailing(t, light.entry, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' }),
  pretty: startFailing(t, light.entry, { OPTIONS: JSON.stringify({ logging: { format: 'pretty' }, host: '127.0.0.1' }) }),
  redis: startFailing(t, light.entry, { OPTIONS: JSON.stringify({ logging: { level: 'silent' }, host: '127.0.0.1', rateLimit: { redis: 'redis://:secret@127.0.0.1:1/0' } }) }),
  typescript: startFailing(t, light.entry, { EXTENSIONS: extensions }),
}
// Awaited by the tests below, where a failure is reported; this only keeps them from being unhandled before then.
for (const exiting of Object.values(failing)) exiting.catch(() => undefined)

// Its subtests side by side: the two that serve start a process each, seconds on a loaded machine,
// which waited for each other before.
const lightTests = t.test('a light install: serves without the optional packages, and a feature that needs one says which', { jobs: 7 }, async (t) => {
  const { root, entry } = light
  for (const name of OPTIONAL) t.throws(() => readdirSync(join(root, 'node_modules', name)), `${name} is absent`)

  t.test('no tracing, no TypeScript module, no cheerio: it serves', async (t) => {
    const port = await freePort()
    const options = JSON.stringify({ logging: { level: 'warn' }, host: '127.0.0.1' })
    const service = spawnEntryPoint(t, { OPTIONS: options, PORT: String(port) }, 60000, entry)
    await waitForHealth(service, port)
    t.equal((await exchange(port, 'POST', '/map', { mapping: 'greet', input: { message: 'hi' } })).status, 200, 'POST /map answers')
    service.child.kill('SIGTERM')
    const exit = await service.exited
    t.equal(exit.code, 0, 'stops on SIGTERM')
    t.notMatch(exit.stdout, /cheerio/, 'no mapping of the bundled ones uses the request plugin: no warning about cheerio')
  })

  t.test('no cheerio: JSON through the request plugin as ever; an HTML or XML body fails its evaluation naming cheerio; one warning at start-up', async (t) => {
    const up = await upstream(t, (req, res) => {
      const bodies: Record<string, [string, string]> = {
        '/data.json': ['application/json', '{"title":"Plain JSON"}'],
        '/page.html': ['text/html; charset=utf-8', '<html><head><title>A page</title></head><body></body></html>'],
        '/feed.xml': ['application/xml', '<feed><title>A feed</title></feed>'],
        '/note.txt': ['text/plain', 'plain text'],
      }
      const found = Object.hasOwn(bodies, req.url ?? '') ? bodies[req.url!] : undefined
      res.writeHead(found === undefined ? 404 : 200, { 'content-type': found?.[0] ?? 'text/plain' })
      res.end(found?.[1] ?? 'not found')
    })
    // Twelve mappings use the plugin (the warning names ten); `still` only has a constant with a
    // `request` member, which is no use of it.
    const fetching = (id: string): MappingDocument => ({ $id: id, mapping: { '/got': { request: { url: { input: '/url' } } } } }) as MappingDocument
    const documents: MappingDocument[] = [
      fetching('fetch'),
      ...Array.from({ length: 10 }, (_, i) => fetching(`page${String(i + 1).padStart(2, '0')}`)),
      { $id: 'scrape', mapping: { '/title': { request: { url: { input: '/url' }, scraper: { title: { selector: 'title' } }, pointer: '/data/title' } } } } as MappingDocument,
      { $id: 'still', mapping: { '/note': { constant: { request: 'a constant, not the plugin' } } } } as MappingDocument,
    ]
    const mappings = tempTree(t, Object.fromEntries(documents.map((document) => [`${document.$id}.json`, JSON.stringify(document)])))
    const port = await freePort()
    const options = JSON.stringify({ logging: { level: 'warn' }, host: '127.0.0.1', map: { explicit: true } })
    const env = { OPTIONS: options, PORT: String(port), MAPPINGS: mappings.root, REQUEST_ALLOW_HOSTS: '127.0.0.1' }
    const service = spawnEntryPoint(t, env, 60000, entry)
    await waitForHealth(service, port)
    const map = (mapping: string | object, path: string) => exchange(port, 'POST', '/map', { mapping, input: { url: `${up.origin}${path}` } })

    const json = await map('fetch', '/data.json')
    t.equal(json.status, 200, 'a JSON body: 200')
    t.same(JSON.parse(json.body), { got: { status: 200, 'content-type': 'application/json', json: { title: 'Plain JSON' } }, valid: true, errors: [] })
    const text = await map('fetch', '/note.txt')
    t.same(JSON.parse(text.body), { got: { status: 200, 'content-type': 'text/plain', text: 'plain text' }, valid: true, errors: [] }, 'a text body: as ever')

    const failed: Array<{ what: string; requestId: string; message: string }> = []
    for (const [what, mapping, path, message] of [
      ['an HTML body', 'fetch', '/page.html', `Parsing the HTML response of ${up.origin}/page.html`],
      ['an XML body', 'fetch', '/feed.xml', `Parsing the XML response of ${up.origin}/feed.xml`],
      ['a scraper', 'scrape', '/page.html', 'The request option scraper'],
      ['an HTML body in an explicit document (a worker thread parses it in place)', { mapping: { '/got': { request: { url: { input: '/url' } } } } }, '/page.html', `Parsing the HTML response of ${up.origin}/page.html`],
    ] as const) {
      const hits = up.hits.length
      const answer = await map(mapping, path)
      t.equal(answer.status, 500, `${what}: 500`)
      const body = JSON.parse(answer.body) as { code: string; message: string; requestId: string }
      t.same([body.code, body.message], ['InternalError', 'An unexpected error occurred'], `${what}: the detail hidden from the caller, as every plugin failure's`)
      t.notMatch(answer.body, /cheerio|at .*\.ts:\d+/, `${what}: no package name, no stack trace in the answer`)
      if (mapping === 'scrape') t.equal(up.hits.length, hits, 'the scraper is checked before anything is sent')
      failed.push({ what, requestId: body.requestId, message: `${message} needs the package cheerio, which is not installed: npm install cheerio` })
    }

    t.equal((await map('fetch', '/data.json')).status, 200, 'and the service goes on answering')
    t.equal(service.child.exitCode, null, 'the process is still up')
    service.child.kill('SIGTERM')
    const exit = await service.exited
    t.equal(exit.code, 0, 'stops on SIGTERM')

    const lines = exit.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { level: number; msg: string; requestId?: string; err?: { type: string; message: string } })
    const warnings = lines.filter((line) => line.level === 40)
    t.same(
      warnings.map((line) => line.msg),
      [
        'mappings "fetch", "page01", "page02", "page03", "page04", "page05", "page06", "page07", "page08", "page09" and 2 more use the request plugin: ' +
          'the HTML and XML responses it receives need the package cheerio, which is not installed: npm install cheerio ' +
          '(until then each fails its evaluation; JSON and text responses are read without it)',
      ],
      'one warning at start-up, naming the mappings that use the plugin and the fix'
    )
    for (const { what, requestId, message } of failed) {
      const line = lines.find((entry) => entry.requestId === requestId && entry.level === 50)
      t.equal(line?.err?.message, message, `${what}: the error logged names cheerio and the fix`)
    }
    t.same(
      failed.slice(0, 3).map(({ requestId }) => lines.find((entry) => entry.requestId === requestId)?.err?.type),
      ['MissingPackageError', 'MissingPackageError', 'MissingPackageError'],
      'made in a parse thread (HTML, XML) or on the evaluation\'s own (the scraper), the error is MissingPackageError'
    )
  })

  t.test('OTEL_TRACES_EXPORTER set, no SDK', (t) =>
    failsWith(t, failing.traces, 'Tracing (configured by the OTEL_* environment) needs the package @opentelemetry/sdk-node, which is not installed: npm install @opentelemetry/sdk-node'))

  t.test('OTEL_EXPORTER_OTLP_ENDPOINT set, no SDK', (t) =>
    failsWith(t, failing.endpoint, 'Tracing (configured by the OTEL_* environment) needs the package @opentelemetry/sdk-node, which is not installed: npm install @opentelemetry/sdk-node'))

  t.test('logging.format pretty, no pino-pretty', (t) =>
    failsWith(t, failing.pretty, 'options.logging.format "pretty" needs the package pino-pretty, which is not installed: npm install pino-pretty'))

  t.test('rateLimit.redis, no ioredis', (t) => failsWith(t, failing.redis, 'options.rateLimit.redis needs the package ioredis, which is not installed: npm install ioredis'))

  t.test('a TypeScript EXTENSIONS module, no tsx', (t) =>
    failsWith(t, failing.typescript, `EXTENSIONS: ${extensions}, a TypeScript module, needs the package tsx, which is not installed: npm install tsx`))
})

t.test('installed, an optional package is loaded when its feature is configured', async (t) => {
  const app = await buildServer({ options: { logging: { format: 'pretty', level: 'silent' } } })
  t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200, 'logging.format pretty with pino-pretty installed')
  await app.close()
})

t.test('cheerio installed: no warning, and the HTML body parses', async (t) => {
  const up = await upstream(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<title>A page</title>')
  })
  const log = capturedLog()
  const mappings = [{ $id: 'page', mapping: { '/title': { request: { url: { input: '/url' }, pointer: '/html' } } } } as MappingDocument]
  const app = await buildServer({ mappings, extensions: stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' }), logger: log.logger })
  t.teardown(() => app.close())
  const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'page', input: { url: `${up.origin}/` } } })
  t.same(response.json(), { title: '<title>A page</title>', valid: true, errors: [] })
  t.notMatch(log.text(), /cheerio/, 'no warning about cheerio')
})

t.test('the mappings the start-up warning names: those that name a request plugin, under any name, in a descriptor', async (t) => {
  const entries = mappingEntries([
    { $id: 'direct', mapping: { '/a': { request: { origin: 'https://example.test' } } } },
    { $id: 'nested', mapping: { '/list': { source: '/items', each: { '/b': { source: '/id', fetch: { origin: 'https://example.test' } } } } } },
    { $id: 'variant', mapping: { '/c': ['/missing', { request: { origin: 'https://example.test' } }] } },
    { $id: 'constant', mapping: { '/d': { constant: { request: { origin: 'https://example.test' } } } } },
    { $id: 'example', mapping: { '/e': '/request' }, examples: [{ input: { request: 1 }, output: { e: 1 } }] },
    { $id: 'other', mapping: { '/f': { source: '/x', other: {} } } },
  ] as MappingDocument[])
  const other = async (): Promise<unknown> => null
  const surface = { plugins: { request: createRequest(), fetch: createRequest(), other } }
  t.same(requestPluginUsers(entries, surface), { plugins: ['request', 'fetch'], mappings: ['direct', 'nested', 'variant'] })
  t.same(requestPluginUsers(entries, { plugins: { request: other } }), { plugins: [], mappings: [] }, 'a plugin named request that createRequest did not build is none')
})

// The light install of the tests above, now with every optional package but @fastify/otel: started
// as soon as every process of those tests has ended, to start up while the tests between run.
const sdkWithoutOtel = lightTests.then(() => {
  light.installAlso(OPTIONAL.filter((name) => name !== '@fastify/otel'))
  return startFailing(t, light.entry, { OTEL_TRACES_EXPORTER: 'console' })
})
// Awaited by the test below, where a failure is reported; this only keeps it from being unhandled before then.
sdkWithoutOtel.catch(() => undefined)

t.test('the SDK installed, @fastify/otel not: the request spans need it, in one line', (t) =>
  failsWith(t, sdkWithoutOtel, 'Tracing (an OpenTelemetry tracer provider is registered) needs the package @fastify/otel, which is not installed: npm install @fastify/otel'))
