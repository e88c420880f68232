// Managed mappings (README "Managed mappings"): mapping documents written over HTTP (PUT and
// DELETE /mappings/{id}) into a mapping store (./store/), and served beside the files of MAPPINGS
// by every replica that shares the store. A write is decided whole under two locks, the served
// set's (no reload or other change meanwhile) and the store's (no other replica's write
// meanwhile), against the store's state as it is under them: its preconditions (If-Match,
// If-None-Match), the ids it may not take (the files', another stored document's), the store's
// bound, then the set it makes, admitted as a reload admits one (every mapping validated, every
// example run): a write that would break a mapping which uses what it changes is refused naming
// them all, and nothing is stored. Only then is the version written, and the admitted set served:
// a request sees the set before the write or after it, never a mix. Other replicas hear of it from
// the store (LISTEN/NOTIFY, a periodic resync) and serve the same set; one whose admission fails
// keeps what it serves, says so in its log and its metrics, and tries again at the next change.
import type { FastifyBaseLogger } from 'fastify'
import { entryOf, isObject, MAX_DOCUMENT_DEPTH } from '../engine/index.js'
import { documentEntries, type MappingEntry } from '../engine/mappings-input.js'
import { Slice } from '../engine/slices.js'
import type { StoreConfig } from '../config/resolve.js'
import type { MappingStoreSeries, MappingWriteResult } from '../observability/metrics.js'
import { BadRequest, InvalidMappingDocument, MappingConflict, MappingInUse, NotFound, PreconditionFailed, ReadOnlyMapping, StoreFull, StoreUnavailable } from './errors.js'
import { parseJsonText } from './json-text.js'
import type { AdmissionFailure, ServedSet, EngineService, StoredSet } from './mapping-service.js'
import { DirectoryStore, sha256 } from './store/directory.js'
import { StoreUnavailableError, type MappingStore, type StoreLog, type StoreTransaction, type StoredDocument, type VersionInfo } from './store/types.js'

/** A document ready to be stored under an id: `$id` filled in, and every id it defines (a compound document's members). */
export interface PreparedDocument {
  readonly id: string
  readonly document: Readonly<Record<string, unknown>>
  /** The document's JSON text, as it is stored. */
  readonly text: string
  readonly ids: readonly string[]
}

/** The conditions of a write, as the request's headers give them. */
export interface WriteConditions {
  readonly ifMatch?: string | undefined
  readonly ifNoneMatch?: string | undefined
  /** The `sub` of the caller's token; null with auth off. */
  readonly subject: string | null
}

/** The entity tag of a stored version: its number, quoted (a strong tag). */
export const entityTag = (version: number): string => `"${version}"`

/**
 * Whether an If-Match / If-None-Match header value holds `version`'s tag: `*` holds any version,
 * a list of tags one of them. If-Match compares strongly (a weak tag never matches), If-None-Match weakly (RFC 9110 §13.1).
 */
export function matches(header: string, version: number, strong: boolean): boolean {
  if (header.trim() === '*') return true
  const tag = entityTag(version)
  return header.split(',').some((item) => {
    // A bare version number (`If-Match: 3`) is taken as its tag: a client that forgot the quotes means it.
    const trimmed = /^\s*\d+\s*$/.test(item) ? `"${item.trim()}"` : item.trim()
    if (trimmed.startsWith('W/')) return !strong && trimmed.slice(2) === tag
    return trimmed === tag
  })
}

/** Refuse (412) a write whose conditions the current version (undefined: none) does not meet. */
function checkConditions(current: number | undefined, { ifMatch, ifNoneMatch }: WriteConditions): void {
  if (ifMatch !== undefined && (current === undefined || !matches(ifMatch, current, true))) {
    throw new PreconditionFailed(current === undefined ? `If-Match: ${ifMatch}, but no version is stored` : `If-Match: ${ifMatch}, but the stored version is ${entityTag(current)}`)
  }
  if (ifNoneMatch !== undefined && current !== undefined && matches(ifNoneMatch, current, false)) {
    throw new PreconditionFailed(`If-None-Match: ${ifNoneMatch}, and version ${entityTag(current)} is stored`)
  }
}

const storeSource = (id: string): string => `the mapping store (${id})`

