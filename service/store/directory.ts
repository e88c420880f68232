// The mapping store of a single instance (`STORE_URL=file:///path/to/dir`): a directory on local
// disk, every version of every document a file of its own. A version is written to a temporary
// file, flushed to disk, renamed over its final name and the directory flushed in turn, so a crash
// or a SIGKILL at any point leaves either the whole version or none of it: no partial document is
// ever read back, and the temporary files a crash leaves are removed at the next open. Layout:
//
//   <dir>/<id, URI-encoded>/<version, 10 digits>.json
//
// each file one line of metadata (JSON: id, version, created, subject, digest, deleted) and then the
// document's JSON text as it was accepted. An id too long to be a file name once encoded is named by
// its SHA-256 instead (`#<hex>`, a name encoding never makes); the metadata holds the id itself.
// One process per directory: writes are taken one at a time within the process, and nothing locks
// the directory against a second process.
import { createHash } from 'node:crypto'
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { StoreUnavailableError, type MappingStore, type StoreLimits, type StoreState, type StoreTransaction, type StoredDocument, type VersionInfo } from './types.js'

/** The metadata line of a version file. */
interface Meta {
  readonly id: string
  readonly version: number
  readonly created: string
  readonly subject: string | null
  readonly digest: string | null
  readonly deleted: boolean
}

const VERSION_FILE = /^(\d{10})\.json$/
const TEMPORARY = '.tmp'
/** The longest directory name an id is written as (file systems take 255 bytes). */
const MAX_NAME_BYTES = 200

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/** The directory name of an id: URI-encoded (never `.` or `..`, never a `/`), or `#<sha256>` when that is too long. */
function directoryName(id: string): string {
  const encoded = encodeURIComponent(id).replace(/^\./, '%2E')
  return Buffer.byteLength(encoded) <= MAX_NAME_BYTES ? encoded : `#${sha256(id)}`
}

const fileName = (version: number): string => `${String(version).padStart(10, '0')}.json`

/** A version file's content split into its metadata and its text; undefined when it is not one. */
function parseVersion(content: string): { meta: Meta; text: string } | undefined {
  const newline = content.indexOf('\n')
  if (newline === -1) return undefined
  try {
    const meta = JSON.parse(content.slice(0, newline)) as Meta
    if (typeof meta.id !== 'string' || !Number.isInteger(meta.version)) return undefined
    return { meta, text: content.slice(newline + 1) }
  } catch {
    return undefined
  }
}

const infoOf = (meta: Meta): VersionInfo => ({ version: meta.version, created: meta.created, subject: meta.subject, digest: meta.digest, deleted: meta.deleted })

