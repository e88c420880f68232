// Outgoing headers (request-plugin.md §1 `headers`, §2 `allowHeaders`, §3 last point). The only
// headers the plugin can send are the literal ones a mapping writes, filtered by the instance's
// allowlist, plus the hop header; the headers of whatever HTTP request reached the host never get here.
import { HEADER_NAME } from './config.js'
import { isObject } from '../../engine/index.js'
import { clip, type ReportIssue } from './option-issues.js'

/**
 * Sent on every upstream request. A service that refuses requests carrying it (mapper-service
 * does) cannot be made to call itself by a mapping, however the URL is spelt, so one request can
 * never fan out into an unbounded chain of nested ones.
 */
export const HOP_HEADER = 'x-mapper-hop'
export const HOP_VALUE = '1'

// Framing and connection management belong to the HTTP client; a mapping that could set them
// could smuggle a second request or confuse the connection pool.
const RESERVED = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
])

const FIELD_VALUE = /^[^\0\r\n]*$/

/**
 * Check a mapping's literal `headers` object (rule REQ-8): names are tokens, values single-line
 * strings. Every fault is reported; the headers that passed come back, names lowercased.
 */
export function readHeaders(headers: unknown, report: ReportIssue): ReadonlyMap<string, string> {
  const checked = new Map<string, string>()
  if (headers === undefined) return checked
  if (!isObject(headers)) {
    report('REQ-8', 'request option headers must be an object of header names to string values', ['headers'])
    return checked
  }
  for (const [name, value] of Object.entries(headers)) {
    const at = ['headers', name]
    if (!HEADER_NAME.test(name)) {
      report('REQ-8', `request header name ${JSON.stringify(clip(name))} is not a valid HTTP field name`, at)
    } else if (RESERVED.has(name.toLowerCase())) {
      report('REQ-8', `request header ${name} is controlled by the HTTP client and cannot be set`, at)
    } else if (name.toLowerCase() === HOP_HEADER) {
      // Removing or changing it would let a mapping pass for an outside caller.
      report('REQ-8', `request header ${name} is set by the request plugin (loop protection) and cannot be set`, at)
    } else if (typeof value !== 'string' || !FIELD_VALUE.test(value)) {
      report('REQ-8', `request header ${clip(name)} must be a string without line breaks`, at)
    } else {
      checked.set(name.toLowerCase(), value)
    }
  }
  return checked
}

/** The headers the allowlist lets through (`null` = every one), names lowercased. */
export function forwardedHeaders(headers: ReadonlyMap<string, string>, allow: ReadonlySet<string> | null): Map<string, string> {
  const forwarded = new Map<string, string>()
  for (const [name, value] of headers) {
    if (allow === null || allow.has(name)) forwarded.set(name, value)
  }
  return forwarded
}