/**
 * A document as it is stored under `id`: a single document's `$id` filled in when it has none (and
 * refused when it names another), a compound document as it is, stored under its entry's `$id` (its
 * last member's), which must be `id`.
 */
export function prepareDocument(id: string, document: Record<string, unknown>): PreparedDocument {
  const prepared = preparedForm(id, document)
  // A database's text cannot hold NUL, nor a file name: no stored id may carry one.
  const unstorable = prepared.ids.find((member) => member.includes('\u0000'))
  if (unstorable !== undefined) throw new BadRequest(`The $id ${JSON.stringify(unstorable)} holds a NUL character, which no mapping store can keep`)
  return prepared
}

function preparedForm(id: string, document: Record<string, unknown>): PreparedDocument {
  const refuse = (message: string): Error => new BadRequest(message)
  if (isObject(document.mappings)) {
    const entries = documentEntries(document, storeSource(id), refuse)
    const entry = entryOf(entries)
    if (entry === undefined) throw new BadRequest('A compound document needs at least one member')
    if (entry.id !== id) throw new BadRequest(`A compound document is stored under its entry's $id (its last member's): "${entry.id}", not "${id}"`)
    return { id, document, text: JSON.stringify(document), ids: entries.map((member) => member.id) }
  }
  if (document.$id !== undefined && document.$id !== id) throw new BadRequest(`The document's $id is ${JSON.stringify(document.$id)}, not "${id}" (the id it is written to)`)
  const stored = document.$id === undefined ? { $id: id, ...document } : document
  return { id, document: stored, text: JSON.stringify(stored), ids: [id] }
}

/** Make the store `url` names (postgres: needs the package pg, loaded only here). */
export async function openStore(config: StoreConfig, log: StoreLog): Promise<MappingStore> {
  const url = new URL(config.url)
  if (url.protocol === 'file:') return new DirectoryStore(url, config)
  const { PostgresStore } = await import('./store/postgres.js')
  return new PostgresStore(config.url, { keepVersions: config.keepVersions, resyncMs: config.resyncMs, log })
}

/** A store error as the answer to a write: unreachable is 503 StoreUnavailable; the service's own refusals as they are. */
function answerOf(error: unknown): unknown {
  return error instanceof StoreUnavailableError ? new StoreUnavailable(error.message, { cause: error }) : error
}

/** The result a write's metrics count, by what it answered. */
function resultOf(error: unknown): MappingWriteResult {
  if (error instanceof InvalidMappingDocument || error instanceof BadRequest) return 'invalid'
  if (error instanceof PreconditionFailed) return 'precondition_failed'
  if (error instanceof NotFound) return 'not_found'
  if (error instanceof StoreUnavailable || error instanceof StoreUnavailableError) return 'unavailable'
  if (error instanceof MappingInUse || error instanceof ReadOnlyMapping || error instanceof MappingConflict || error instanceof StoreFull) return 'conflict'
  return 'failed'
}

/** Whether a document's `$extend` (anywhere in it) names one of `ids`. */
function extendsAny(document: unknown, ids: ReadonlySet<string>, depth = 0): boolean {
  if (depth > MAX_DOCUMENT_DEPTH || document === null || typeof document !== 'object') return false
  if (Array.isArray(document)) return document.some((item) => extendsAny(item, ids, depth + 1))
  const record = document as Record<string, unknown>
  const extend = Object.hasOwn(record, '$extend') ? record.$extend : undefined
  if (typeof extend === 'string' && ids.has(extend)) return true
  if (Array.isArray(extend) && extend.some((name) => typeof name === 'string' && ids.has(name))) return true
  return Object.values(record).some((value) => extendsAny(value, ids, depth + 1))
}

/** 409 MappingInUse: `change` would break `dependents`. */
function inUse(change: string, dependents: readonly string[], reason: string): MappingInUse {
  const named = dependents.length === 0 ? 'the set it leaves' : `${dependents.length === 1 ? 'the mapping' : `${dependents.length} mappings`} that use${dependents.length === 1 ? 's' : ''} it: ${dependents.map((id) => `"${id}"`).join(', ')}`
  return new MappingInUse(`${change} would break ${named} (${reason})`, dependents)
}

/** What a write's change decided: its answer, the set it makes (admitted), and what is logged and counted of it. */
interface Written<T> {
  readonly result: T
  readonly service: EngineService
  readonly stored: StoredSet
  readonly documents: ReadonlyMap<string, StoredDocument>
  readonly outcome: MappingWriteResult
  readonly version: number
}

