// The mapping store in PostgreSQL (./types.ts's MappingStore), for several replicas that share one
// database: every version of every document is a row, the current one is each id's newest that is
// not a deletion, and one row holds the revision. pg (an optional package: support/optional.ts) is
// loaded by open().
//
// Tables, in the connection's default schema (the first of its search_path; the role needs CREATE
// there once), are made by versioned migrations (MIGRATIONS), run in one transaction under an
// advisory lock, so replicas that start at once apply each exactly once and the others wait for it.
// A document's text is kept in a `text` column as it was accepted, not jsonb, which would reorder
// its keys and drop duplicates. Every value reaches the server as a query parameter, never inside
// the SQL text.
//
// A write is one transaction on a pooled client holding a second advisory lock, the store-wide
// write lock, for the whole of it: the state is read under the lock, the service decides on it,
// its versions are inserted, older versions beyond `keepVersions` removed, the revision raised by
// one per version, and a NOTIFY sent, which PostgreSQL delivers only once the transaction commits.
// One write at a time also within a process: a write waiting for the lock holds a pooled client,
// and several waiting would leave none for reads. The change runs inside the transaction: one
// that goes 30 s without a statement loses it (idle_in_transaction_session_timeout: a replica
// stopped in the middle of a write does not hold the lock for ever), and one that calls write()
// of the same store is refused (it would wait for its own turn for ever).
//
// `watch` listens on a connection of its own (LISTEN: a pooled client would be returned and lose
// it), and calls back on every notification, every `resyncMs` (which covers a notification lost
// with a connection), and once the connection comes back after a loss. A loss is logged once when
// it happens and once when it ends, never per attempt; reconnects back off from 250 ms to 5 s.
//
// Every failure of pg (refused, terminated, timed out, an error of the server) reaches the caller
// as StoreUnavailableError, whose message names the URL redacted and never the password; pg's own
// error is its `cause`. Everything is bounded: a connection 3 s, a statement 10 s on the server
// (a wait for a lock included) and 12 s on the client (for a server that stopped answering), a
// transaction left idle 30 s; an idle client that fails is dropped by the pool, never thrown.
import { AsyncLocalStorage } from 'node:async_hooks'
import { createHash } from 'node:crypto'
import { loadPg, type PgClient, type PgClientOptions, type PgModule, type PgPool, type PgPoolClient, type PgQueryable } from '../../support/optional.js'
import { REDACTED, redactUrl } from '../../support/redact.js'
import { StoreUnavailableError, type MappingStore, type StoredDocument, type StoreLog, type StoreState, type StoreTransaction, type VersionInfo } from './types.js'

export interface PostgresStoreOptions {
  /** Versions kept per id, the current one included (a deletion counts as a version). */
  readonly keepVersions: number
  /** How often `watch` calls back without a notification, in ms. */
  readonly resyncMs: number
  readonly log: StoreLog
}

/** The bounds on every exchange with PostgreSQL, in ms. */
export const POSTGRES_TIMEOUTS = {
  /** A new connection, and a wait for a free pooled one. */
  connectMs: 3000,
  /** A statement, enforced by the server (statement_timeout), a wait for an advisory lock included. */
  statementMs: 10000,
  /** A statement, enforced by the client (query_timeout): a server that stopped answering. Longer than statementMs, so the server's own timeout is the one normally met. */
  queryMs: 12000,
  /** A transaction left idle (a write whose replica stopped): the server ends its session and so releases the write lock. */
  idleInTransactionMs: 30000,
  /** A pooled connection unused this long is closed. */
  poolIdleMs: 30000,
  /** The first wait before the listening connection is made again; doubled per failure up to reconnectMaxMs. */
  reconnectFirstMs: 250,
  reconnectMaxMs: 5000,
  /** What close() waits for connections to end. */
  closeMs: 5000,
} as const

/** The LISTEN/NOTIFY channel; a notification's payload is the revision that committed. */
export const POSTGRES_CHANNEL = 'mapper_mappings'

/** application_name of the pooled connections and of the one that listens (pg_stat_activity tells them apart). */
export const POSTGRES_APPLICATION_NAME = 'mapper-service'
export const POSTGRES_LISTENER_APPLICATION_NAME = 'mapper-service watch'

