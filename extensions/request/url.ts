// Where a call goes (request-plugin.md §1): `origin + pathname + ?search` built from the pipeline
// value, or a `url` read through a pointer from one of the evaluation's scopes.
import { readPointer, type EvaluationContext, isObject } from '../../engine/index.js'
import { redactUrl } from '../../support/redact.js'
import { isMappingForm, type RequestOptions } from './call-options.js'
import { clip, InvalidRequestOptionsError } from './option-issues.js'

const PLACEHOLDER = /\{\{([^}]+)\}\}/g

/**
 * A URL that cannot be built or parsed from what the mapping and its input gave: nothing is sent.
 * It declares the answer a host gives it (request-plugin.md §3; the service's error handler reads
 * `statusCode` and `responseCode`, http.md §3): 422, since the request, not the service, is at fault.
 */
export class InvalidUrlError extends TypeError {
  override readonly name = 'InvalidUrlError'
  readonly code = 'E_INVALID_URL'
  readonly statusCode = 422
  readonly responseCode = 'InvalidUrl'
}

/** A URL whose scheme the policy does not fetch (`file:`, `data:` …): nothing is sent; 422 as above. */
export class ProtocolRefusedError extends Error {
  override readonly name = 'ProtocolRefusedError'
  readonly code = 'E_PROTOCOL_REFUSED'
  readonly statusCode = 422
  readonly responseCode = 'ProtocolRefused'

  constructor(
    readonly protocol: string,
    url: string,
    allowed: readonly string[]
  ) {
    super(`Refused protocol ${protocol} for ${redactUrl(url)}: allowed protocols are ${allowed.join(', ')}`)
  }
}

/** Refuse a URL whose protocol the policy does not allow (request-plugin.md §2 `allowedProtocols`). */
export function refuseProtocol(url: URL, allowed: readonly string[]): void {
  if (!allowed.includes(url.protocol)) throw new ProtocolRefusedError(url.protocol, url.href, allowed)
}

/** The pipeline value's own field, or undefined (never something inherited). */
function field(value: unknown, name: string): unknown {
  if (!isObject(value)) return undefined
  return Object.hasOwn(value, name) ? value[name] : undefined
}

/**
 * Fill the `{{name}}` placeholders of a pathname template, each value percent-encoded as one path
 * segment. `.` and `..` would survive encoding and be normalized away by the URL parser, moving
 * the request up the path, so they are refused.
 */
function fillPathname(template: string, value: unknown): string {
  return template.replace(PLACEHOLDER, (_, name: string) => {
    const given = field(value, name)
    if (given === undefined || given === null) {
      throw new InvalidUrlError(`pathname placeholder {{${name}}} has no value: the pipeline value has no ${name}`)
    }
    if (!(typeof given === 'string' || typeof given === 'boolean' || (typeof given === 'number' && Number.isFinite(given)))) {
      throw new InvalidUrlError(`pathname placeholder {{${name}}} must be a string, number or boolean`)
    }
    const segment = String(given)
    if (segment === '.' || segment === '..') {
      throw new InvalidUrlError(`pathname placeholder {{${name}}} refused: the value ${JSON.stringify(segment)} is a dot segment`)
    }
    return encodeURIComponent(segment)
  })
}

/** Append one query entry: primitives as text, a list as repeated keys; absent values are left out. */
function appendParameter(params: URLSearchParams, key: string, given: unknown): void {
  if (given === undefined || given === null) return
  if (Array.isArray(given)) {
    for (const item of given) appendParameter(params, key, item)
    return
  }
  if (typeof given === 'string' || typeof given === 'number' || typeof given === 'boolean') {
    params.append(key, String(given))
    return
  }
  // A value the input gave (or a search mapping made): the request, not the service, is at fault.
  throw new InvalidUrlError(`search parameter ${clip(key)} must be a string, number, boolean or a list of them, got ${given === null ? 'null' : Array.isArray(given) ? 'a list' : typeof given}`)
}

/**
 * The query string of `search`. The literal form `{ key: field }` sends the pipeline value's
 * `field`, or the literal itself when that field is absent; the `{ mapping: … }` form is evaluated
 * against the pipeline value into a fresh target. `null` when that mapping short-circuited.
 */
async function buildSearch(
  search: Readonly<Record<string, unknown>>,
  value: unknown,
  context: EvaluationContext
): Promise<string | null> {
  const params = new URLSearchParams()
  if (isMappingForm(search)) {
    const mapped = await context.evaluateMapping(search, { source: value })
    if (mapped === null) return null
    for (const [key, given] of Object.entries(mapped)) appendParameter(params, key, given)
  } else {
    for (const [key, literal] of Object.entries(search)) {
      if (typeof literal !== 'string' && typeof literal !== 'number' && typeof literal !== 'boolean') {
        // readCallOptions refused this already (REQ-6).
        throw new InvalidRequestOptionsError(`search parameter ${clip(key)} must name a field of the pipeline value, or be a literal string, number or boolean`, 'REQ-6')
      }
      const fromValue = field(value, String(literal))
      appendParameter(params, key, fromValue === undefined || fromValue === null ? literal : fromValue)
    }
  }
  return params.toString()
}

/** Read the `url` option (checked by readCallOptions): its pointer in its scope. */
function readUrlOption(url: NonNullable<RequestOptions['url']>, value: unknown, context: EvaluationContext): unknown {
  const document = url.scope === 'source' ? value : context[url.scope]
  return readPointer(document, url.pointer)
}

/** Parse what was built or read into an absolute URL, or fail naming it. */
function parseUrl(text: unknown, origin: string): URL {
  if (typeof text !== 'string') {
    throw new InvalidUrlError(`request url from ${origin} must be a string, got ${text === null ? 'null' : typeof text}`)
  }
  try {
    return new URL(text)
  } catch {
    throw new InvalidUrlError(`Invalid URL: ${redactUrl(text)}`)
  }
}

/** The URL of a call, or `null` when a `search` mapping short-circuited (its errors are recorded). */
export async function locateUrl(options: RequestOptions, value: unknown, context: EvaluationContext): Promise<URL | null> {
  if (options.url !== undefined) return parseUrl(readUrlOption(options.url, value, context), 'the url option')
  let text = options.origin! + fillPathname(options.pathname ?? '', value)
  if (options.search !== undefined) {
    const query = await buildSearch(options.search, value, context)
    if (query === null) return null
    if (query !== '') text += (text.includes('?') ? '&' : '?') + query
  }
  return parseUrl(text, 'origin and pathname')
}
