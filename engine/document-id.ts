// Two rules of the mapping document (language.md §5, §6.2), kept apart from document.ts, which
// needs the keyword catalogue: the keywords' own modules use these, and the catalogue imports them.
import { isObject } from './values.js'

/** The `$id` a mapping registers by: a non-empty string, else undefined. The one test of "has an id". */
export function idOf(value: unknown): string | undefined {
  if (!isObject(value)) return undefined
  const id = value.$id
  return typeof id === 'string' && id !== '' ? id : undefined
}

/** A compound document's entry among its members: the last one (language.md §6.2); undefined when there are none. */
export function entryOf<T>(members: readonly T[]): T | undefined {
  return members[members.length - 1]
}