/** Connections in the pool: one for a write (writes take turns in a process), the rest for reads. */
const POOL_SIZE = 4

// The advisory lock keys, fixed bigints that name the lock in every replica: "mapper" in ASCII,
// then 1 for migrations and 2 for writes. Written into the SQL as constants (they are not input).
const MIGRATION_LOCK = '7881704450915696641'
const WRITE_LOCK = '7881704450915696642'

/**
 * The schema, one migration per entry, each a list of statements: entry i is version i + 1.
 * `open` applies, in order, every version mapper_schema_migrations does not list, each recorded
 * there as it is applied, all in one transaction under MIGRATION_LOCK. To change the schema,
 * append an entry; never edit, reorder or remove one that has shipped, which databases have
 * applied already and will not apply again. A replica that finds versions it does not know (a
 * newer release migrated the database) goes on with them: keep each migration one that the
 * releases before it can still run against.
 */
const MIGRATIONS: ReadonlyArray<readonly string[]> = [
  [
    `CREATE TABLE mapper_mapping_versions (
      id text NOT NULL,
      version integer NOT NULL,
      text text NULL,
      digest text NULL,
      subject text NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (id, version),
      CHECK ((text IS NULL) = (digest IS NULL))
    )`,
    "COMMENT ON TABLE mapper_mapping_versions IS 'mapper-service: every kept version of every managed mapping document; text NULL is a deletion'",
    `CREATE TABLE mapper_store_revision (
      only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
      revision bigint NOT NULL
    )`,
    "COMMENT ON TABLE mapper_store_revision IS 'mapper-service: one row, raised by one per version written'",
    'INSERT INTO mapper_store_revision (revision) VALUES (0)',
  ],
]

/**
 * A row's created_at as `created`, milliseconds since the epoch (`iso` makes it ISO 8601): a
 * number, so nothing depends on how pg's type parsers for timestamps are set in this process.
 */
const CREATED = 'floor(extract(epoch FROM created_at) * 1000)::bigint AS created'

/** `created` (CREATED) as ISO 8601 in UTC. */
const iso = (milliseconds: unknown): string => new Date(Number(milliseconds)).toISOString()

/** The current version of every id that is not deleted, and the revision, in one statement (one snapshot). */
const READ_STATE = `
SELECT r.revision, d.id, d.version, d.text, d.digest, d.subject, d.created
FROM mapper_store_revision r
LEFT JOIN (
  SELECT DISTINCT ON (id) id, version, text, digest, subject, ${CREATED}
  FROM mapper_mapping_versions
  ORDER BY id, version DESC
) d ON d.text IS NOT NULL
ORDER BY d.id`

/** A new version of $1 (the id's last, deletions included, plus one); $2 and $3 NULL for a deletion. */
const INSERT_VERSION = `
INSERT INTO mapper_mapping_versions (id, version, text, digest, subject)
SELECT $1::text, coalesce(max(version), 0) + 1, $2::text, $3::text, $4::text FROM mapper_mapping_versions WHERE id = $1::text
RETURNING version, ${CREATED}`

/** Removes the versions of $1 older than its newest $2. */
const PRUNE_VERSIONS = `
DELETE FROM mapper_mapping_versions
WHERE id = $1 AND version < (
  SELECT min(version) FROM (SELECT version FROM mapper_mapping_versions WHERE id = $1 ORDER BY version DESC LIMIT $2) newest
)`

const BUMP_REVISION = 'UPDATE mapper_store_revision SET revision = revision + 1 RETURNING revision'

type Row = Record<string, unknown>

/** The store whose change is running, where one is: a write() inside it would wait for itself. */
const writing = new AsyncLocalStorage<PostgresStore>()

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/** A bigint or integer column as a number (pg gives a bigint as a string). */
const integer = (value: unknown): number => Number(value)

const nullableText = (value: unknown): string | null => (value === null || value === undefined ? null : String(value))

/** What an error says: its message, or for an AggregateError (a refused connection to every address) each one's. */
function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(describe).join('; ')
  if (error instanceof Error) {
    const { code } = error as { code?: unknown }
    if (error.message !== '') return error.message
    return typeof code === 'string' ? code : error.name
  }
  return String(error)
}

