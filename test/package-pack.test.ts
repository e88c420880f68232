// The package as `npm pack` makes it, read from the tarball: its package.json carries no script npm
// runs when a consumer installs it (npm warns about those, and a registry install has no compiler
// for a build), though the repository's has `prepare`, which builds a clone at `npm ci`: prepack
// builds and strips the install scripts (scripts/pack-manifest.mjs), postpack puts package.json back
// byte for byte, and a pack that fails in between (npm then runs no postpack) is mended by the next;
// `npm publish` of the directory is refused (the registry would get the restored package.json).
// `engines` admits the Node lines the project supports (20.19+, 22.12+, 24 and later: those whose
// require() loads ES modules without a flag) and refuses the others, and the CHANGELOG it ships has
// a section for its version. The packs run npm's lifecycle for real, in a copy of this project's
// package.json, pack script and CHANGELOG whose `tsc -p tsconfig.build.json` compiles one file: the
// build of dist/ is not this test's subject (test/proc-compiled.ts compiles what ships), it takes
// half a minute, and in this checkout it would rewrite dist/ and package.json under other runs.
// Two packs, each a process tree of npm, a nested `npm run build`, tsc and the pack script: one made
// to fail after prepack, then the one every packed file is read from, which mends what the first
// left (the same steps as a pack of a clean project, with the copy put back first).
import { execFile } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { ROOT, tempTree, untracked } from './startup-support.js'

t.setTimeout(120000)

const run = promisify(execFile)

/** The scripts npm runs on `npm install` of a package (prepare and prepublish too, for a git or local install). */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare']

type Version = readonly [number, number, number]

/** `x.y.z` as numbers; anything else is an error (the ranges below use nothing more). */
function version(text: string): Version {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (match === null) throw new Error(`not a plain x.y.z version: ${text}`)
  return [Number(match[1]), Number(match[2]), Number(match[3])]
}

const compare = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]

/**
 * Whether `range` admits `wanted`, for the subset of npm's range grammar a Node engines field
 * needs: alternatives joined by `||`, each one or more comparators joined by spaces, each
 * `^x.y.z` (same major, at least x.y.z; majors here are never 0), `>=`, `>`, `<=`, `<` or `=` with
 * x.y.z. Anything else is an error rather than a guess.
 */
function satisfies(wanted: string, range: string): boolean {
  const v = version(wanted)
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      .split(/\s+/)
      .every((comparator) => {
        const match = /^(\^|>=|>|<=|<|=)?(\d+\.\d+\.\d+)$/.exec(comparator)
        if (match === null) throw new Error(`unsupported comparator ${JSON.stringify(comparator)} in ${JSON.stringify(range)}`)
        const bound = version(match[2]!)
        const order = compare(v, bound)
        switch (match[1]) {
          case '^':
            return v[0] === bound[0] && order >= 0
          case '>=':
            return order >= 0
          case '>':
            return order > 0
          case '<=':
            return order <= 0
          case '<':
            return order < 0
          default:
            return order === 0
        }
      })
  )
}

interface Manifest {
  version: string
  scripts: Record<string, string>
  engines: { node: string }
}

/**
 * No update check (it would go to the registry) and no spending of time on anything but the pack;
 * scripts on even under an `npm test --ignore-scripts`, whose setting npm passes down: they are the subject.
 */
const NPM_ENV = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', npm_config_ignore_scripts: 'false' }

/** The files of this project a pack reads, copied byte for byte. */
const COPIED = ['package.json', 'CHANGELOG.md', 'scripts/pack-manifest.mjs', 'scripts/keyword-declarations.mjs', 'scripts/build-playground.mjs']

/**
 * The global types tsc requires of any program (it stops with "Cannot find global type" without
 * them): given here instead of tsc's lib files, whose parse was two thirds of each build's second of CPU.
 */
const GLOBALS = ['Array<T>', 'Boolean', 'CallableFunction', 'Function', 'IArguments', 'NewableFunction', 'Number', 'Object', 'RegExp', 'String'].map((name) => `interface ${name} {}\n`).join('')

/**
 * A project to pack: COPIED, a one-file tsconfig.build.json for `npm run build` (noLib, GLOBALS
 * instead: only `export const built = true` to compile) and the real compiler the build names
 * (TypeScript 7's, test/tsc.ts), linked where npm installs it.
 */
function packable(t: Parameters<typeof tempTree>[0]): ReturnType<typeof tempTree> {
  const tree = tempTree(t, {
    'index.ts': 'export const built = true\n',
    'globals.d.ts': GLOBALS,
    'tsconfig.build.json': JSON.stringify({ compilerOptions: { outDir: 'dist', module: 'NodeNext', target: 'ES2022', noLib: true, types: [] }, files: ['globals.d.ts', 'index.ts'] }),
  })
  for (const file of COPIED) {
    mkdirSync(dirname(tree.path(file)), { recursive: true })
    copyFileSync(join(ROOT, file), tree.path(file))
  }
  mkdirSync(tree.path('node_modules'), { recursive: true })
  symlinkSync(join(ROOT, 'node_modules/typescript-7'), tree.path('node_modules/typescript-7'), 'dir')
  return tree
}

