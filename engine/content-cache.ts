// The content cache of explicit documents: a document the engine has prepared (validated and, when
// valid, compiled) is found again by its content, so a caller sending the same document on every
// request pays for validation and compilation once. Unobservable: the same document text always
// yields the same report and plan. Bounded by a count and by the bytes of document text it holds.
import { createHash } from 'node:crypto'

/** Documents this short are their own key; longer ones are keyed by a hash of their text. */
const KEY_TEXT_LIMIT = 2048

/**
 * True when a parsed document nests at most `maxDepth` levels and every number in it prints back
 * as itself in JSON (not ±Infinity, not -0). One walk serves both; it recurses at most `maxDepth`
 * levels and allocates nothing (it runs on every explicit request).
 */
function printable(value: unknown, depth: number, maxDepth: number): boolean {
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0)
  if (value === null || typeof value !== 'object') return true
  if (depth > maxDepth) return false
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!printable(value[i], depth + 1, maxDepth)) return false
    return true
  }
  for (const key in value) {
    if (Object.hasOwn(value, key) && !printable((value as Record<string, unknown>)[key], depth + 1, maxDepth)) return false
  }
  return true
}

/**
 * The key of a document: its JSON text (hashed when long) and that text's length, or undefined when
 * it nests deeper than `maxDepth` (it is never printed) or the text would not tell it apart from
 * another document (1e400 and null, -0 and 0 print alike).
 */
export function contentKey(document: object, maxDepth: number): { key: string; size: number } | undefined {
  if (!printable(document, 1, maxDepth)) return undefined
  return textKey(JSON.stringify(document))
}

/** The key of a document's JSON text (hashed when long) and that text's length. */
export function textKey(text: string): { key: string; size: number } {
  return { key: text.length <= KEY_TEXT_LIMIT ? text : createHash('sha256').update(text).digest('base64'), size: text.length }
}

/** Least recently used first out, within `entries` and `bytes` of document text. */
export class ContentCache<T> {
  private readonly items = new Map<string, { value: T; size: number }>()
  private held = 0

  constructor(
    private readonly entries: number,
    private readonly bytes: number
  ) {}

  get(key: string): T | undefined {
    const item = this.items.get(key)
    if (item === undefined) return undefined
    // Refresh its place in the least-recently-used order.
    this.items.delete(key)
    this.items.set(key, item)
    return item.value
  }

  /** Keep a value; one larger than a quarter of the byte bound would push out everything else and is not kept. */
  set(key: string, value: T, size: number): void {
    if (size > this.bytes / 4 || this.entries === 0) return
    this.items.set(key, { value, size })
    this.held += size
    while (this.items.size > this.entries || this.held > this.bytes) {
      const [oldest, evicted] = this.items.entries().next().value!
      this.items.delete(oldest)
      this.held -= evicted.size
    }
  }

  clear(): void {
    this.items.clear()
    this.held = 0
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.items.size, bytes: this.held }
  }
}