/** Whether `error` is an answer of the server (a DatabaseError): the connection is sound, and a ROLLBACK on it will be answered. */
const isServerError = (error: unknown): boolean => typeof (error as { severity?: unknown } | undefined)?.severity === 'string'

/** Resolves when `promise` settles or after `ms`, whichever comes first; never rejects. */
async function settled(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms)
    timer.unref()
  })
  try {
    await Promise.race([promise.then(() => undefined, () => undefined), expired])
  } finally {
    clearTimeout(timer)
  }
}

interface Listener {
  readonly client: PgClient
  /** Ends this connection and schedules the next one (once per connection, whoever sees the loss first). */
  lose(error: unknown): void
}

export class PostgresStore implements MappingStore {
  readonly description: string
  readonly #url: string
  readonly #keepVersions: number
  readonly #resyncMs: number
  readonly #log: StoreLog
  /** The password, as written in the URL and decoded: taken out of every message, whatever pg puts in it. */
  readonly #secrets: string[]

  #pg: PgModule | undefined
  #pool: PgPool | undefined
  #opening: Promise<void> | undefined
  #closed = false
  /** The last write of this process: the next one starts after it. */
  #writing: Promise<void> = Promise.resolve()

  readonly #watchers: Array<() => void> = []
  #watching = false
  #listener: Listener | undefined
  /** A loss of the listening connection was logged, and its end not yet. */
  #outage = false
  #reconnectMs: number = POSTGRES_TIMEOUTS.reconnectFirstMs
  #reconnectTimer: NodeJS.Timeout | undefined
  #resyncTimer: NodeJS.Timeout | undefined

