// What an install brings: the shipped files (tsconfig.build.json's) import at run time only the
// packages of `dependencies`; the optional packages (`peerDependencies` marked optional: the
// OpenTelemetry SDK, @fastify/otel, tsx, pino-pretty, ioredis) are imported only by config/optional.ts, which turns their
// absence into one line naming the package; the engine imports nothing of the service. Then a real
// light install: the source tree beside a node_modules without the optional packages, started
// through the entry point.
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import t, { type Test } from 'tap'
import ts from 'typescript'
import { buildServer } from '../server.js'
import { ROOT, exchange, freePort, spawnEntryPoint, tempTree, waitForHealth } from './startup-support.js'

t.setTimeout(300000)

interface Manifest {
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
  peerDependencies: Record<string, string>
  peerDependenciesMeta: Record<string, { optional?: boolean }>
}

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest
const OPTIONAL = Object.keys(manifest.peerDependencies)
/** The one module that may import an optional package, and must handle its absence. */
const OPTIONAL_LOADER = 'config/optional.ts'

/** The files `npm run build` compiles, as paths relative to the root. */
function shippedFiles(): string[] {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.build.json'), ts.sys.readFile)
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT)
  return parsed.fileNames.map((file) => relative(ROOT, file).split(sep).join('/')).sort()
}

interface Specifier {
  readonly text: string
  readonly dynamic: boolean
}

/** The module specifiers a file loads at run time: type-only imports are erased and left out. */
function runtimeSpecifiers(file: string): Specifier[] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.ES2022, true)
  const found: Specifier[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined && clause.namedBindings !== undefined && ts.isNamedImports(clause.namedBindings) && clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((element) => element.isTypeOnly)))
      if (!typeOnly) found.push({ text: node.moduleSpecifier.text, dynamic: false })
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.isTypeOnly) found.push({ text: node.moduleSpecifier.text, dynamic: false })
    } else if (ts.isCallExpression(node) && node.arguments.length >= 1) {
      const [first] = node.arguments
      const callee = node.expression
      // import('x'), require('x'), createRequire(…)('x')
      const loads =
        callee.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(callee) && callee.text === 'require') ||
        (ts.isCallExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'createRequire')
      if (loads) {
        if (first !== undefined && ts.isStringLiteralLike(first)) found.push({ text: first.text, dynamic: callee.kind === ts.SyntaxKind.ImportKeyword })
        else if (callee.kind === ts.SyntaxKind.ImportKeyword) found.push({ text: '(computed)', dynamic: true })
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

const packageOf = (specifier: string): string => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')
const isBuiltin = (specifier: string): boolean => specifier.startsWith('node:') || builtinModules.includes(specifier)

t.test('the shipped files load only dependencies; optional packages only through config/optional.ts', async (t) => {
  const files = shippedFiles()
  t.ok(files.includes(OPTIONAL_LOADER) && files.includes('bin/mapper-service.ts') && files.includes('engine/index.ts'), `${files.length} shipped files`)
  const problems: string[] = []
  const used = new Set<string>()
  for (const file of files) {
    for (const { text, dynamic } of runtimeSpecifiers(file)) {
      if (text === '(computed)') {
        // A computed dynamic import is a module path the deployment names (MAPPINGS, EXTENSIONS).
        if (file !== 'config/files.ts') problems.push(`${file}: import() of a computed specifier`)
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
      if (OPTIONAL.includes(name) && dynamic && file === OPTIONAL_LOADER) continue
      problems.push(`${file}: ${dynamic ? 'import()' : 'imports'} ${text}, which is not in dependencies${OPTIONAL.includes(name) ? ` (${name} is optional: load it through ${OPTIONAL_LOADER})` : ''}`)
    }
  }
  t.same(problems, [], 'no shipped file loads what an install may lack')
  t.same(Object.keys(manifest.dependencies).filter((name) => !used.has(name)), [], 'every dependency is loaded by a shipped file')
  t.same(OPTIONAL.filter((name) => !used.has(name)), [], 'every optional package is loaded (by config/optional.ts)')
  for (const name of OPTIONAL) {
    t.equal(manifest.peerDependenciesMeta[name]?.optional, true, `${name} is an optional peer`)
    t.equal(manifest.devDependencies[name], manifest.peerDependencies[name], `${name} is a devDependency too, at the same range (the tests use it)`)
    t.notOk(name in manifest.dependencies, `${name} is not a dependency`)
  }
})

/**
 * The source tree in a temp dir beside a node_modules of links to this one's packages, less
 * `absent`: what `npm install mapper-service` gives when the optional packages are not installed.
 * (Node resolves a linked package's own imports from where it really is, as an install would.)
 */
function lightInstall(t: Test, absent: readonly string[]): string {
  const tree = tempTree(t)
  for (const file of shippedFiles()) {
    mkdirSync(dirname(tree.path(file)), { recursive: true })
    cpSync(join(ROOT, file), tree.path(file))
  }
  for (const folder of ['mappings', 'playground']) cpSync(join(ROOT, folder), tree.path(folder), { recursive: true })
  cpSync(join(ROOT, 'package.json'), tree.path('package.json'))
  const modules = join(ROOT, 'node_modules')
  const link = (name: string): void => {
    if (absent.includes(name)) return
    mkdirSync(dirname(tree.path(`node_modules/${name}`)), { recursive: true })
    symlinkSync(join(modules, name), tree.path(`node_modules/${name}`), 'dir')
  }
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith('.')) continue
    if (entry.startsWith('@')) for (const scoped of readdirSync(join(modules, entry))) link(`${entry}/${scoped}`)
    else link(entry)
  }
  return tree.root
}

