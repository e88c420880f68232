// This package laid out as an install holds it (package.json beside dist/), for the tests that use
// the package the way a consumer or an operator does: importing it by name through its `exports`,
// or running its npm scripts. dist/ is the compiled tree of test/proc-compiled.ts (the shipped
// files as they are now), not this checkout's dist/, which is as old as the last `npm ci` (prepare),
// `npm pack` (prepack) or `npm run build`.
import { copyFileSync, mkdirSync, symlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { transform } from 'esbuild'
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

/**
 * A host application's project in `project` (a tempTree): this package installed (packageLayout),
 * fastify beside it as npm would install the host's own dependency (the same copy), and `host.mjs`
 * holding `source`, TypeScript compiled as a consumer's build would (esbuild, types stripped).
 * Resolves with the path of host.mjs, for spawnEntryPoint.
 */
export async function hostProject(project: { path(relative: string): string; write(relative: string, text: string): string }, source: string): Promise<string> {
  const { code } = await transform(source, { loader: 'ts', format: 'esm', target: 'es2022' })
  await packageLayout(project.path('node_modules/mapper-service'))
  symlinkSync(join(ROOT, 'node_modules', 'fastify'), project.path('node_modules/fastify'), 'dir')
  project.write('package.json', JSON.stringify({ name: 'host-app', type: 'module', private: true }))
  return project.write('host.mjs', code)
}