  constructor(url: string, options: PostgresStoreOptions) {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      throw new Error(`The PostgreSQL store's URL (${redactUrl(url)}) is not a URL`)
    }
    // Only the scheme is printed: a URL without `//` (`user:password@host/db`) has no userinfo to redact.
    if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') throw new Error(`The PostgreSQL store's URL must be a postgres:// or postgresql:// URL, not a ${parsed.protocol} one`)
    if (!Number.isSafeInteger(options.keepVersions) || options.keepVersions < 1) throw new Error(`keepVersions must be a positive integer, not ${options.keepVersions}`)
    if (!(options.resyncMs > 0)) throw new Error(`resyncMs must be a positive number of milliseconds, not ${options.resyncMs}`)
    this.#url = url
    this.description = redactUrl(parsed)
    this.#keepVersions = options.keepVersions
    this.#resyncMs = options.resyncMs
    this.#log = options.log
    const secrets = new Set<string>()
    if (parsed.password !== '') {
      secrets.add(parsed.password)
      try {
        secrets.add(decodeURIComponent(parsed.password))
      } catch {
        // Not valid percent-encoding: pg will fail to read it too, and the text as written is taken out.
      }
    }
    // The longest first, so that one that holds another is taken out whole.
    this.#secrets = [...secrets].sort((a, b) => b.length - a.length)
  }

  async open(): Promise<void> {
    if (this.#closed) throw this.#unavailable('it is closed')
    if (this.#pool !== undefined) return
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined
    })
    return this.#opening
  }

  async #open(): Promise<void> {
    const pg = (this.#pg ??= await loadPg())
    const pool = new pg.Pool({ ...this.#clientOptions(POSTGRES_APPLICATION_NAME), max: POOL_SIZE, idleTimeoutMillis: POSTGRES_TIMEOUTS.poolIdleMs, allowExitOnIdle: true })
    // An idle client whose connection fails is removed by the pool, which then emits 'error': the
    // next query that needs a connection reports the outage (and the listener logs it).
    pool.on('error', () => undefined)
    try {
      await this.#transaction(pool, async (client) => {
        await this.#query(client, `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`)
        await this.#query(client, 'CREATE TABLE IF NOT EXISTS mapper_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())')
        const rows = await this.#query(client, 'SELECT version FROM mapper_schema_migrations')
        const applied = new Set(rows.map((row) => integer(row.version)))
        for (const [index, statements] of MIGRATIONS.entries()) {
          const version = index + 1
          if (applied.has(version)) continue
          for (const statement of statements) await this.#query(client, statement)
          await this.#query(client, 'INSERT INTO mapper_schema_migrations (version) VALUES ($1)', [version])
        }
      })
    } catch (error) {
      await settled(pool.end(), POSTGRES_TIMEOUTS.closeMs)
      throw error
    }
    if (this.#closed) {
      await settled(pool.end(), POSTGRES_TIMEOUTS.closeMs)
      throw this.#unavailable('it was closed while it opened')
    }
    this.#pool = pool
    if (this.#watchers.length > 0) this.#startWatching()
  }

  async read(): Promise<StoreState> {
    return this.#state(this.#openPool())
  }

  async write<T>(change: (transaction: StoreTransaction) => Promise<T>): Promise<{ readonly result: T; readonly revision: number }> {
    if (writing.getStore() === this) throw new Error('write() was called inside a change of the same store, which would wait for itself: make the writes through the transaction')
    const pool = this.#openPool()
    const previous = this.#writing
    let done!: () => void
    this.#writing = new Promise<void>((resolve) => (done = resolve))
    await previous
    try {
      return await this.#transaction(pool, async (client) => {
        await this.#query(client, `SELECT pg_advisory_xact_lock(${WRITE_LOCK})`)
        // READ COMMITTED (PostgreSQL's default): each statement sees what committed before it began,
        // so this one, after the lock, sees the write that held the lock last.
        const state = await this.#state(client)
        let revision = state.revision
        let writes = 0
        let open = true
        /** A failure of the store inside the transaction: PostgreSQL has aborted it, and COMMIT would roll it back without a word. */
        let failure: StoreUnavailableError | undefined
        let queue: Promise<unknown> = Promise.resolve()
        // One statement at a time, in the order called, whether or not the change awaits each.
        const serial = <R>(operation: () => Promise<R>): Promise<R> => {
          if (!open) return Promise.reject(new Error('The store transaction has ended: put() and delete() belong inside the change, awaited'))
          const result = queue.then(operation)
          queue = result.catch((error: unknown) => {
            if (error instanceof StoreUnavailableError) failure ??= error
          })
          return result
        }
        const addVersion = async (id: string, text: string | null, digest: string | null, subject: string | null): Promise<{ version: number; created: string }> => {
          const [row] = await this.#query(client, INSERT_VERSION, [id, text, digest, subject])
          const version = integer(row!.version)
          await this.#query(client, PRUNE_VERSIONS, [id, this.#keepVersions])
          const [bumped] = await this.#query(client, BUMP_REVISION)
          if (bumped === undefined) throw this.#unavailable('its table mapper_store_revision holds no row')
          revision = integer(bumped.revision)
          writes++
          return { version, created: iso(row!.created) }
        }
        const transaction: StoreTransaction = {
          state,
          put: (id, text, subject) =>
            serial(async () => {
              const digest = sha256(text)
              const { version, created } = await addVersion(id, text, digest, subject)
              return { id, version, created, subject, digest, text }
            }),
          delete: (id, subject) =>
            serial(async () => {
              const [last] = await this.#query(client, 'SELECT text IS NOT NULL AS current FROM mapper_mapping_versions WHERE id = $1 ORDER BY version DESC LIMIT 1', [id])
              if (last?.current !== true) throw new Error(`The store holds no current document ${JSON.stringify(id)} to delete`)
              const { version, created } = await addVersion(id, null, null, subject)
              return { version, created, subject, digest: null, deleted: true }
            }),
        }
        let result: T
        try {
          result = await writing.run(this, () => change(transaction))
        } finally {
          open = false
        }
        await queue
        if (failure !== undefined) throw failure
        if (writes > 0) await this.#query(client, 'SELECT pg_notify($1, $2)', [POSTGRES_CHANNEL, String(revision)])
        return { result, revision }
      })
    } finally {
      done()
    }
  }

  async versions(id: string): Promise<VersionInfo[]> {
    const rows = await this.#query(
      this.#openPool(),
      `SELECT version, ${CREATED}, subject, digest FROM mapper_mapping_versions WHERE id = $1 ORDER BY version DESC`,
      [id]
    )
    return rows.map((row) => {
      const digest = nullableText(row.digest)
      return { version: integer(row.version), created: iso(row.created), subject: nullableText(row.subject), digest, deleted: digest === null }
    })
  }

  async version(id: string, version: number): Promise<StoredDocument | undefined> {
    const pool = this.#openPool()
    // A version is a positive integer column: anything else was never written.
    if (!Number.isSafeInteger(version) || version < 1 || version > 2147483647) return undefined
    const [row] = await this.#query(
      pool,
      `SELECT version, ${CREATED}, subject, digest, text FROM mapper_mapping_versions WHERE id = $1 AND version = $2 AND text IS NOT NULL`,
      [id, version]
    )
    return row === undefined ? undefined : this.#document(id, row)
  }

  watch(changed: () => void): void {
    this.#watchers.push(changed)
    if (this.#pool !== undefined && !this.#closed) this.#startWatching()
  }

  async close(): Promise<void> {
    this.#closed = true
    clearInterval(this.#resyncTimer)
    clearTimeout(this.#reconnectTimer)
    const listener = this.#listener
    this.#listener = undefined
    const pool = this.#pool
    this.#pool = undefined
    // A pool ends once its lent clients are back: a write in progress finishes (bounded by its timeouts), later than this at worst.
    await settled(Promise.all([listener?.client.end(), pool?.end(), this.#opening]), POSTGRES_TIMEOUTS.closeMs)
  }

  /** The options of every connection, pooled or listening. */
  #clientOptions(applicationName: string): PgClientOptions {
    return {
      connectionString: this.#url,
      application_name: applicationName,
      connectionTimeoutMillis: POSTGRES_TIMEOUTS.connectMs,
      statement_timeout: POSTGRES_TIMEOUTS.statementMs,
      query_timeout: POSTGRES_TIMEOUTS.queryMs,
      idle_in_transaction_session_timeout: POSTGRES_TIMEOUTS.idleInTransactionMs,
      // A peer gone from the network, without a word, is found out by TCP keepalive.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10000,
    }
  }

  #openPool(): PgPool {
    if (this.#closed) throw this.#unavailable('it is closed')
    if (this.#pool === undefined) throw this.#unavailable('it is not open')
    return this.#pool
  }

  /** `text` with every spelling of the password replaced. */
  #scrub(text: string): string {
    let scrubbed = text
    for (const secret of this.#secrets) scrubbed = scrubbed.split(secret).join(REDACTED)
    return scrubbed
  }

  /** StoreUnavailableError for `error` (pg's, kept as the cause) or for a reason given as text. */
  #unavailable(error: unknown): StoreUnavailableError {
    if (error instanceof StoreUnavailableError) return error
    if (typeof error === 'string') return new StoreUnavailableError(`PostgreSQL store ${this.description} unavailable: ${error}`)
    return new StoreUnavailableError(`PostgreSQL store ${this.description} unavailable: ${this.#scrub(describe(error))}`, { cause: error })
  }

  async #query(on: PgQueryable, text: string, values?: readonly unknown[]): Promise<Row[]> {
    try {
      return (await on.query(text, values)).rows
    } catch (error) {
      throw this.#unavailable(error)
    }
  }

  /**
   * Run `body` in a transaction on a client of `pool`: COMMIT when it resolves, ROLLBACK when it
   * throws, and its error rethrown as it is (the change's own error unchanged). A client whose
   * connection failed, or that did not answer, is closed rather than returned to the pool (its
   * session ends, and the server rolls back what it held).
   */
  async #transaction<R>(pool: PgPool, body: (client: PgPoolClient) => Promise<R>): Promise<R> {
    let client: PgPoolClient
    try {
      client = await pool.connect()
    } catch (error) {
      throw this.#unavailable(error)
    }
    // A lent client has no error listener of the pool's: a connection lost between two queries
    // (while the change runs) would otherwise be an uncaught 'error' event.
    let broken: Error | undefined
    const onError = (error: Error): void => {
      broken ??= error
    }
    client.on('error', onError)
    try {
      await this.#query(client, 'BEGIN')
      let result: R
      try {
        result = await body(client)
      } catch (error) {
        const cause = error instanceof StoreUnavailableError ? error.cause : error
        if (broken === undefined && (!(error instanceof StoreUnavailableError) || isServerError(cause))) {
          try {
            await client.query('ROLLBACK')
          } catch (rollback) {
            broken ??= rollback instanceof Error ? rollback : new Error(describe(rollback))
          }
        } else {
          broken ??= error instanceof Error ? error : new Error(describe(error))
        }
        throw error
      }
      await this.#query(client, 'COMMIT')
      return result
    } catch (error) {
      // BEGIN or COMMIT failed (a failure inside body was handled above, and is rethrown as it is).
      if (error instanceof StoreUnavailableError && !isServerError(error.cause)) broken ??= error
      throw error
    } finally {
      client.removeListener('error', onError)
      client.release(broken ?? false)
    }
  }

  async #state(on: PgQueryable): Promise<StoreState> {
    const rows = await this.#query(on, READ_STATE)
    if (rows.length === 0) throw this.#unavailable('its table mapper_store_revision holds no row')
    const documents = new Map<string, StoredDocument>()
    for (const row of rows) {
      if (row.id === null || row.id === undefined) continue
      const id = String(row.id)
      documents.set(id, this.#document(id, row))
    }
    return { revision: integer(rows[0]!.revision), documents }
  }

  #document(id: string, row: Row): StoredDocument {
    return { id, version: integer(row.version), created: iso(row.created), subject: nullableText(row.subject), digest: String(row.digest), text: String(row.text) }
  }

  #changed(): void {
    for (const watcher of this.#watchers) {
      try {
        watcher()
      } catch (error) {
        this.#log.warn(`PostgreSQL store ${this.description}: a watcher of the store failed: ${this.#scrub(describe(error))}`)
      }
    }
  }

  #startWatching(): void {
    if (this.#watching) return
    this.#watching = true
    this.#resyncTimer = setInterval(() => this.#resync(), this.#resyncMs)
    this.#resyncTimer.unref()
    void this.#listen()
  }

  #resync(): void {
    this.#changed()
    // A connection can die without a word (a peer gone from the network): a query on it finds out.
    const listener = this.#listener
    listener?.client.query('SELECT 1').catch((error: unknown) => listener.lose(error))
  }

  async #listen(): Promise<void> {
    if (this.#closed) return
    const client = new this.#pg!.Client(this.#clientOptions(POSTGRES_LISTENER_APPLICATION_NAME))
    let lost = false
    const listener: Listener = {
      client,
      lose: (error) => {
        if (lost) return
        lost = true
        this.#lost(listener, error)
      },
    }
    this.#listener = listener
    client.on('notification', (message) => {
      if (message.channel === POSTGRES_CHANNEL) this.#changed()
    })
    client.on('error', (error) => listener.lose(error))
    client.on('end', () => listener.lose(new Error('the connection ended')))
    try {
      await client.connect()
      await client.query(`LISTEN ${POSTGRES_CHANNEL}`)
    } catch (error) {
      listener.lose(error)
      return
    }
    if (lost || this.#closed) return
    this.#reconnectMs = POSTGRES_TIMEOUTS.reconnectFirstMs
    if (this.#outage) {
      this.#outage = false
      this.#log.info(`PostgreSQL store ${this.description}: listening for changes again`)
      // What changed while no one listened was missed: the state is read again.
      this.#changed()
    }
  }

  #lost(listener: Listener, error: unknown): void {
    // Once closed, close() has ended the connection, and nothing is made again.
    if (this.#closed) return
    if (this.#listener === listener) this.#listener = undefined
    void listener.client.end().catch(() => undefined)
    if (!this.#outage) {
      this.#outage = true
      this.#log.warn(`PostgreSQL store ${this.description}: the connection that listens for changes failed (${this.#scrub(describe(error))}); reconnecting`)
    }
    const delay = this.#reconnectMs
    this.#reconnectMs = Math.min(delay * 2, POSTGRES_TIMEOUTS.reconnectMaxMs)
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined
      void this.#listen()
    }, delay)
    this.#reconnectTimer.unref()
  }
}
