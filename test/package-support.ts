// This package laid out as an install holds it (package.json beside dist/), for the tests that use
// the package the way a consumer or an operator does: importing it by name through its `exports`,
// or running its npm scripts. dist/ is the compiled tree of test/proc-compiled.ts (the shipped
// files as they are now), not this checkout's dist/, which is as old as the last `npm ci` (prepare),
// `npm pack` (prepack) or `npm run build`.
import { copyFileSync, mkdirSync, symlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { compiledEntry } from './proc-compiled.js'
import { ROOT } from './startup-support.js'

/**
 * Lay the package out in `directory` (created if missing): this tree's package.json, dist/ as a
 * link to the compiled tree, mappings/ and playground/ as links to this tree's. Node follows the link to the real files, so their own imports resolve
 * from this tree's node_modules. Resolves with `directory`.
 */
export async function packageLayout(directory: string): Promise<string> {
  const compiledRoot = dirname(dirname(await compiledEntry()))
  mkdirSync(directory, { recursive: true })
  copyFileSync(join(ROOT, 'package.json'), join(directory, 'package.json'))
  symlinkSync(compiledRoot, join(directory, 'dist'), 'dir')
  for (const folder of ['mappings', 'playground']) symlinkSync(join(ROOT, folder), join(directory, folder), 'dir')
  return directory
}
