// Objects the plugin builds from response data (XML element names, meta tag names, scraper keys)
// take their keys from strangers; `__proto__` must land as an ordinary own member, never as a
// prototype change.

/** Set an own, enumerable data member, whatever its name. */
export function setMember(record: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true })
  } else {
    record[key] = value
  }
}

/** The own member of that name, or undefined. */
export function ownMember(record: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined
}
