// The package as `npm pack` makes it, read from the tarball: its package.json carries no script npm
// runs when a consumer installs it (npm warns about those, and a registry install has no compiler
// for a build), the build happens at pack time instead (prepack), `engines` admits the Node lines the
// project supports (20.19+, 22.12+, 24 and later: those whose require() loads ES modules without a
// flag) and refuses the others, and the CHANGELOG it ships has a section for its version. Packed with
// --ignore-scripts: the build is not this test's subject, and it would rewrite this checkout's dist/.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
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

const packed = (async () => {
  const tree = tempTree(t)
  const [command, args] = untracked('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tree.root])
  // No update check (it would go to the registry) and no spending of time on anything but the pack.
  const { stdout } = await run(command, args, { cwd: ROOT, env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' } })
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }]
  await run('tar', ['-xzf', join(tree.root, filename), '-C', tree.root, 'package/package.json', 'package/CHANGELOG.md'])
  return {
    manifest: JSON.parse(readFileSync(tree.path('package/package.json'), 'utf8')) as Manifest,
    changelog: readFileSync(tree.path('package/CHANGELOG.md'), 'utf8'),
  }
})()
// Awaited by each test, where a failure is reported; this only keeps it from being unhandled before then.
packed.catch(() => undefined)

t.test('the packed package.json has no install script; the build runs at pack time', async (t) => {
  const { manifest } = await packed
  for (const name of INSTALL_SCRIPTS) t.notOk(name in manifest.scripts, `no ${name} script`)
  t.match(manifest.scripts.prepack, /\bnpm run build\b/, 'prepack builds dist/')
  t.match(manifest.scripts.build, /^tsc -p tsconfig\.build\.json\b/, 'the build is tsc')
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
