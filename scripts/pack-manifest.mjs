// package.json as `npm pack` and `npm publish` ship it: without the scripts npm runs when a project
// is installed (preinstall, install, postinstall, prepublish and prepare with its pre and post).
// This repository's `prepare` is for a clone, whose `npm ci` builds dist/ and tap's plugins with it;
// an installed package has nothing to build. npm packs the package.json on disk, and reads it again
// after `prepack` (so the stripped one is also the one whose `prepare` it would run), so:
//   node scripts/pack-manifest.mjs strip     (prepack, after the build) copies package.json byte
//       for byte to package.json.prepack, then replaces package.json with the same JSON less those
//       scripts;
//   node scripts/pack-manifest.mjs restore   (postpack) moves the copy back over package.json.
// Each replacement is a rename, so a reader at the same moment sees one whole file or the other.
// npm runs no postpack when the pack fails after prepack (a --pack-destination that does not
// exist, a file it cannot read, Ctrl-C): package.json is then left stripped and the copy stays.
// The next `strip` (the next pack) moves the copy back first when package.json is still exactly
// what strip wrote, and stops with an explanation when it was edited since; `npm run postpack`
// moves it back by hand.
//   node scripts/pack-manifest.mjs publish   (prepublishOnly) refuses `npm publish` of this
//       directory: npm reads package.json again after postpack and sends the registry that one as
//       the version's document, `prepare` included. `npm publish <tarball>` sends the tarball's.
import { copyFileSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** The scripts npm runs on `npm install` or `npm ci` of a project, and of a git or local dependency. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare']

// npm runs a package's scripts in its root directory.
const manifestPath = join(process.cwd(), 'package.json')
const copyPath = `${manifestPath}.prepack`

class PackManifestError extends Error {}

/** `text` (package.json) less the install scripts, in its own indentation and line ending; `text` itself when it has none. */
function stripped(text) {
  const manifest = JSON.parse(text)
  const scripts = manifest.scripts ?? {}
  const present = INSTALL_SCRIPTS.filter((name) => Object.hasOwn(scripts, name))
  if (present.length === 0) return text
  for (const name of present) delete scripts[name]
  const indent = /^[ \t]+(?=")/m.exec(text)?.[0] ?? 2
  const eol = text.includes('\r\n') ? '\r\n' : '\n'
  return JSON.stringify(manifest, null, indent).replaceAll('\n', eol) + eol
}

/** Replace `path` with `text` by a rename, keeping the file's mode. */
function replace(path, text) {
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, text, { mode: statSync(path).mode })
  renameSync(temporary, path)
}

/** A copy left by a pack that did not finish goes back first, when package.json is still what strip made of it. */
function recoverLeftover() {
  if (!existsSync(copyPath)) return
  const copy = readFileSync(copyPath, 'utf8')
  if (readFileSync(manifestPath, 'utf8') !== stripped(copy)) {
    throw new PackManifestError(
      'package.json.prepack is left from a pack that did not finish (npm ran no postpack), and package.json has changed since. ' +
        'Compare the two, keep the one you want as package.json, delete package.json.prepack, then pack again.'
    )
  }
  renameSync(copyPath, manifestPath)
  console.error('pack-manifest: package.json restored from package.json.prepack, left by a pack that did not finish')
}

function strip() {
  recoverLeftover()
  const text = readFileSync(manifestPath, 'utf8')
  const packed = stripped(text)
  if (packed === text) return
  copyFileSync(manifestPath, copyPath)
  replace(manifestPath, packed)
}

function restore() {
  if (existsSync(copyPath)) renameSync(copyPath, manifestPath)
}

function publish() {
  const { name, version } = JSON.parse(readFileSync(manifestPath, 'utf8'))
  throw new PackManifestError(
    'publish the packed tarball, not this directory: npm pack, then npm publish ./' +
      `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz (npm publish of a directory sends the registry package.json as it is after the pack, prepare included)`
  )
}

const commands = { strip, restore, publish }
const command = process.argv[2]
try {
  if (!Object.hasOwn(commands, command)) throw new PackManifestError(`usage: node scripts/pack-manifest.mjs strip|restore|publish (got ${command === undefined ? 'nothing' : JSON.stringify(command)})`)
  commands[command]()
} catch (error) {
  // One line for the person packing: a bug here still names itself, without a stack trace.
  console.error(`pack-manifest: ${error instanceof PackManifestError ? '' : `${command} failed: `}${error.message}`)
  process.exitCode = 1
}
