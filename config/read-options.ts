// The options object from the environment (http.md §8): `OPTIONS` (inline JSON) or `OPTIONS_FILE`
// (.json, .yaml, .yml), never both.
import { isObject } from '../engine/index.js'
import { DOCUMENT_EXTENSIONS, SourceError, extensionOf, readDocumentFile } from '../sources/files.js'
import { whereJsonFails } from '../sources/json-syntax.js'

const describe = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`)

/** The options object the environment holds (not yet validated: `resolveConfig` does that). */
export async function readOptions(env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  const inline = env.OPTIONS
  const file = env.OPTIONS_FILE
  if (inline !== undefined && inline !== '' && file !== undefined && file !== '') {
    throw new SourceError('set OPTIONS or OPTIONS_FILE, not both')
  }
  if (inline !== undefined && inline !== '') {
    let parsed: unknown
    try {
      parsed = JSON.parse(inline) as unknown
    } catch {
      throw new SourceError(`OPTIONS is not valid JSON${whereJsonFails(inline)}`)
    }
    if (!isObject(parsed)) throw new SourceError(`OPTIONS must be a JSON object, not ${describe(parsed)}`)
    return parsed
  }
  if (file !== undefined && file !== '') {
    if (!DOCUMENT_EXTENSIONS.has(extensionOf(file))) {
      throw new SourceError(`OPTIONS_FILE must be a .json, .yaml or .yml file: ${file}`)
    }
    let parsed: unknown
    try {
      parsed = await readDocumentFile(file)
    } catch (error) {
      if (error instanceof SourceError) throw new SourceError(`OPTIONS_FILE: ${error.message}`)
      throw error
    }
    // An empty file is no options at all.
    if (parsed === null) return {}
    if (!isObject(parsed)) throw new SourceError(`OPTIONS_FILE: ${file} must hold an object, not ${describe(parsed)}`)
    return parsed
  }
  return {}
}