const SILENT = JSON.stringify({ logging: { level: 'silent' }, host: '127.0.0.1' })

/** Start the copy's entry point; resolves with its exit, which must be a one-line failure. */
async function failsWith(t: Test, root: string, env: Record<string, string>, line: string): Promise<void> {
  const entry = join(root, 'bin', 'mapper-service.ts')
  const service = spawnEntryPoint(t, { OPTIONS: SILENT, PORT: String(await freePort()), ...env }, 60000, entry)
  const exit = await service.exited
  t.equal(exit.code, 1, 'exits 1')
  t.equal(exit.stderr, `mapper-service: ${line}\n`, 'one line on stderr naming the package to install')
  t.equal(exit.stdout, '', 'nothing on stdout')
}

t.test('a light install: serves without the optional packages, and a feature that needs one says which', async (t) => {
  const root = lightInstall(t, OPTIONAL)
  for (const name of OPTIONAL) t.throws(() => readdirSync(join(root, 'node_modules', name)), `${name} is absent`)

  t.test('no tracing, no TypeScript module: it serves', async (t) => {
    const port = await freePort()
    const service = spawnEntryPoint(t, { OPTIONS: SILENT, PORT: String(port) }, 60000, join(root, 'bin', 'mapper-service.ts'))
    await waitForHealth(service, port)
    t.equal((await exchange(port, 'POST', '/map', { mapping: 'greet', input: { message: 'hi' } })).status, 200, 'POST /map answers')
    service.child.kill('SIGTERM')
    t.equal((await service.exited).code, 0, 'stops on SIGTERM')
  })

  t.test('OTEL_TRACES_EXPORTER set, no SDK', (t) =>
    failsWith(t, root, { OTEL_TRACES_EXPORTER: 'console' }, 'Tracing (configured by the OTEL_* environment) needs the package @opentelemetry/sdk-node, which is not installed: npm install @opentelemetry/sdk-node'))

  t.test('OTEL_EXPORTER_OTLP_ENDPOINT set, no SDK', (t) =>
    failsWith(t, root, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' }, 'Tracing (configured by the OTEL_* environment) needs the package @opentelemetry/sdk-node, which is not installed: npm install @opentelemetry/sdk-node'))

  t.test('logging.format pretty, no pino-pretty', (t) =>
    failsWith(t, root, { OPTIONS: JSON.stringify({ logging: { format: 'pretty' }, host: '127.0.0.1' }) }, 'options.logging.format "pretty" needs the package pino-pretty, which is not installed: npm install pino-pretty'))

  t.test('rateLimit.redis, no ioredis', (t) =>
    failsWith(
      t,
      root,
      { OPTIONS: JSON.stringify({ logging: { level: 'silent' }, host: '127.0.0.1', rateLimit: { redis: 'redis://:secret@127.0.0.1:1/0' } }) },
      'options.rateLimit.redis needs the package ioredis, which is not installed: npm install ioredis'
    ))

  t.test('a TypeScript EXTENSIONS module, no tsx', async (t) => {
    const extensions = join(root, 'extensions.ts')
    writeFileSync(extensions, 'export default {}\n')
    await failsWith(t, root, { EXTENSIONS: extensions }, `EXTENSIONS: ${extensions}, a TypeScript module, needs the package tsx, which is not installed: npm install tsx`)
  })
})

t.test('installed, an optional package is loaded when its feature is configured', async (t) => {
  const app = await buildServer({ options: { logging: { format: 'pretty', level: 'silent' } } })
  t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200, 'logging.format pretty with pino-pretty installed')
  await app.close()
})

t.test('the SDK installed, @fastify/otel not: the request spans need it, in one line', async (t) => {
  const root = lightInstall(t, ['@fastify/otel'])
  await failsWith(t, root, { OTEL_TRACES_EXPORTER: 'console' }, 'Tracing (an OpenTelemetry tracer provider is registered) needs the package @fastify/otel, which is not installed: npm install @fastify/otel')
})