const readOnly = (id: string): InstanceType<typeof ReadOnlyMapping> =>
  new ReadOnlyMapping(`"${id}" is defined by the files this service reads (MAPPINGS): it changes with them, not over HTTP`)

export class ManagedMappings {
  readonly #store: MappingStore
  readonly #config: StoreConfig
  readonly #log: FastifyBaseLogger
  readonly #series: MappingStoreSeries | undefined
  #servedSet: ServedSet | undefined
  /** The stored documents of the served set, by id. */
  #documents: ReadonlyMap<string, StoredDocument> = new Map()
  /** Each stored document's entries, by id, for the version parsed: a resync parses only what changed. */
  #parsed = new Map<string, { readonly digest: string; readonly entries: readonly MappingEntry[] }>()
  /** A revision another replica wrote that this one could not serve: tried again only at the next. */
  #refused = -1

  private constructor(store: MappingStore, config: StoreConfig, log: FastifyBaseLogger, series: MappingStoreSeries | undefined) {
    this.#store = store
    this.#config = config
    this.#log = log
    this.#series = series
  }

  /** Where the store is, printable. */
  get description(): string {
    return this.#store.description
  }

  /**
   * The store of `config` opened (connected, its schema made or migrated) and read: `initial` is
   * what the first served set holds of it. A store that cannot be reached fails the start.
   */
  static async open(config: StoreConfig, log: FastifyBaseLogger, series: MappingStoreSeries | undefined): Promise<{ managed: ManagedMappings; initial: StoredSet }> {
    const storeLog: StoreLog = { info: (message) => log.info(message), warn: (message) => log.warn(message) }
    const store = await openStore(config, storeLog)
    const managed = new ManagedMappings(store, config, log, series)
    try {
      await store.open()
      const state = await store.read()
      managed.#documents = state.documents
      series?.serving(state.revision)
      return { managed, initial: await managed.#storedSet(state.revision, state.documents) }
    } catch (error) {
      await store.close().catch(() => {})
      throw error
    }
  }

  /** Serve the store's changes through `served` from now on (another replica's writes, resyncs). */
  serve(served: ServedSet): void {
    this.#servedSet = served
    this.#store.watch(() => {
      this.resync().catch((error: unknown) => this.#log.error(`managed mappings: reading the mapping store failed: ${(error as Error).message}`))
    })
  }

  get #served(): ServedSet {
    if (this.#servedSet === undefined) throw new Error('the managed mappings serve no set yet')
    return this.#servedSet
  }

  /** The version of `id` served now, when the store holds it (and no file takes its id). */
  current(id: string): StoredDocument | undefined {
    const stored = this.#documents.get(id)
    return stored === undefined || this.#fileTaken([id]) !== undefined ? undefined : stored
  }

