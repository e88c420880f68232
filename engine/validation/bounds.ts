// Bounded validation reports (docs/engine.md, "The validation report"): a report never repeats a
// subtree of the document and never grows past a fixed size, however the document is built. A
// diagnostic echoes its descriptor only when the descriptor is small; a larger one is replaced by
// a summary, `{ "$omitted": "object", "bytes": 901234 }` (the type and the UTF-8 length of its
// JSON text), the diagnostic's `pointer` saying where it stands in the document. Past a total of
// bytes or of diagnostics, the rest are counted, not listed: `truncated: true`, `omitted: n`.
// Every size is measured once per object and report, so building a report costs what the
// document holds, never that times its nesting.

/** The bounds of one report. */
export interface ReportLimits {
  /** A descriptor (or an example's expected or actual value) whose JSON text is longer is summarized. */
  readonly echoBytes: number
  /** A message longer than this is cut (with `…`). */
  readonly messageChars: number
  /** The diagnostics (errors and warnings) a report lists at most. */
  readonly diagnostics: number
  /** The JSON bytes of the diagnostics a report lists at most (about: each is measured as printed). */
  readonly bytes: number
  /** The differences an `EXAMPLE-1` diagnostic lists at most. */
  readonly differences: number
}

export const REPORT_LIMITS: ReportLimits = Object.freeze({
  echoBytes: 2048,
  messageChars: 1024,
  diagnostics: 1000,
  bytes: 256 * 1024,
  differences: 100,
})

/** What stands for a value too large to echo. */
export interface Omitted {
  readonly $omitted: 'object' | 'array' | 'string'
  readonly bytes: number
}

/** Nesting past which a value is not measured further (it counts as too large to echo). */
const MEASURED_DEPTH = 256

/** The UTF-8 length of a string's JSON text, quotes and escapes included. */
function stringBytes(text: string): number {
  let bytes = 2
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x0c || c === 0x0a || c === 0x0d || c === 0x09) bytes += 2
    else if (c < 0x20) bytes += 6
    else if (c < 0x80) bytes += 1
    else if (c < 0x800) bytes += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4
      i++
    } else if (c >= 0xd800 && c <= 0xdfff) bytes += 6
    else bytes += 3
  }
  return bytes
}

/**
 * Measures values' JSON text, each object once: a report's diagnostics often hold one subtree
 * many times (every nesting level of a descriptor holds the levels below it).
 */
export class Sizer {
  private readonly known = new WeakMap<object, number>()

  /** The UTF-8 length of `value`'s JSON text (what JSON.stringify would print; Infinity past the measured depth). */
  size(value: unknown, depth = 0): number {
    switch (typeof value) {
      case 'string':
        return stringBytes(value)
      case 'number':
        return Number.isFinite(value) ? String(value).length : 4
      case 'boolean':
        return value ? 4 : 5
      case 'bigint':
        return String(value).length
      case 'object':
        break
      default:
        return 4
    }
    if (value === null) return 4
    const known = this.known.get(value)
    if (known !== undefined) return known
    if (depth >= MEASURED_DEPTH) return Infinity
    let bytes = 2
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) bytes += (i > 0 ? 1 : 0) + this.size(value[i], depth + 1)
    } else {
      let first = true
      for (const key of Object.keys(value)) {
        const member = (value as Record<string, unknown>)[key]
        if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue
        bytes += (first ? 0 : 1) + stringBytes(key) + 1 + this.size(member, depth + 1)
        first = false
      }
    }
    this.known.set(value, bytes)
    return bytes
  }

  /** `value` itself when its JSON text is at most `limit` bytes, else its summary. */
  echo(value: unknown, limit: number): unknown {
    if (value === null || (typeof value !== 'object' && typeof value !== 'string')) return value
    const bytes = this.size(value)
    if (bytes <= limit) return value
    return { $omitted: typeof value === 'string' ? 'string' : Array.isArray(value) ? 'array' : 'object', bytes: Number.isFinite(bytes) ? bytes : -1 } satisfies Omitted
  }
}

/** `text` cut to `limit` characters (the last one `…`) when longer. */
export function cutText(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`
}
