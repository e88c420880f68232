// What a mapping store keeps and how the service asks for it (README "Managed mappings"): every
// version of every document written over HTTP, each the JSON text it was accepted as, and which of
// them is current. Two stores implement it: a directory on local disk (one instance,
// ./directory.ts) and PostgreSQL (several replicas, ./postgres.ts). A store decides nothing about
// mappings: validation, dependents, files and preconditions are the service's (service/managed.ts),
// decided under the store's write lock, so replicas that write at once are taken one at a time.

/** One stored version of a document, with its text. */
export interface StoredDocument {
  /** The id the document is stored under: its entry's `$id`. */
  readonly id: string
  /** 1 for an id's first version, then one more for each write or deletion of it (a deletion is a version too). */
  readonly version: number
  /** When it was written (ISO 8601, UTC). */
  readonly created: string
  /** The `sub` of the token that wrote it; null with auth off or a token without one. */
  readonly subject: string | null
  /** SHA-256 of `text`, hex. */
  readonly digest: string
  /** The document's JSON text. */
  readonly text: string
}

/** A version as listed (GET /mappings/{id}/versions): what was written, without the text. */
export interface VersionInfo {
  readonly version: number
  readonly created: string
  readonly subject: string | null
  /** SHA-256 of the text, hex; null for a deletion. */
  readonly digest: string | null
  /** True for the version that deleted the id. */
  readonly deleted: boolean
}

/** What a store holds now. */
export interface StoreState {
  /**
   * Grows with every change the store takes (a write or a deletion, from any replica): a replica
   * that has served revision r has nothing to do for a state of revision r or less.
   */
  readonly revision: number
  /** The current version of every id that is not deleted. */
  readonly documents: ReadonlyMap<string, StoredDocument>
}

/** A change being made: the state read under the write lock, and the writes that commit with it. */
export interface StoreTransaction {
  readonly state: StoreState
  /** A new version of `id` holding `text` (version: the id's last, deletions included, plus one). */
  put(id: string, text: string, subject: string | null): Promise<StoredDocument>
  /** A deletion of `id` (which must be current), recorded as a version of its own. */
  delete(id: string, subject: string | null): Promise<VersionInfo>
}

/** The store is configured but cannot be reached, or failed a command: writes answer 503, reads go on from memory. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError'
}

export interface StoreLimits {
  /** Versions kept per id, the current one included; older ones are removed as a write adds one. */
  readonly keepVersions: number
}

export interface MappingStore {
  /** Where it is, printable (a URL with its password redacted). */
  readonly description: string
  /** Connect, and create or migrate what the store needs (safe when several replicas start at once). */
  open(): Promise<void>
  /** The current state. */
  read(): Promise<StoreState>
  /**
   * Run `change` holding the store-wide write lock (one writer at a time, across every replica
   * that shares the store), with the state as it is under the lock. What it writes commits when it
   * resolves, with the revision one higher per write; when it throws, nothing of it is kept.
   * Replicas are told of the change (`watch`) once it committed.
   */
  write<T>(change: (transaction: StoreTransaction) => Promise<T>): Promise<{ readonly result: T; readonly revision: number }>
  /** Every kept version of `id`, newest first; empty when the store never held it. */
  versions(id: string): Promise<VersionInfo[]>
  /** One kept version of `id` with its text (undefined: never written, pruned, or a deletion). */
  version(id: string, version: number): Promise<StoredDocument | undefined>
  /**
   * Call `changed` whenever the store may have changed under this replica (another replica wrote,
   * a lost connection came back, the periodic resync): the service reads the state again then.
   */
  watch(changed: () => void): void
  /** Stop watching and close every connection. */
  close(): Promise<void>
}

/** Where a store reports what happens to its connection (the service's logger). */
export interface StoreLog {
  info(message: string): void
  warn(message: string): void
}
