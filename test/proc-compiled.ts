// The shipped files compiled to JavaScript, for the tests whose subject is a process of the service
// or the CLI: `node bin/mapper-service.js`, as `npm start` runs the build, with no loader in the
// process or its worker threads. Through test/loader every module of the child (and of each worker
// thread it starts) passes the loader's hooks; compiled once, a child starts in about half the
// time. The files are those tsconfig.build.json names, compiled as test/loader compiles them
// (esbuild to ES2022 modules, the options tsc's target gives), beside package.json.
import { cpSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { compiledTree, ROOT, shippedSources } from './loader/compiled-tree.mjs'

export { shippedSources }

let compiled: Promise<string> | undefined

/**
 * The compiled tree of the shipped files as they are now (test/loader/compiled-tree.mjs, under
 * node_modules/.cache/mapper-service-compiled, as test/loader keeps its compiled files), built by
 * the first test process to need it: no source maps (the build has none), this package.json beside
 * the files, mappings/ and playground/ as links to this tree's own; packages resolve from this
 * tree's node_modules, which holds the cache. Resolves with the path of bin/mapper-service.js in it.
 */
export function compiledEntry(): Promise<string> {
  const manifest = readFileSync(join(ROOT, 'package.json'), 'utf8')
  compiled ??= compiledTree('mapper-service-compiled', {
    salt: manifest,
    finish: async (folder) => {
      cpSync(join(ROOT, 'package.json'), join(folder, 'package.json'))
      for (const name of ['mappings', 'playground']) symlinkSync(join(ROOT, name), join(folder, name), 'dir')
    },
  }).then((tree) => join(tree, 'bin', 'mapper-service.js'))
  return compiled
}
