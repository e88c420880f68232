// The options a mapping writes under `request` (request-plugin.md §1), checked before anything is
// evaluated or sent. Unknown keys are refused, so a typo or an attempt to set policy from a
// document (`timeoutMs`, `redirect` …) fails loudly instead of being ignored.
import { isObject } from '../../engine/index.js'
import { readHeaders } from './headers.js'

const OPTION_KEYS = ['origin', 'pathname', 'search', 'url', 'method', 'headers', 'body', 'pointer', 'scraper'] as const

// CONNECT tunnels and TRACE/TRACK echo requests: nothing a mapping step has reason to send.
const REFUSED_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK'])
const METHOD = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** The checked options of one call. */
export interface RequestOptions {
  readonly origin: string | undefined
  readonly pathname: string | undefined
  /** A literal `{ key: field }` object, or a `{ mapping: … }` descriptor. */
  readonly search: Readonly<Record<string, unknown>> | undefined
  readonly url: unknown
  readonly method: string
  readonly headers: ReadonlyMap<string, string>
  /** A `{ mapping: … }` descriptor whose result is sent as JSON. */
  readonly body: Readonly<Record<string, unknown>> | undefined
  readonly scraper: unknown
}

/** True for the `{ mapping: … }` form of `search` and `body`. */
export function isMappingForm(value: Readonly<Record<string, unknown>>): boolean {
  return Object.hasOwn(value, 'mapping')
}

export function readCallOptions(options: unknown): RequestOptions {
  if (!isObject(options)) throw new TypeError('request options must be an object')
  for (const key of Object.keys(options)) {
    if (!(OPTION_KEYS as readonly string[]).includes(key)) {
      throw new TypeError(`${key} is not a request option (known options: ${OPTION_KEYS.join(', ')})`)
    }
  }
  const { origin, pathname, search, url, body } = options

  if (url !== undefined) {
    if (origin !== undefined || pathname !== undefined || search !== undefined) {
      throw new TypeError('request option url replaces origin, pathname and search: use one or the other')
    }
  } else {
    if (typeof origin !== 'string' || origin === '') {
      throw new TypeError('request needs url, or origin (a string) with an optional pathname and search')
    }
    if (pathname !== undefined && typeof pathname !== 'string') throw new TypeError('request option pathname must be a string')
    if (search !== undefined && !isObject(search)) throw new TypeError('request option search must be an object')
  }

  const methodGiven = options.method ?? 'GET'
  if (typeof methodGiven !== 'string' || !METHOD.test(methodGiven)) {
    throw new TypeError('request option method must be an HTTP method name')
  }
  const method = methodGiven.toUpperCase()
  if (REFUSED_METHODS.has(method)) throw new TypeError(`request method ${method} is not supported`)

  if (body !== undefined) {
    if (!isObject(body) || !isMappingForm(body)) throw new TypeError('request option body must be a mapping: { mapping: … }')
    if (method === 'GET' || method === 'HEAD') throw new TypeError(`request option body cannot be sent with ${method}`)
  }

  return {
    origin: origin as string | undefined,
    pathname: pathname as string | undefined,
    search: search as Record<string, unknown> | undefined,
    url,
    method,
    headers: readHeaders(options.headers),
    body: body as Record<string, unknown> | undefined,
    scraper: options.scraper,
  }
}