/** Write `content` to `path` whole or not at all: a flushed temporary file renamed over it, then the directory flushed. */
async function writeAtomically(directory: string, path: string, content: string): Promise<void> {
  const temporary = `${path}${TEMPORARY}`
  const file = await open(temporary, 'w')
  try {
    await file.writeFile(content)
    await file.sync()
  } finally {
    await file.close()
  }
  await rename(temporary, path)
  await syncDirectory(directory)
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

const unavailable = (root: string, error: unknown): StoreUnavailableError =>
  new StoreUnavailableError(`the mapping store ${root} failed: ${(error as Error).message}`, { cause: error })

export class DirectoryStore implements MappingStore {
  readonly description: string
  readonly #root: string
  readonly #limits: StoreLimits
  /** The current version of each id that is not deleted, and the last version of each id ever written. */
  #documents = new Map<string, StoredDocument>()
  readonly #last = new Map<string, number>()
  #revision = 0
  /** Writes, one at a time. */
  #queue: Promise<unknown> = Promise.resolve()

  constructor(url: string | URL, limits: StoreLimits) {
    this.#root = fileURLToPath(url)
    this.description = String(url)
    this.#limits = limits
  }

  async open(): Promise<void> {
    try {
      await mkdir(this.#root, { recursive: true })
      for (const entry of await readdir(this.#root, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue
        const directory = join(this.#root, entry.name)
        let newest: { meta: Meta; text: string } | undefined
        for (const name of await readdir(directory)) {
          // What a crash left half-written never counts.
          if (name.endsWith(TEMPORARY)) {
            await rm(join(directory, name), { force: true })
            continue
          }
          if (!VERSION_FILE.test(name)) continue
          const version = Number(VERSION_FILE.exec(name)![1])
          if (newest !== undefined && newest.meta.version > version) continue
          const parsed = parseVersion(await readFile(join(directory, name), 'utf8'))
          if (parsed !== undefined && parsed.meta.version === version) newest = parsed
        }
        if (newest === undefined) continue
        const { meta, text } = newest
        this.#last.set(meta.id, meta.version)
        if (!meta.deleted) this.#documents.set(meta.id, { id: meta.id, version: meta.version, created: meta.created, subject: meta.subject, digest: meta.digest!, text })
      }
    } catch (error) {
      throw unavailable(this.description, error)
    }
  }

  async read(): Promise<StoreState> {
    return { revision: this.#revision, documents: new Map(this.#documents) }
  }

  write<T>(change: (transaction: StoreTransaction) => Promise<T>): Promise<{ readonly result: T; readonly revision: number }> {
    const run = this.#queue.then(() => this.#write(change))
    this.#queue = run.catch(() => {})
    return run
  }

  async #write<T>(change: (transaction: StoreTransaction) => Promise<T>): Promise<{ readonly result: T; readonly revision: number }> {
    // The writes are kept aside and made once the change resolves: a change that throws leaves nothing.
    const pending: Array<{ meta: Meta; text: string }> = []
    const documents = new Map(this.#documents)
    const last = new Map(this.#last)
    const next = (id: string): number => (last.get(id) ?? 0) + 1
    const transaction: StoreTransaction = {
      state: { revision: this.#revision, documents: new Map(this.#documents) },
      put: async (id, text, subject) => {
        const meta: Meta = { id, version: next(id), created: new Date().toISOString(), subject, digest: sha256(text), deleted: false }
        pending.push({ meta, text })
        last.set(id, meta.version)
        const stored: StoredDocument = { id, version: meta.version, created: meta.created, subject, digest: meta.digest!, text }
        documents.set(id, stored)
        return stored
      },
      delete: async (id, subject) => {
        if (!documents.has(id)) throw new Error(`no current document "${id}" to delete`)
        const meta: Meta = { id, version: next(id), created: new Date().toISOString(), subject, digest: null, deleted: true }
        pending.push({ meta, text: '' })
        last.set(id, meta.version)
        documents.delete(id)
        return infoOf(meta)
      },
    }
    const result = await change(transaction)
    try {
      for (const { meta, text } of pending) await this.#persist(meta, text)
    } catch (error) {
      throw unavailable(this.description, error)
    }
    this.#documents = documents
    for (const [id, version] of last) this.#last.set(id, version)
    this.#revision += pending.length
    return { result, revision: this.#revision }
  }

  /** One version made durable, then the versions past `keepVersions` removed. */
  async #persist(meta: Meta, text: string): Promise<void> {
    const directory = join(this.#root, directoryName(meta.id))
    await mkdir(directory, { recursive: true })
    await syncDirectory(this.#root)
    await writeAtomically(directory, join(directory, fileName(meta.version)), `${JSON.stringify(meta)}\n${text}`)
    for (const name of await readdir(directory)) {
      const match = VERSION_FILE.exec(name)
      if (match !== null && Number(match[1]) <= meta.version - this.#limits.keepVersions) await rm(join(directory, name), { force: true })
    }
  }

  /** The version files of `id` kept now, newest first. */
  async #versionsOf(id: string): Promise<Array<{ meta: Meta; text: string }>> {
    const directory = join(this.#root, directoryName(id))
    let names: string[]
    try {
      names = await readdir(directory)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw unavailable(this.description, error)
    }
    const found: Array<{ meta: Meta; text: string }> = []
    for (const name of names.filter((name) => VERSION_FILE.test(name)).sort().reverse()) {
      const parsed = parseVersion(await readFile(join(directory, name), 'utf8'))
      if (parsed !== undefined && parsed.meta.id === id) found.push(parsed)
    }
    return found
  }

  async versions(id: string): Promise<VersionInfo[]> {
    return (await this.#versionsOf(id)).map(({ meta }) => infoOf(meta))
  }

  async version(id: string, version: number): Promise<StoredDocument | undefined> {
    const found = (await this.#versionsOf(id)).find(({ meta }) => meta.version === version)
    if (found === undefined || found.meta.deleted) return undefined
    const { meta, text } = found
    return { id, version: meta.version, created: meta.created, subject: meta.subject, digest: meta.digest!, text }
  }

  /** One instance per directory: nobody else changes it. */
  watch(): void {}

  async close(): Promise<void> {
    await this.#queue
  }
}
