// This package's own manifest (name, version, description), found from wherever the code runs:
// the source tree or dist/.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

interface PackageInfo {
  readonly name: string
  readonly version: string
  readonly description: string
  readonly license: string
  /** The directory holding package.json. */
  readonly root: string
}

let cached: PackageInfo | undefined

export function packageInfo(): PackageInfo {
  if (cached !== undefined) return cached
  let directory = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = join(directory, 'package.json')
    if (existsSync(candidate)) {
      const manifest = JSON.parse(readFileSync(candidate, 'utf8')) as Omit<PackageInfo, 'root'>
      if (manifest.name === 'mapper-service') return (cached = { ...manifest, root: directory })
    }
    const parent = dirname(directory)
    if (parent === directory) throw new Error('mapper-service: package.json not found above ' + fileURLToPath(import.meta.url))
    directory = parent
  }
}
