// Reading configuration files: JSON and YAML documents (with the parse error's line named) and
// JavaScript or TypeScript modules (TypeScript through tsx, so `.ts` works without a build).
import { readFile } from 'node:fs/promises'
import { extname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parse as parseYaml, YAMLParseError } from 'yaml'

/** A startup failure about a file or setting; the message is one line, fit for stderr. */
export class SourceError extends Error {
  override readonly name = 'SourceError'
}

export const DOCUMENT_EXTENSIONS = new Set(['.json', '.yaml', '.yml'])
export const MODULE_EXTENSIONS = new Set(['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts'])

export function extensionOf(path: string): string {
  return extname(path).toLowerCase()
}

function lineOf(text: string, position: number): number {
  return text.slice(0, position).split('\n').length
}

/** Parse JSON or YAML text; throws SourceError naming the file and the line of the error. */
export function parseDocumentText(text: string, path: string): unknown {
  if (extensionOf(path) === '.json') {
    try {
      return JSON.parse(text) as unknown
    } catch (error) {
      const message = (error as Error).message
      const position = /position (\d+)/.exec(message)
      const line = position === null ? '' : ` (line ${lineOf(text, Number(position[1]))})`
      throw new SourceError(`${path} does not parse as JSON${line}: ${message}`)
    }
  }
  try {
    return parseYaml(text, { uniqueKeys: true }) as unknown
  } catch (error) {
    if (error instanceof YAMLParseError) {
      const line = error.linePos?.[0]?.line
      throw new SourceError(`${path} does not parse as YAML${line === undefined ? '' : ` (line ${line})`}: ${error.message.split('\n')[0]}`)
    }
    throw new SourceError(`${path} does not parse as YAML: ${(error as Error).message}`)
  }
}

export async function readDocumentFile(path: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new SourceError(`${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
  }
  return parseDocumentText(text, path)
}

let typescriptLoader: Promise<void> | undefined

/** Import a module's default export; `.ts` modules are loaded through tsx. */
export async function importDefault(path: string): Promise<unknown> {
  const absolute = resolve(path)
  if (['.ts', '.mts', '.cts'].includes(extensionOf(absolute))) {
    typescriptLoader ??= import('tsx/esm/api').then(({ register }) => {
      register()
    })
    await typescriptLoader
  }
  let module: { default?: unknown }
  try {
    module = (await import(pathToFileURL(absolute).href)) as { default?: unknown }
  } catch (error) {
    throw new SourceError(`${path} cannot be loaded: ${(error as Error).message.split('\n')[0]}`)
  }
  if (module.default === undefined) throw new SourceError(`${path} has no default export`)
  return module.default
}
