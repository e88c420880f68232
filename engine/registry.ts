// The registry (language.md §5): named mappings by `$id`, `$extend` flattened at registration, and
// the views an evaluation resolves `$ref` and name strings against. Ids live in Maps, so no id
// (`__proto__`, `constructor`) can ever reach a prototype.
import type { DocumentCompiler, Plan, RegistryView } from './context.js'
import type { MappingDocument } from './types.js'
import { isObject, truthy } from './values.js'

export interface RegisteredMapping {
  readonly document: Readonly<MappingDocument>
  readonly plan: Plan
}

function ownRecord<T>(entries: Iterable<readonly [string, T]>): Readonly<Record<string, T>> {
  const record: Record<string, T> = {}
  for (const [key, value] of entries) {
    Object.defineProperty(record, key, { value, enumerable: true, writable: false, configurable: false })
  }
  return Object.freeze(record)
}

/** MERGE (§5.3): lower's pairing keys then upper's, each kept at its last position, upper winning. */
function merge(lower: Record<string, unknown>, upper: Record<string, unknown>): Record<string, unknown> {
  const lowerMap = isObject(lower.mapping) ? lower.mapping : {}
  const upperMap = isObject(upper.mapping) ? upper.mapping : {}
  const order = [...Object.keys(lowerMap), ...Object.keys(upperMap)]
  const merged: Record<string, unknown> = {}
  order.forEach((key, position) => {
    if (order.lastIndexOf(key) !== position) return
    const value = Object.hasOwn(upperMap, key) ? upperMap[key] : lowerMap[key]
    Object.defineProperty(merged, key, { value, enumerable: true, writable: true, configurable: true })
  })
  return { mapping: merged }
}

/**
 * FLATTEN (§5.3, decisions 7 and 8): resolve `$extend` against `lookup`, every ancestor flattened
 * first. Unknown ancestors, cycles, empty lists and ancestors without pairings throw.
 */
export function flatten(
  descriptor: Record<string, unknown>,
  lookup: (id: string) => unknown,
  trail: readonly string[] = [],
  memo: Map<object, Record<string, unknown>> = new Map()
): Record<string, unknown> {
  if (!truthy(descriptor.$extend)) return descriptor
  const done = memo.get(descriptor)
  if (done !== undefined) return done
  const self = typeof descriptor.$id === 'string' ? descriptor.$id : '(anonymous mapping)'
  const extend = descriptor.$extend
  const ids = typeof extend === 'string' ? [extend] : extend
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && id !== '')) {
    throw new Error(`$extend of "${self}" must be a mapping id or a non-empty list of mapping ids`)
  }
  const ancestors = (ids as string[]).map((id) => {
    if (trail.includes(id) || id === self) {
      throw new Error(`$extend cycle: ${[...trail, self, id].join(' → ')}`)
    }
    const found = lookup(id)
    if (!isObject(found)) throw new Error(`Unknown mapping "${id}"`)
    const flat = flatten(found, lookup, [...trail, self], memo)
    if (!truthy(flat.mapping)) throw new Error(`Mapping "${id}", an ancestor of "${self}", has no pairings`)
    return flat
  })
  const accumulated = ancestors.slice(1).reduce(merge, ancestors[0]!)
  const result: Record<string, unknown> = {}
  if (descriptor.$id !== undefined) result.$id = descriptor.$id
  const description = descriptor.description ?? [...ancestors].reverse().find((a) => a.description !== undefined)?.description
  if (description !== undefined) result.description = description
  result.mapping = merge(accumulated, descriptor).mapping
  memo.set(descriptor, result)
  return result
}

/**
 * Flatten one registration batch: every member is visible to every other, then to `base`. Returns
 * the flattened members by `$id`, in batch order (members without `$id` are not registered).
 */