  /** The entries of stored documents, as a served set holds them (each parsed once per version, in slices). */
  async #storedSet(revision: number, documents: ReadonlyMap<string, StoredDocument>): Promise<StoredSet> {
    const slice = new Slice()
    const entries: MappingEntry[] = []
    const parsed = new Map<string, { readonly digest: string; readonly entries: readonly MappingEntry[] }>()
    for (const [id, stored] of documents) {
      if (slice.due()) await slice.next()
      const known = this.#entriesOf(stored)
      parsed.set(id, known)
      for (const entry of known.entries) entries.push(entry)
    }
    this.#parsed = parsed
    return { revision, entries }
  }

  /** The entries a stored document registers, parsed once per version. */
  #entriesOf(stored: StoredDocument): { readonly digest: string; readonly entries: readonly MappingEntry[] } {
    const known = this.#parsed.get(stored.id)
    if (known !== undefined && known.digest === stored.digest) return known
    return { digest: stored.digest, entries: documentEntries(parseJsonText(stored.text), storeSource(stored.id)) }
  }

  /** The stored document (other than `except`) one of whose members is `id`. */
  #holderOf(id: string, documents: ReadonlyMap<string, StoredDocument>, except?: string): string | undefined {
    for (const [holder, stored] of documents) {
      if (holder !== except && this.#entriesOf(stored).entries.some((member) => member.id === id)) return holder
    }
    return undefined
  }

  /** Read the store and serve what changed since the served revision (a no-op when nothing did). */
  resync(): Promise<void> {
    const served = this.#served
    return served.exclusive(async () => {
      let state
      try {
        state = await this.#store.read()
      } catch (error) {
        this.#log.warn(`mapping store ${this.#store.description} could not be read; still serving revision ${served.stored.revision}: ${(error as Error).message}`)
        return
      }
      if (state.revision <= served.stored.revision || state.revision === this.#refused) return
      try {
        const stored = await this.#storedSet(state.revision, state.documents)
        const { service, failures } = await served.candidate(served.files, stored)
        if (service === undefined) throw failures[0]!.error
        served.install(service, served.files, stored)
        this.#documents = state.documents
        this.#series?.synced(true)
        this.#series?.serving(state.revision)
        this.#log.info({ revision: state.revision, mappings: Object.keys(service.mappings).length }, `managed mappings changed: serving revision ${state.revision} of the mapping store`)
      } catch (error) {
        this.#refused = state.revision
        this.#series?.synced(false)
        this.#log.error({ revision: state.revision }, `managed mappings: revision ${state.revision} of the mapping store cannot be served here, still serving revision ${served.stored.revision}: ${(error as Error).message}`)
      }
    })
  }

  /**
   * The set the store's documents would make, admitted: refused naming the mappings it breaks
   * (MappingInUse), or the written document's own failure (InvalidMappingDocument), when any.
   */
  async #admit(documents: ReadonlyMap<string, StoredDocument>, changed: readonly string[], written: PreparedDocument | undefined, change: string): Promise<{ service: EngineService; stored: StoredSet }> {
    const served = this.#served
    const stored = await this.#storedSet(served.stored.revision, documents)
    let outcome
    try {
      outcome = await served.candidate(served.files, stored)
    } catch (error) {
      throw await this.#unregistrable(stored, changed, written, change, error as Error)
    }
    const { service, failures } = outcome
    if (service !== undefined) return { service, stored }
    const own = failures.find((failure) => written?.ids.includes(failure.entry.id) === true)
    if (own !== undefined) throw this.#invalid(own)
    throw inUse(change, failures.map((failure) => failure.entry.id), failures[0]!.error.message)
  }

  /**
   * Why a set cannot even be registered: an `$extend` that no longer resolves, in the mappings
   * that extend a changed id (and those that extend them in turn). Those are dependents; the set
   * without them is admitted to find the others (a `$ref` or a name that no longer resolves).
   */
  async #unregistrable(stored: StoredSet, changed: readonly string[], written: PreparedDocument | undefined, change: string, error: Error): Promise<Error> {
    const served = this.#served
    const entries = [...served.files, ...stored.entries]
    const gone = new Set(changed)
    const extenders = new Set<MappingEntry>()
    for (let grew = true; grew;) {
      grew = false
      for (const entry of entries) {
        if (extenders.has(entry) || written?.ids.includes(entry.id) === true || !extendsAny(entry.document, gone)) continue
        extenders.add(entry)
        gone.add(entry.id)
        grew = true
      }
    }
    if (extenders.size === 0) return inUse(change, [], error.message)
    const dependents = [...extenders].map((entry) => entry.id)
    try {
      const keep = (entry: MappingEntry): boolean => !extenders.has(entry)
      const { failures } = await served.candidate(served.files.filter(keep), { revision: stored.revision, entries: stored.entries.filter(keep) })
      for (const failure of failures) if (written?.ids.includes(failure.entry.id) !== true) dependents.push(failure.entry.id)
    } catch {
      // Still not registrable: the extenders are what can be named.
    }
    return inUse(change, dependents, error.message)
  }

  /** The 422 of the written document failing as a member of the set (its report, or its failing example as one). */
  #invalid(failure: AdmissionFailure): InvalidMappingDocument {
    const report = failure.report ?? { valid: false, errors: [{ rule: 'EXAMPLE-1', message: failure.error.message, pointer: '/examples', descriptor: null }], warnings: [] }
    return new InvalidMappingDocument(report as never)
  }

  /** The ids the files define, and which one of them a document would take. */
  #fileTaken(ids: readonly string[]): string | undefined {
    const files = new Set(this.#served.files.map((entry) => entry.id))
    return ids.find((id) => files.has(id))
  }

  /** Run one write under both locks; count and log what it answered. */
  async #write<T>(operation: 'put' | 'delete', id: string, subject: string | null, change: (transaction: StoreTransaction) => Promise<Written<T>>): Promise<T> {
    const served = this.#served
    try {
      return await served.exclusive(async () => {
        const { result: written, revision } = await this.#store.write(change)
        served.install(written.service, served.files, { revision, entries: written.stored.entries })
        this.#documents = written.documents
        this.#series?.wrote(operation, written.outcome)
        this.#series?.serving(revision)
        this.#log.info({ mappingId: id, version: written.version, subject, operation, revision }, `managed mapping ${operation === 'put' ? 'written' : 'deleted'}: "${id}" version ${written.version}`)
        return written.result
      })
    } catch (error) {
      const answer = answerOf(error)
      this.#series?.wrote(operation, resultOf(answer))
      if (answer instanceof StoreUnavailable) this.#log.warn({ mappingId: id, operation }, `managed mapping ${operation} refused: ${(answer as Error).message}`)
      throw answer
    }
  }

  /** Store `prepared` as the next version of its id (validated already: POST /validate's report). */
  put(prepared: PreparedDocument, conditions: WriteConditions): Promise<{ readonly created: boolean; readonly version: number }> {
    const { id } = prepared
    return this.#write('put', id, conditions.subject, async (transaction) => {
      const { documents } = transaction.state
      const current = documents.get(id)
      checkConditions(current?.version, conditions)
      const fileId = this.#fileTaken(prepared.ids)
      if (fileId !== undefined) throw readOnly(fileId)
      for (const taken of prepared.ids) {
        const holder = this.#holderOf(taken, documents, id)
        if (holder !== undefined) throw new MappingConflict(`"${taken}" is defined by the stored mapping "${holder}"`)
      }
      if (current === undefined && documents.size >= this.#config.maxMappings) {
        throw new StoreFull(`The mapping store holds its most mappings (options.store.maxMappings: ${this.#config.maxMappings}): delete one first`)
      }
      const { text } = prepared
      // Admitted before it is stored (the version is the store's to give).
      const pending: StoredDocument = { id, version: 0, created: '', subject: conditions.subject, digest: sha256(text), text }
      const before = current === undefined ? [] : this.#entriesOf(current).entries.map((entry) => entry.id)
      const { service, stored } = await this.#admit(new Map(documents).set(id, pending), [...before, ...prepared.ids], prepared, `Writing "${id}"`)
      const written = await transaction.put(id, text, conditions.subject)
      const created = current === undefined
      return { result: { created, version: written.version }, service, stored, documents: new Map(documents).set(id, written), outcome: created ? 'created' : 'replaced', version: written.version }
    })
  }

  /** Delete `id` (a version of its own that records the deletion). */
  delete(id: string, conditions: WriteConditions): Promise<void> {
    return this.#write('delete', id, conditions.subject, async (transaction) => {
      const current = transaction.state.documents.get(id)
      if (current === undefined) {
        if (this.#fileTaken([id]) !== undefined) throw readOnly(id)
        const holder = this.#holderOf(id, transaction.state.documents)
        if (holder !== undefined) throw new MappingConflict(`"${id}" is a member of the stored mapping "${holder}": write or delete "${holder}"`)
        throw new NotFound(`No stored mapping "${id}"`)
      }
      checkConditions(current.version, conditions)
      const documents = new Map(transaction.state.documents)
      documents.delete(id)
      const { service, stored } = await this.#admit(documents, this.#entriesOf(current).entries.map((entry) => entry.id), undefined, `Deleting "${id}"`)
      const deleted = await transaction.delete(id, conditions.subject)
      return { result: undefined, service, stored, documents, outcome: 'deleted', version: deleted.version }
    })
  }

  /** Every kept version of `id`, newest first (empty: the store never held it). */
  async versions(id: string): Promise<VersionInfo[]> {
    try {
      return await this.#store.versions(id)
    } catch (error) {
      throw answerOf(error)
    }
  }

  /** One kept version of `id` with its text. */
  async version(id: string, version: number): Promise<StoredDocument | undefined> {
    try {
      return await this.#store.version(id, version)
    } catch (error) {
      throw answerOf(error)
    }
  }

  close(): Promise<void> {
    return this.#store.close()
  }
}
