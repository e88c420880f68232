// Reading configuration files: JSON and YAML documents (with the parse error's line named) and
// JavaScript or TypeScript modules (TypeScript through tsx, an optional package, so `.ts` works
// without a build). Only regular files are read (a FIFO or a device would block startup forever),
// and a module has a bounded time to load.
import { constants, type Stats } from 'node:fs'
import { access, open, stat } from 'node:fs/promises'
import { extname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parse as parseYaml, YAMLParseError } from 'yaml'
import { whereJsonFails } from './json-syntax.js'
import { MissingPackageError, loadTsx } from '../support/optional.js'

/** A startup failure about a file or setting; the message is one line, fit for stderr. */
export class SourceError extends Error {
  override readonly name = 'SourceError'
}

/** A file that was read but does not parse as JSON or YAML (the CLI reports it and goes on); named a SourceError still. */
export class DocumentSyntaxError extends SourceError {}

export const DOCUMENT_EXTENSIONS = new Set(['.json', '.yaml', '.yml'])
export const MODULE_EXTENSIONS = new Set(['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts'])

export function extensionOf(path: string): string {
  return extname(path).toLowerCase()
}

/** Error messages can span lines (a loader's code frame, a parser's excerpt); a startup message is one. */
function oneLine(message: string): string {
  return message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' ')
    .replace(/:$/, '')
}

/** Parse JSON or YAML text; throws DocumentSyntaxError naming the file and the line of the error. */
export function parseDocumentText(text: string, path: string): unknown {
  // An editor's byte-order mark is not content.
  const content = text.startsWith('\uFEFF') ? text.slice(1) : text
  if (extensionOf(path) === '.json') {
    try {
      return JSON.parse(content) as unknown
    } catch {
      throw new DocumentSyntaxError(`${path} does not parse as JSON${whereJsonFails(content)}`)
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
      throw new DocumentSyntaxError(`${path} does not parse as YAML${where}: ${what}`)
    }
    throw new DocumentSyntaxError(`${path} does not parse as YAML: ${oneLine((error as Error).message)}`)
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

/** The type tests a `Stats` and a `Dirent` share. */
export type FileType = Pick<Stats, 'isFile' | 'isDirectory' | 'isFIFO' | 'isSocket' | 'isCharacterDevice' | 'isBlockDevice'>

/** What a path that is not a regular file is, for messages: `FIFO`, `socket`, `directory`… */
export function specialKind(info: FileType): string {
  if (info.isDirectory()) return 'directory'
  if (info.isFIFO()) return 'FIFO'
  if (info.isSocket()) return 'socket'
  if (info.isCharacterDevice()) return 'character device'
  if (info.isBlockDevice()) return 'block device'
  return 'special file'
}

const notRegular = (path: string, info: Stats): SourceError =>
  info.isDirectory() ? new SourceError(`${path} is a directory, not a file`) : new SourceError(`${path} is not a regular file (a ${specialKind(info)})`)

export async function readDocumentFile(path: string): Promise<unknown> {
  let text: string
  try {
    // Opened without blocking and checked on the open file: a FIFO with no writer would otherwise
    // hold the open (and startup) forever, and a file swapped after a check cannot slip through.
    const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
    try {
      const info = await file.stat()
      if (!info.isFile()) throw notRegular(path, info)
      text = await file.readFile('utf8')
    } finally {
      await file.close()
    }
  } catch (error) {
    if (error instanceof SourceError) throw error
    throw unreadable(path, error)
  }
  return parseDocumentText(text, path)
}

/** How long a module may take to load when the caller does not say (options.server.loadTimeout). */
const DEFAULT_LOAD_TIMEOUT_MS = 10000

export interface ImportOptions {
  /** Milliseconds the module may take to load, top-level await included. */
  readonly timeoutMs?: number
}

/** Settle with `work`, or fail with `expired()` after `ms`. */
async function within<T>(work: Promise<T>, ms: number, expired: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  // Deliberately not unref'd: a top-level await that never settles leaves nothing else pending, and
  // Node would exit 13 ("unsettled top-level await") without a word before this timer fired.
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(expired()), ms)
  })
  try {
    return await Promise.race([work, deadline])
  } finally {
    clearTimeout(timer)
  }
}

let typescriptLoader: Promise<void> | undefined

/** Import a module's default export; `.ts` modules are loaded through tsx (an optional package). */
export async function importDefault(path: string, { timeoutMs = DEFAULT_LOAD_TIMEOUT_MS }: ImportOptions = {}): Promise<unknown> {
  const absolute = resolve(path)
  let info: Stats
  try {
    await access(absolute, constants.R_OK)
    info = await stat(absolute)
  } catch (error) {
    throw unreadable(path, error)
  }
  if (!info.isFile()) throw notRegular(path, info)
  if (['.ts', '.mts', '.cts'].includes(extensionOf(absolute))) {
    typescriptLoader ??= loadTsx(`${path}, a TypeScript module,`).then(({ register }) => {
      register()
    })
    try {
      await typescriptLoader
    } catch (error) {
      typescriptLoader = undefined
      if (error instanceof MissingPackageError) throw new SourceError(error.message)
      throw error
    }
  }
  let module: { default?: unknown }
  try {
    const loading = import(pathToFileURL(absolute).href) as Promise<{ default?: unknown }>
    module = await within(loading, timeoutMs, () => new SourceError(`${path} did not finish loading within ${timeoutMs} ms (options.server.loadTimeout)`))
  } catch (error) {
    if (error instanceof SourceError) throw error
    throw new SourceError(`${path} cannot be loaded: ${oneLine((error as Error).message)}`)
  }
  // A module compiled to CommonJS (`exports.default = …`, `__esModule` set) arrives wrapped once more.
  const exported = module.default as { __esModule?: unknown; default?: unknown } | undefined
  const value = exported !== null && typeof exported === 'object' && exported.__esModule === true && 'default' in exported ? exported.default : exported
  if (value === undefined) throw new SourceError(`${path} has no default export`)
  return value
}
