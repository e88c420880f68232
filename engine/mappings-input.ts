// The one shape of `mappings` (docs/embedding.md "mappings: one shape"): what `new Mapper({ mappings })`,
// the service's plugin, `buildServer` and a Reloader's source all accept, normalised into entries
// here, in the lowest layer, so the engine and the service cannot drift apart. Each caller names
// the error it throws: the engine a DocumentError, the service's sources a SourceError.
import { DocumentError } from './errors.js'
import type { MappingDocument } from './types.js'
import { idOf } from './document-id.js'
import { isObject } from './values.js'

/** A mapping ready to register, with where it came from (for messages): what `loadMappings` returns. */
export interface MappingEntry {
  readonly id: string
  readonly document: MappingDocument
  readonly source: string
}

/**
 * One member of `mappings`: a mapping document (single or compound, as a document file holds it),
 * or an entry from `loadMappings`.
 */
export type MappingsMember = MappingDocument | MappingEntry

/**
 * What `new Mapper({ mappings })`, `buildServer`, the plugin and a Reloader's source accept as
 * `mappings`: members (documents and `loadMappings` entries, mixed) in an array or an object keyed
 * by anything, the same wrapped as `{ mappings }`, or one member alone.
 */
export type MappingsInput =
  | readonly MappingsMember[]
  | Readonly<Record<string, MappingsMember>>
  | { readonly mappings: Readonly<Record<string, MappingsMember>> | readonly MappingsMember[] }
  | MappingsMember

/** Makes the error a caller throws for a shape it refuses. */
export type ShapeError = (message: string) => Error

const documentError: ShapeError = (message) => new DocumentError(message)

/** The mappings one document carries: the members of a compound document, or the document itself. */
export function documentEntries(document: unknown, source: string, refuse: ShapeError = documentError): MappingEntry[] {
  if (!isObject(document)) throw refuse(`not a mapping document: ${source}`)
  const members = isObject(document.mappings) ? Object.values(document.mappings) : [document]
  return members.map((member) => {
    const id = idOf(member)
    if (id === undefined) throw refuse(`mapping without $id in ${source}`)
    return { id, document: member as MappingDocument, source }
  })
}

/** Join entries, refusing a `$id` that two sources both define. */
export function distinctEntries(entries: readonly MappingEntry[], refuse: ShapeError = documentError): MappingEntry[] {
  const seen = new Map<string, string>()
  for (const entry of entries) {
    const first = seen.get(entry.id)
    if (first !== undefined) {
      throw refuse(`duplicate mapping $id "${entry.id}" in ${entry.source} (already registered from ${first})`)
    }
    seen.set(entry.id, entry.source)
  }
  return [...entries]
}

/** Whether a member is an entry `loadMappings` returned rather than a document. */
export const isMappingEntry = (item: unknown): item is MappingEntry =>
  isObject(item) && typeof item.id === 'string' && isObject(item.document) && typeof item.source === 'string'

/**
 * Normalise the forms of `mappings` (MappingsInput) into entries: members, documents and
 * `loadMappings` entries alike, in an array, in an object keyed by anything (only `$id` counts),
 * wrapped as `{ mappings }`, or one alone. A compound document's members register each, as a
 * document file's do. A `$id` given twice, whatever form each came in, is refused naming both
 * sources. Runs once per registration (at construction, at a reload), never per evaluation.
 */
export function mappingEntries(input: unknown, source = 'options.mappings', refuse: ShapeError = documentError): MappingEntry[] {
  if (input === undefined) return []
  const from = (members: readonly unknown[]): MappingEntry[] =>
    distinctEntries(
      members.flatMap((member) => (isMappingEntry(member) ? [member] : documentEntries(member, source, refuse))),
      refuse
    )
  if (Array.isArray(input)) return from(input)
  if (!isObject(input)) {
    throw refuse(`${source} must hold mapping documents or loadMappings() entries: an array, an object keyed by $id, { mappings } or one document`)
  }
  if (isMappingEntry(input)) return [input]
  const members = input.mappings
  if (Array.isArray(members)) return from(members)
  // `{ mappings: { … } }` holding entries is the wrapped form; documents there are a compound document's members.
  if (isObject(members) && Object.values(members).some(isMappingEntry)) return from(Object.values(members))
  // One document, single or compound, registers what it carries (as a document file does). A
  // `mappings` that is itself a document (it has a string `$id`, which a compound document's
  // members, keyed by name, never do) is a member keyed "mappings" in an object of members.
  const compound = isObject(members) && typeof members.$id !== 'string'
  if (compound || typeof input.$id === 'string') return distinctEntries(documentEntries(input, source, refuse), refuse)
  return from(Object.values(input))
}
