// The options object from the environment (http.md §8): `OPTIONS` (inline JSON) or `OPTIONS_FILE`
// (.json, .yaml, .yml), never both.
import { SourceError, extensionOf, readDocumentFile } from './files.js'

export async function readOptions(env: NodeJS.ProcessEnv): Promise<unknown> {
  const inline = env.OPTIONS
  const file = env.OPTIONS_FILE
  if (inline !== undefined && inline !== '' && file !== undefined && file !== '') {
    throw new SourceError('set OPTIONS or OPTIONS_FILE, not both')
  }
  if (inline !== undefined && inline !== '') {
    try {
      return JSON.parse(inline) as unknown
    } catch (error) {
      throw new SourceError(`OPTIONS is not valid JSON: ${(error as Error).message}`)
    }
  }
  if (file !== undefined && file !== '') {
    if (!['.json', '.yaml', '.yml'].includes(extensionOf(file))) {
      throw new SourceError(`OPTIONS_FILE must be a .json, .yaml or .yml file: ${file}`)
    }
    return readDocumentFile(file)
  }
  return {}
}