/** `npm pack` of `project` into `destination`, scripts and all; resolves with the tarball's path. */
async function pack(project: string, destination: string): Promise<string> {
  const [command, args] = untracked('npm', ['pack', '--json', '--pack-destination', destination])
  const { stdout } = await run(command, args, { cwd: project, env: NPM_ENV })
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }]
  return join(destination, filename)
}

/** The install scripts `scripts` has. */
const installScripts = (scripts: Record<string, string> = {}): string[] => INSTALL_SCRIPTS.filter((name) => name in scripts)

/**
 * The packs, one after the other in one copy of the project: one made to fail after prepack, then
 * the one every packed file below is read from, then pack-manifest.mjs run by hand over an edit.
 * The second pack runs every step of a pack of a clean project (strip finds the copy the first
 * left, puts it back, then strips as ever; postpack restores), so what is asserted of a pack is
 * asserted of it, and of the mending too. A pack is seconds of npm, a nested `npm run build` and
 * tsc: a third one, of a clean copy, repeated what this one shows.
 */
const packs = (async () => {
  const project = packable(t)
  const before = readFileSync(project.path('package.json'))
  const script = untracked(process.execPath, [project.path('scripts/pack-manifest.mjs')])
  // The tarball cannot be written: npm fails after prepack and runs no postpack.
  const failing = pack(project.root, project.path('missing'))
  await failing.catch(() => undefined)
  const stripped = JSON.parse(readFileSync(project.path('package.json'), 'utf8')) as Manifest
  const copyBeside = readFileSync(project.path('package.json.prepack'))

  // prepack's strip moves the copy back before stripping again; postpack restores as ever.
  mkdirSync(project.path('out'))
  const tarball = await pack(project.root, project.path('out'))
  const { stdout: listing } = await run('tar', ['-tzf', tarball])
  await run('tar', ['-xzf', tarball, '-C', project.path('out'), 'package/package.json', 'package/CHANGELOG.md'])
  const packed = {
    after: readFileSync(project.path('package.json')),
    copyLeft: existsSync(project.path('package.json.prepack')),
    files: listing.split('\n').filter((line) => line !== ''),
    manifest: JSON.parse(readFileSync(project.path('out/package/package.json'), 'utf8')) as Manifest,
    changelog: readFileSync(project.path('out/package/CHANGELOG.md'), 'utf8'),
  }

  // A stripped package.json edited since is neither overwritten nor packed.
  await run(script[0], [...script[1], 'strip'], { cwd: project.root })
  const edited = readFileSync(project.path('package.json'), 'utf8').replace(/"version": "[^"]+"/, '"version": "9.9.9"')
  project.write('package.json', edited)
  const refused = await run(script[0], [...script[1], 'strip'], { cwd: project.root }).then(() => undefined, (error: { code: number; stderr: string }) => error)
  const kept = { text: readFileSync(project.path('package.json'), 'utf8'), copy: readFileSync(project.path('package.json.prepack')) }
  await run(script[0], [...script[1], 'restore'], { cwd: project.root })
  return { before, failing, stripped, copyBeside, packed, edited, refused, kept, restored: readFileSync(project.path('package.json')) }
})()
// Awaited by each test, where a failure is reported; this only keeps it from being unhandled before then.
packs.catch(() => undefined)
const packed = packs.then(({ before, packed }) => ({ before, ...packed }))
packed.catch(() => undefined)

t.test('the packed package.json has no install script; the build runs at pack time', async (t) => {
  const { manifest, files } = await packed
  for (const name of INSTALL_SCRIPTS) t.notOk(name in manifest.scripts, `no ${name} script`)
  t.match(manifest.scripts.prepack, /\bnpm run build\b/, 'prepack builds dist/')
  t.match(manifest.scripts.build, /^node node_modules\/typescript-7\/bin\/tsc -p tsconfig\.build\.json\b/, 'the build is TypeScript 7\'s tsc')
  const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest
  for (const name of installScripts(own.scripts)) delete own.scripts[name]
  t.same(manifest, own, 'otherwise the packed package.json is this one')
  t.same(files.filter((file) => !file.startsWith('package/dist/')).sort(), ['package/CHANGELOG.md', 'package/package.json'], 'the copy of package.json is not packed')
})

