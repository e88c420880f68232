// Mapping sources (http.md §8, `MAPPINGS`): a module whose default export holds the mappings, one
// document file, or a directory scanned recursively in lexicographic path order. Every mapping
// registers by its `$id`; the same `$id` from two files fails, naming both.
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { MappingDocument } from '../engine/index.js'
import { packageInfo } from './package.js'
import { DOCUMENT_EXTENSIONS, MODULE_EXTENSIONS, SourceError, extensionOf, importDefault, readDocumentFile } from './files.js'

/** A mapping ready to register, with where it came from (for messages). */
export interface MappingEntry {
  readonly id: string
  readonly document: MappingDocument
  readonly source: string
}

/** What `buildServer` and the plugin accept as `mappings`. */
export type MappingsInput =
  | readonly MappingEntry[]
  | readonly MappingDocument[]
  | Readonly<Record<string, MappingDocument>>
  | { readonly mappings: Readonly<Record<string, MappingDocument>> | readonly MappingDocument[] }

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** The mappings one document carries: the members of a compound document, or the document itself. */
function mappingsOf(document: unknown, source: string): MappingEntry[] {
  if (!isPlainObject(document)) throw new SourceError(`not a mapping document: ${source}`)
  const members = isPlainObject(document.mappings) ? Object.values(document.mappings) : [document]
  return members.map((member) => {
    if (!isPlainObject(member) || typeof member.$id !== 'string' || member.$id === '') {
      throw new SourceError(`mapping without $id in ${source}`)
    }
    return { id: member.$id, document: member as MappingDocument, source }
  })
}

/** Join entries, refusing a `$id` that two sources both define. */
function collect(entries: readonly MappingEntry[]): MappingEntry[] {
  const seen = new Map<string, string>()
  for (const entry of entries) {
    const first = seen.get(entry.id)
    if (first !== undefined) {
      throw new SourceError(`duplicate mapping $id "${entry.id}" in ${entry.source} (already registered from ${first})`)
    }
    seen.set(entry.id, entry.source)
  }
  return [...entries]
}

/** Normalize the programmatic forms of `mappings` into entries. */
export function mappingEntries(input: MappingsInput | undefined, source = 'options.mappings'): MappingEntry[] {
  if (input === undefined) return []
  if (Array.isArray(input)) {
    return collect(
      input.flatMap((item: unknown) =>
        isPlainObject(item) && 'document' in item && 'id' in item && 'source' in item ? [item as unknown as MappingEntry] : mappingsOf(item, source),
      ),
    )
  }
  const record = isPlainObject((input as { mappings?: unknown }).mappings) || Array.isArray((input as { mappings?: unknown }).mappings)
    ? (input as { mappings: unknown }).mappings
    : input
  const values = Array.isArray(record) ? record : Object.values(record as Record<string, unknown>)
  return collect(values.flatMap((value) => mappingsOf(value, source)))
}

async function walk(directory: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) found.push(...(await walk(path)))
    else found.push(path)
  }
  return found
}

export interface LoadOptions {
  /** Receives one line per skipped file. */
  warn?: (message: string) => void
}

/**
 * Load mappings from a module, a document file or a directory. Unparseable document files and
 * duplicate ids fail; files that are not mapping documents are skipped with a warning.
 */
export async function loadMappings(path: string, { warn = () => {} }: LoadOptions = {}): Promise<MappingEntry[]> {
  let info
  try {
    info = await stat(path)
  } catch {
    throw new SourceError(`MAPPINGS path does not exist: ${path}`)
  }
  if (info.isDirectory()) {
    const entries: MappingEntry[] = []
    for (const file of (await walk(path)).sort()) {
      if (!DOCUMENT_EXTENSIONS.has(extensionOf(file))) {
        warn(`ignoring non-document file ${file}`)
        continue
      }
      const document = await readDocumentFile(file)
      if (!isPlainObject(document)) {
        warn(`ignoring non-document file ${file}`)
        continue
      }
      entries.push(...mappingsOf(document, file))
    }
    return collect(entries)
  }
  const extension = extensionOf(path)
  if (DOCUMENT_EXTENSIONS.has(extension)) return collect(mappingsOf(await readDocumentFile(path), path))
  if (MODULE_EXTENSIONS.has(extension)) return mappingEntries((await importDefault(path)) as MappingsInput, path)
  throw new SourceError(`MAPPINGS must be a module (.js/.ts), a document file (.json/.yaml/.yml) or a directory: ${path}`)
}

/** The bundled example mappings (`mappings/` at the package root). */
export function bundledMappingsPath(): string {
  return join(packageInfo().root, 'mappings')
}
