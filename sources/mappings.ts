// Mapping sources (http.md §8, `MAPPINGS`): a module whose default export holds the mappings, one
// document file, or a directory scanned recursively in lexicographic path order. Every mapping
// registers by its `$id`; the same `$id` from two files fails, naming both.
import { readdir, realpath, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { isObject } from '../engine/index.js'
import { distinctEntries, documentEntries, mappingEntries as engineEntries, type MappingEntry, type MappingsInput } from '../engine/mappings-input.js'
import { packageInfo } from '../support/package.js'
import { DOCUMENT_EXTENSIONS, MODULE_EXTENSIONS, SourceError, extensionOf, importDefault, readDocumentFile, specialKind, unreadable, type FileType } from './files.js'

// The shapes are the engine's (engine/mappings-input.ts), so `new Mapper({ mappings })` takes what
// the service takes; the service names its refusals SourceError, as every mapping source's.
export type { MappingEntry, MappingsInput, MappingsMember } from '../engine/mappings-input.js'

const sourceError = (message: string): SourceError => new SourceError(message)

/** The mappings one document carries: the members of a compound document, or the document itself. */
const mappingsOf = (document: unknown, source: string): MappingEntry[] => documentEntries(document, source, sourceError)

/** Join entries, refusing a `$id` that two sources both define. */
const collect = (entries: readonly MappingEntry[]): MappingEntry[] => distinctEntries(entries, sourceError)

/**
 * Normalize the programmatic forms of `mappings` into entries (MappingsInput): members, documents
 * and `loadMappings` entries alike, in an array, in an object keyed by anything (only `$id`
 * counts), wrapped as `{ mappings }`, or one alone; refused as a SourceError.
 */
export function mappingEntries(input: MappingsInput | undefined, source = 'options.mappings'): MappingEntry[] {
  return engineEntries(input, source, sourceError)
}

/**
 * Every regular file under a directory. Hidden entries are skipped (a Kubernetes ConfigMap volume
 * holds each file twice: as a link at the top and inside a hidden `..<timestamp>` directory); links
 * are followed, each real directory scanned once; anything else that is not a regular file (a FIFO,
 * a socket, a device: reading one could block startup forever) is skipped with a warning.
 */
async function walk(directory: string, warn: (message: string) => void, scanned: Set<string>): Promise<string[]> {
  const real = await realpath(directory)
  if (scanned.has(real)) return []
  scanned.add(real)
  const found: string[] = []
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name)
    if (entry.name.startsWith('.')) {
      warn(`ignoring hidden ${entry.isDirectory() ? 'directory' : 'file'} ${path}`)
      continue
    }
    let target: FileType = entry
    if (entry.isSymbolicLink()) {
      try {
        target = await stat(path)
      } catch {
        warn(`ignoring broken link ${path}`)
        continue
      }
    }
    if (target.isDirectory()) for (const inner of await walk(path, warn, scanned)) found.push(inner)
    else if (target.isFile()) found.push(path)
    else warn(`ignoring ${specialKind(target)} ${path}: not a regular file`)
  }
  return found
}

/** The keys of which one at the top of a document makes it a mapping document. */
const MAPPING_KEYS = ['mapping', 'mappings', '$id', '$extend'] as const

/**
 * Whether a parsed document file holds mappings: an object with `mapping`, `mappings`, `$id` or
 * `$extend` at its top. Anything else under a directory (an input fixture, a list, an empty file)
 * is not one and is skipped: the server's MAPPINGS scan and the CLI's `validate` and `test` of a
 * directory decide by this.
 */
export function holdsMappings(document: unknown): document is Record<string, unknown> {
  return isObject(document) && MAPPING_KEYS.some((key) => Object.hasOwn(document, key))
}

/** The line naming a document file skipped for not holding mappings. */
export const notMappings = (file: string): string => `ignoring ${file}: not a mapping document (none of ${MAPPING_KEYS.join(', ')} at its top)`

/**
 * The document files (.json, .yaml, .yml) under a directory, in lexicographic path order; every
 * other entry skipped (hidden, not a document, not a regular file, a broken link) is named to `warn`.
 */
export async function documentFilesUnder(directory: string, warn: (message: string) => void): Promise<string[]> {
  const files = (await walk(directory, warn, new Set())).sort()
  return files.filter((file) => {
    if (DOCUMENT_EXTENSIONS.has(extensionOf(file))) return true
    warn(`ignoring non-document file ${file}`)
    return false
  })
}

interface LoadOptions {
  /** Receives one line per skipped file. */
  warn?: (message: string) => void
  /** Milliseconds a mapping module may take to load (default 10000). */
  timeoutMs?: number
  /** The most bytes of document files the set may hold (checked before any is read); none by default. */
  maxBytes?: number
}

/** Refuse a set of document files larger than `maxBytes` in total, before reading any of them. */
async function checkSize(files: readonly string[], maxBytes: number | undefined, path: string): Promise<void> {
  if (maxBytes === undefined) return
  let total = 0
  for (const file of files) total += (await stat(file)).size
  if (total > maxBytes) throw new SourceError(`${path} holds ${total} bytes of mapping documents, over reload.maxBytes (${maxBytes})`)
}

/**
 * Load mappings from a module, a document file or a directory. Unparseable document files and
 * duplicate ids fail; in a directory, files that are not mapping documents (`holdsMappings`), hidden
 * entries, broken links and entries that are not regular files are skipped with a warning naming them.
 */
export async function loadMappings(path: string, { warn = () => {}, timeoutMs, maxBytes }: LoadOptions = {}): Promise<MappingEntry[]> {
  let info
  try {
    info = await stat(path)
  } catch (error) {
    throw unreadable(path, error)
  }
  if (info.isDirectory()) {
    const entries: MappingEntry[] = []
    const documents = await documentFilesUnder(path, warn)
    await checkSize(documents, maxBytes, path)
    for (const file of documents) {
      const document = await readDocumentFile(file)
      if (!holdsMappings(document)) {
        warn(notMappings(file))
        continue
      }
      for (const entry of mappingsOf(document, file)) entries.push(entry)
    }
    return collect(entries)
  }
  const extension = extensionOf(path)
  if (DOCUMENT_EXTENSIONS.has(extension)) {
    await checkSize([path], maxBytes, path)
    return collect(mappingsOf(await readDocumentFile(path), path))
  }
  if (MODULE_EXTENSIONS.has(extension)) return mappingEntries((await importDefault(path, { timeoutMs })) as MappingsInput, path)
  throw new SourceError(`${path} must be a module (.js/.ts), a document file (.json/.yaml/.yml) or a directory`)
}

/**
 * The real directories a MAPPINGS path reads: a directory and every directory `loadMappings` walks
 * into (hidden ones never), or the directory holding a document or module file.
 */
export async function mappingDirectories(path: string): Promise<string[]> {
  const info = await stat(path)
  if (!info.isDirectory()) return [await realpath(dirname(path))]
  const scanned = new Set<string>()
  await walk(path, () => {}, scanned)
  return [...scanned]
}

/** The bundled example mappings (`mappings/` at the package root). */
export function bundledMappingsPath(): string {
  return join(packageInfo().root, 'mappings')
}
