// Extension sources (http.md §8, `EXTENSIONS`): a module whose default export is the whole
// extension surface `{ initializers, transformers, plugins }`, replacing the stock one.
import { isKeyword, type Extensions } from '../engine/index.js'
import { isObject } from '../engine/index.js'
import { SourceError, importDefault, type ImportOptions } from './files.js'

const KINDS = ['initializers', 'transformers', 'plugins'] as const

/** Check the shape of an extension surface; throws SourceError naming what is wrong. */
function checkExtensions(surface: unknown, source: string): Extensions {
  if (!isObject(surface)) {
    throw new SourceError(`${source} must export { initializers, transformers, plugins }`)
  }
  for (const key of Object.keys(surface)) {
    if (!(KINDS as readonly string[]).includes(key)) throw new SourceError(`${source}: unknown extension kind "${key}" (expected initializers, transformers, plugins)`)
  }
  for (const kind of KINDS) {
    const registry = surface[kind]
    if (registry === undefined) continue
    if (!isObject(registry)) {
      throw new SourceError(`${source}: ${kind} must be an object of named functions`)
    }
    for (const [name, fn] of Object.entries(registry)) {
      if (typeof fn !== 'function') throw new SourceError(`${source}: ${kind}.${name} must be a function`)
      // The engine refuses it too; saying so here names the module it came from.
      if (kind === 'plugins' && isKeyword(name)) {
        throw new SourceError(`${source}: plugin "${name}" cannot be registered: "${name}" is a keyword of the mapping language`)
      }
    }
  }
  return surface as Extensions
}

/** Load and check an extension module; `timeoutMs` bounds its loading (default 10000). */
export async function loadExtensions(path: string, options: ImportOptions = {}): Promise<Extensions> {
  return checkExtensions(await importDefault(path, options), path)
}
