// Bundles the playground's script (playground/src/main.js and what it imports: CodeMirror, the
// `yaml` package, and a few pure modules of this package's own) into one ES module,
// playground/build/playground.js, which http/routes/playground.ts serves as
// /playground/playground.js. Run by `npm run build`; the output folder is not in git.
//
// The page places a diagnostic where the CLI does (sources/positions.ts `locator`), finds where a
// JSON text stops being JSON as the service does (sources/json-syntax.ts) and compares an example
// as `mapper-service test` does (engine/examples.ts `differences`): it bundles those modules
// rather than having a second copy of them. They sit in modules that also hold server-side code
// (reading a file, the engine's evaluation), so only the modules in BROWSER_MODULES are bundled
// as they are; an import of any other module of this package, or of a Node built-in, from one of
// them is replaced by a stub, and the build fails if a stub is still in the output once unused
// code is dropped: the page never calls into server code by accident.
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const OUT_DIR = join(ROOT, 'playground', 'build')
const OUT_FILE = join(OUT_DIR, 'playground.js')
const NOTICES = join(OUT_DIR, 'THIRD-PARTY-LICENSES.txt')

/** The package's own modules the page may bundle whole: pure functions, no Node API. */
const BROWSER_MODULES = new Set([
  'sources/positions.ts',
  'sources/json-syntax.ts',
  'engine/pointer.ts',
  'engine/errors.ts',
  'engine/examples.ts',
  'engine/values.ts',
].map((path) => join(ROOT, path)))

/**
 * Imports of a browser module that name a module re-exporting what they use: taken from the module
 * that defines it. positions.ts takes parsePointer and escapeToken from the engine's index, which
 * would bring the whole engine.
 */
const REDIRECTS = new Map([
  [`${join(ROOT, 'sources/positions.ts')}\0../engine/index.js`, join(ROOT, 'engine/pointer.ts')],
])

const STUB = 'playground-stub'

/** Keeps server code out of the bundle; see the comment at the top. */
const browserOnly = {
  name: 'browser-only',
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      if (!BROWSER_MODULES.has(args.importer)) return undefined
      const redirected = REDIRECTS.get(`${args.importer}\0${args.path}`)
      if (redirected !== undefined) return { path: redirected }
      if (args.path.startsWith('node:')) return { path: args.path, namespace: STUB, sideEffects: false }
      if (!args.path.startsWith('.')) return undefined
      const target = resolve(dirname(args.importer), args.path).replace(/\.js$/, '.ts')
      if (BROWSER_MODULES.has(target)) return { path: target }
      return { path: relative(ROOT, target), namespace: STUB, sideEffects: false }
    })
    build.onLoad({ filter: /.*/, namespace: STUB }, (args) => ({
      loader: 'js',
      // Any use of it fails loudly; the check after the build makes sure none is left.
      contents: `module.exports = new Proxy({}, { get(_, name) { throw new Error(${JSON.stringify(`${args.path} is not part of the playground`)} + ': ' + String(name)) } })`,
    }))
  },
}

/** One notice per bundled package: its name, version, license and license text. */
function thirdPartyNotices(inputs) {
  const packages = new Map()
  for (const input of inputs) {
    const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)
    if (match === null || packages.has(match[1])) continue
    const folder = join(ROOT, 'node_modules', match[1])
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'))
    const licenseFile = ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'license'].map((name) => join(folder, name)).find((path) => existsSync(path))
    packages.set(match[1], { version: manifest.version, license: manifest.license, text: licenseFile === undefined ? '' : readFileSync(licenseFile, 'utf8').trim() })
  }
  const names = [...packages.keys()].sort()
  const sections = names.map((name) => {
    const { version, license, text } = packages.get(name)
    return `${name}@${version} (${license})\n\n${text}`
  })
  return `The playground's script bundles these packages:\n\n${sections.join('\n\n' + '-'.repeat(72) + '\n\n')}\n`
}

export async function buildPlayground({ quiet = false } = {}) {
  const entry = join(ROOT, 'playground', 'src', 'main.js')
  // A tree without the page's sources (a copy of the project made to test its packing) has
  // nothing to bundle; in this repository the sources are there, and the page needs the bundle.
  if (!existsSync(entry)) {
    if (!quiet) process.stderr.write(`playground: no ${relative(ROOT, entry)} here, nothing to bundle\n`)
    return undefined
  }
  // esbuild is a devDependency, loaded only when there is something to bundle.
  const { build } = await import('esbuild')
  rmSync(OUT_DIR, { recursive: true, force: true })
  mkdirSync(OUT_DIR, { recursive: true })
  const result = await build({
    entryPoints: [entry],
    outfile: OUT_FILE,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    // Chromium, Firefox and Safari of 2023 on: top-level await, CompressionStream.
    target: ['es2022'],
    minify: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
    plugins: [browserOnly],
  })
  const output = result.metafile.outputs[relative(process.cwd(), OUT_FILE).split(sep).join('/')] ?? Object.values(result.metafile.outputs)[0]
  const stubs = Object.entries(output.inputs).filter(([input, { bytesInOutput }]) => input.startsWith(`${STUB}:`) && bytesInOutput > 0)
  if (stubs.length > 0) {
    rmSync(OUT_DIR, { recursive: true, force: true })
    throw new Error(`build-playground: the page's bundle uses server-side modules: ${stubs.map(([input]) => input.slice(STUB.length + 1)).join(', ')} (import the function from a module in BROWSER_MODULES, or add a pure module there)`)
  }
  writeFileSync(NOTICES, thirdPartyNotices(Object.keys(output.inputs)))
  if (!quiet) process.stderr.write(`playground: ${relative(ROOT, OUT_FILE)} ${output.bytes} bytes\n`)
  return { file: OUT_FILE, bytes: output.bytes, metafile: result.metafile }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    await buildPlayground()
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  }
}
