// The registry (language.md §5): named mappings by `$id` (flattened at registration by `$extend`'s
// own module, keywords/registry/ancestry.ts), and the views an evaluation resolves `$ref` and name
// strings against. Ids live in Maps, so no id (`__proto__`, `constructor`) can ever reach a prototype.
import type { DocumentCompiler, Plan, RegistryView } from './context.js'
import { flatteningBatch } from './keywords/registry/ancestry.js'
import type { MappingDocument } from './types.js'
import { complete, type Steps } from './steps.js'

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
    return complete(this.registering(members))
  }

  /**
   * `register` step by step (engine/steps.ts): the batch is flattened and compiled first, then
   * registered at once, in one step, so that nothing evaluated between the steps sees half of it.
   */
  * registering(members: readonly Record<string, unknown>[]): Steps<string[]> {
    const flattened = yield * flatteningBatch(members, (id) => this.entries.get(id)?.document)
    const compiled: Array<[string, RegisteredMapping]> = []
    for (const [id, document] of flattened) {
      const frozen = Object.isFrozen(document) ? document : Object.freeze(document)
      compiled.push([id, { document: frozen as MappingDocument, plan: yield * this.compiler.compiling(frozen, id) }])
    }
    for (const [id, entry] of compiled) this.entries.set(id, entry)
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