t.test("the repository's package.json builds a clone at npm ci, and a pack leaves it byte for byte", async (t) => {
  const { before, after, copyLeft } = await packed
  const { scripts } = JSON.parse(before.toString('utf8')) as Manifest
  t.match(scripts.prepare, /^npm run build && tap build$/, 'prepare builds dist/ and tap\'s plugins')
  t.ok(before.equals(readFileSync(join(ROOT, 'package.json'))), 'the packed project had this package.json')
  t.ok(after.equals(before), 'package.json after the pack is the same bytes')
  t.notOk(copyLeft, 'no package.json.prepack is left')
})

t.test('a pack that fails after prepack is mended by the next; an edit made since stops it', async (t) => {
  const { before, failing, stripped, copyBeside, packed: next, edited, refused, kept, restored } = await packs
  await t.rejects(failing, /ENOENT/, 'the pack fails')
  t.same(installScripts(stripped.scripts), [], 'package.json is left stripped')
  t.ok(copyBeside.equals(before), 'with its copy beside it')

  t.same(installScripts(next.manifest.scripts), [], 'the next pack packs no install script')
  t.ok(next.after.equals(before), 'and leaves package.json as it was')
  t.notOk(next.copyLeft, 'and no copy')

  t.equal(refused?.code, 1, 'strip fails')
  t.equal(refused?.stderr, 'pack-manifest: package.json.prepack is left from a pack that did not finish (npm ran no postpack), and package.json has changed since. ' +
    'Compare the two, keep the one you want as package.json, delete package.json.prepack, then pack again.\n', 'saying why and what to do, in one line')
  t.equal(kept.text, edited, 'the edit is kept')
  t.ok(kept.copy.equals(before), 'and so is the copy')
  t.ok(restored.equals(before), 'restore (npm run postpack) puts the copy back')
})

/** `npm publish --dry-run` of a fresh copy, started with the packs. */
const publishing = (async () => {
  // npm reads package.json again after postpack and would send the registry that one, prepare included.
  const project = packable(t)
  const { name, version } = JSON.parse(readFileSync(project.path('package.json'), 'utf8')) as Manifest & { name: string }
  const [command, args] = untracked('npm', ['publish', '--dry-run'])
  const refused = await run(command, args, { cwd: project.root, env: NPM_ENV }).then(() => undefined, (error: { stderr: string }) => error)
  return { name, version, refused, after: readFileSync(project.path('package.json')) }
})()
publishing.catch(() => undefined)

t.test('npm publish of the directory is refused, naming the tarball to publish', async (t) => {
  const { name, version, refused, after } = await publishing
  t.ok(refused, 'the publish fails')
  t.match(refused?.stderr, `pack-manifest: publish the packed tarball, not this directory: npm pack, then npm publish ./${name}-${version}.tgz (`, 'saying what to run')
  t.ok(after.equals(readFileSync(join(ROOT, 'package.json'))), 'package.json is untouched')
})

t.test('engines admits Node 20.19+, 22.12+ and 24 and later, and nothing older', async (t) => {
  const range = (await packed).manifest.engines.node
  for (const admitted of ['20.19.0', '20.20.2', '22.12.0', '22.20.0', '24.0.0', '24.11.1', '25.0.0']) {
    t.ok(satisfies(admitted, range), `${range} admits ${admitted}`)
  }
  for (const refused of ['18.20.0', '20.18.3', '21.7.0', '22.11.0', '23.11.0']) {
    t.notOk(satisfies(refused, range), `${range} refuses ${refused}`)
  }
})

t.test('the shipped CHANGELOG has a dated section for the packed version, below Unreleased', async (t) => {
  const { manifest, changelog } = await packed
  const sections = [...changelog.matchAll(/^## \[([^\]]+)\](.*)$/gm)].map((m) => ({ name: m[1]!, rest: m[2]! }))
  t.equal(sections[0]?.name, 'Unreleased', 'Unreleased comes first')
  const own = sections.find((section) => section.name === manifest.version)
  t.ok(own, `a section for ${manifest.version}`)
  t.match(own?.rest, /^ - \d{4}-\d{2}-\d{2}$/, 'dated')
  t.ok(changelog.includes(`\n[${manifest.version}]: `), `a link for [${manifest.version}]`)
})

t.test('the range check reads npm ranges as npm does', async (t) => {
  t.ok(satisfies('1.2.3', '>=1.2.3 <2.0.0'))
  t.notOk(satisfies('2.0.0', '>=1.2.3 <2.0.0'))
  t.ok(satisfies('3.0.0', '=3.0.0 || ^4.0.0'))
  t.notOk(satisfies('5.0.0', '^4.1.0'))
  t.throws(() => satisfies('20.0.0', '~20.1.0'), /unsupported comparator/)
  t.throws(() => satisfies('20', '>=20.0.0'), /not a plain/)
})
