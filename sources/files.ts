// Reading configuration files: JSON and YAML documents (with the parse error's line named) and
// JavaScript or TypeScript modules (TypeScript through tsx, so `.ts` works without a build).
import { constants } from 'node:fs'
import { access, readFile } from 'node:fs/promises'
import { extname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parse as parseYaml, YAMLParseError } from 'yaml'
import { jsonSyntaxProblem } from './json-syntax.js'

/** A startup failure about a file or setting; the message is one line, fit for stderr. */
export class SourceError extends Error {
  override readonly name = 'SourceError'
}

export const DOCUMENT_EXTENSIONS = new Set(['.json', '.yaml', '.yml'])
export const MODULE_EXTENSIONS = new Set(['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts'])

export function extensionOf(path: string): string {
  return extname(path).toLowerCase()
}

/** Error messages can span lines (a loader's code frame, a parser's excerpt); a startup message is one. */
export function oneLine(message: string): string {
  return message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' ')
    .replace(/:$/, '')
}

/** Parse JSON or YAML text; throws SourceError naming the file and the line of the error. */
export function parseDocumentText(text: string, path: string): unknown {
  // An editor's byte-order mark is not content.
  const content = text.startsWith('\uFEFF') ? text.slice(1) : text
  if (extensionOf(path) === '.json') {
    try {
      return JSON.parse(content) as unknown
    } catch {
      const problem = jsonSyntaxProblem(content)
      if (problem === undefined) throw new SourceError(`${path} does not parse as JSON`)
      throw new SourceError(`${path} does not parse as JSON (line ${problem.line}, column ${problem.column}): ${problem.description}`)
    }
  }
  try {
    return parseYaml(content, { uniqueKeys: true }) as unknown
  } catch (error) {
    if (error instanceof YAMLParseError) {
      const position = error.linePos?.[0]
      const where = position === undefined ? '' : ` (line ${position.line}, column ${position.col})`
      // The parser's own first line repeats the position; keep only what went wrong.
      const what = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')
      throw new SourceError(`${path} does not parse as YAML${where}: ${what}`)
    }
    throw new SourceError(`${path} does not parse as YAML: ${oneLine((error as Error).message)}`)
  }
}

/** The one-line error for a file or directory that cannot be opened. */
export function unreadable(path: string, error: unknown): SourceError {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOENT') return new SourceError(`${path} does not exist`)
  if (code === 'EISDIR') return new SourceError(`${path} is a directory, not a file`)
  if (code === 'EACCES') return new SourceError(`${path} cannot be read: permission denied`)
  return new SourceError(`${path} cannot be read: ${code ?? oneLine((error as Error).message)}`)
}

export async function readDocumentFile(path: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw unreadable(path, error)
  }
  return parseDocumentText(text, path)
}

let typescriptLoader: Promise<void> | undefined

/** Import a module's default export; `.ts` modules are loaded through tsx. */
export async function importDefault(path: string): Promise<unknown> {
  const absolute = resolve(path)
  try {
    await access(absolute, constants.R_OK)
  } catch (error) {
    throw unreadable(path, error)
  }
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
    throw new SourceError(`${path} cannot be loaded: ${oneLine((error as Error).message)}`)
  }
  // A module compiled to CommonJS (`exports.default = …`, `__esModule` set) arrives wrapped once more.
  const exported = module.default as { __esModule?: unknown; default?: unknown } | undefined
  const value = exported !== null && typeof exported === 'object' && exported.__esModule === true && 'default' in exported ? exported.default : exported
  if (value === undefined) throw new SourceError(`${path} has no default export`)
  return value
}