export function flattenBatch(
  members: readonly Record<string, unknown>[],
  base: (id: string) => unknown
): Map<string, Record<string, unknown>> {
  const raw = new Map<string, Record<string, unknown>>()
  for (const member of members) {
    if (truthy(member.$id) && typeof member.$id === 'string') raw.set(member.$id, member)
  }
  const lookup = (id: string): unknown => (raw.has(id) ? raw.get(id) : base(id))
  const memo = new Map<object, Record<string, unknown>>()
  const flattened = new Map<string, Record<string, unknown>>()
  for (const [id, member] of raw) flattened.set(id, flatten(member, lookup, [], memo))
  return flattened
}

/** An engine instance's registry: flattened, compiled documents by `$id`. */
export class MappingRegistry implements RegistryView {
  private readonly entries = new Map<string, RegisteredMapping>()
  private cachedView: Readonly<Record<string, Readonly<MappingDocument>>> | undefined
  /** Bumped on every registration, so plans that captured ancestors can tell they are stale. */
  version = 0
  shadowsPointers = false

  constructor(private readonly compiler: DocumentCompiler) {}

  lookup(id: string): Plan | undefined {
    return this.entries.get(id)?.plan
  }

  document(id: string): Readonly<MappingDocument> | undefined {
    return this.entries.get(id)?.document
  }

  has(id: string): boolean {
    return this.entries.has(id)
  }

  ids(): string[] {
    return [...this.entries.keys()]
  }

  /** Register a batch (replacing ids that exist); members are already frozen copies. */
  register(members: readonly Record<string, unknown>[]): string[] {
    const flattened = flattenBatch(members, (id) => this.entries.get(id)?.document)
    for (const [id, document] of flattened) {
      this.compiler.locate(document, id)
      const frozen = Object.isFrozen(document) ? document : Object.freeze(document)
      this.entries.set(id, { document: frozen as MappingDocument, plan: this.compiler.plan(frozen) })
    }
    this.version++
    this.cachedView = undefined
    this.shadowsPointers = [...this.entries.keys()].some((id) => id.startsWith('/'))
    return [...flattened.keys()]
  }

  view(): Readonly<Record<string, Readonly<MappingDocument>>> {
    return (this.cachedView ??= ownRecord([...this.entries].map(([id, entry]) => [id, entry.document] as const)))
  }
}

/** The members of a compound document shadowing an instance's registry, for one evaluation. */
export class LayeredRegistry implements RegistryView {
  private cachedView: Readonly<Record<string, Readonly<MappingDocument>>> | undefined

  private readonly localShadows: boolean

  constructor(
    private readonly local: ReadonlyMap<string, RegisteredMapping>,
    private readonly base: RegistryView
  ) {
    this.localShadows = [...local.keys()].some((id) => id.startsWith('/'))
  }

  get shadowsPointers(): boolean {
    return this.localShadows || this.base.shadowsPointers
  }

  lookup(id: string): Plan | undefined {
    return this.local.get(id)?.plan ?? this.base.lookup(id)
  }

  view(): Readonly<Record<string, Readonly<MappingDocument>>> {
    return (this.cachedView ??= ownRecord([
      ...Object.entries(this.base.view()).filter(([id]) => !this.local.has(id)),
      ...[...this.local].map(([id, entry]) => [id, entry.document] as const),
    ]))
  }
}

/** Named mappings used as given (the `map` and `get` conformance levels), compiled on first use. */
export class DocumentRegistry implements RegistryView {
  readonly shadowsPointers: boolean

  constructor(
    private readonly mappings: Readonly<Record<string, unknown>>,
    private readonly compiler: DocumentCompiler
  ) {
    this.shadowsPointers = Object.keys(mappings).some((id) => id.startsWith('/'))
  }

  lookup(id: string): Plan | undefined {
    if (!Object.hasOwn(this.mappings, id)) return undefined
    return this.compiler.plan(this.mappings[id])
  }

  view(): Readonly<Record<string, Readonly<MappingDocument>>> {
    return this.mappings as Readonly<Record<string, Readonly<MappingDocument>>>
  }
}

export const EMPTY_REGISTRY: RegistryView = {
  lookup: () => undefined,
  shadowsPointers: false,
  view: () => Object.freeze({}),
}
