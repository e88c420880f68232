// The options a mapping writes under `request` (request-plugin.md §1), checked before anything is
// evaluated or sent, by one check that speaks two ways (option-issues.ts): findings with rule ids
// for validation (REQ-1 … REQ-10), and the first finding thrown as InvalidRequestOptionsError when
// a call meets options no validation refused. Unknown keys are refused, so a typo or an attempt to
// set policy from a document (`timeoutMs`, `redirect` …) fails loudly instead of being ignored.
import { isObject, parsePointer, validate } from '../../engine/index.js'
import { MissingPackageError } from '../../support/optional.js'
import { readHeaders } from './headers.js'
import { clip, InvalidRequestOptionsError, type OptionIssue, type ReportIssue } from './option-issues.js'
import { compileScraper, type CompiledScraper } from './scraper.js'

const OPTION_KEYS = ['origin', 'pathname', 'search', 'url', 'method', 'headers', 'body', 'pointer', 'scraper'] as const

// CONNECT tunnels and TRACE/TRACK echo requests: nothing a mapping step has reason to send.
const REFUSED_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK'])
const METHOD = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

const URL_SCOPES = ['source', 'target', 'input', 'output'] as const
export type UrlScope = (typeof URL_SCOPES)[number]
const INVALID_URL_SCOPE = 'Invalid url: exactly one of source, target, input, or output'

/** The checked options of one call. */
export interface RequestOptions {
  readonly origin: string | undefined
  readonly pathname: string | undefined
  /** A literal `{ key: field }` object, or a `{ mapping: … }` descriptor. */
  readonly search: Readonly<Record<string, unknown>> | undefined
  /** The `url` option read: the scope to look in and the pointer into it. */
  readonly url: { readonly scope: UrlScope; readonly pointer: string } | undefined
  readonly method: string
  readonly headers: ReadonlyMap<string, string>
  /** A `{ mapping: … }` descriptor whose result is sent as JSON. */
  readonly body: Readonly<Record<string, unknown>> | undefined
  /** The engine's narrowing pointer, as written (a parse thread narrows to its path first). */
  readonly pointer: unknown
  /** The scraper option as written, and compiled. */
  readonly scraper: unknown
  readonly compiledScraper: CompiledScraper | undefined
}

/** True for the `{ mapping: … }` form of `search` and `body`. */
export function isMappingForm(value: Readonly<Record<string, unknown>>): boolean {
  return Object.hasOwn(value, 'mapping')
}

const isLiteral = (value: unknown): boolean => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'

function pointerParses(text: string): boolean {
  try {
    parsePointer(text)
    return true
  } catch {
    return false
  }
}

/** REQ-4: the `url` option, a pointer into the root output or `{ <scope>: pointer }`; undefined when wrong. */
function readUrl(url: unknown, report: ReportIssue): RequestOptions['url'] {
  let scope: UrlScope
  let pointer: unknown
  if (typeof url === 'string') {
    scope = 'output'
    pointer = url
  } else {
    const keys = isObject(url) ? Object.keys(url) : []
    if (keys.length !== 1 || !(URL_SCOPES as readonly string[]).includes(keys[0]!)) {
      report('REQ-4', INVALID_URL_SCOPE, ['url'])
      return undefined
    }
    scope = keys[0] as UrlScope
    pointer = (url as Record<string, unknown>)[scope]
    if (typeof pointer !== 'string') {
      report('REQ-4', INVALID_URL_SCOPE, ['url', scope])
      return undefined
    }
  }
  if (!pointerParses(pointer as string)) {
    report('REQ-4', `Invalid url pointer ${JSON.stringify(clip(pointer as string))} (${scope}): not a JSON Pointer`, typeof url === 'string' ? ['url'] : ['url', scope])
    return undefined
  }
  return { scope, pointer: pointer as string }
}

// Where the engine's validation places a descriptor checked as the one pairing of a document.
const WRAPPED = '/mapping/~1v'

/**
 * The `{ mapping: … }` form of `search` or `body` is a descriptor the plugin evaluates: checked as
 * the engine checks any descriptor (its well-formedness; names are looked up when it runs), each
 * finding under the engine's own rule, placed under the option.
 */
function checkMappingForm(option: 'search' | 'body', descriptor: Readonly<Record<string, unknown>>, report: ReportIssue): void {
  for (const error of validate({ mapping: { '/v': descriptor } }).errors) {
    const below = error.pointer.startsWith(WRAPPED) ? parsePointer(error.pointer.slice(WRAPPED.length)) : []
    report(error.rule, `request option ${option}: ${error.message}`, [option, ...below])
  }
}

/** REQ-10: the scraper compiled, or its fault reported. A missing cheerio is no fault of the document. */
function readScraper(spec: unknown, report: ReportIssue, missingThrows: boolean): CompiledScraper | undefined {
  try {
    return compileScraper(spec)
  } catch (error) {
    if (error instanceof MissingPackageError) {
      if (missingThrows) throw error
      return undefined
    }
    report('REQ-10', (error as Error).message, ['scraper'])
    return undefined
  }
}

/**
 * Every check of the options, each finding reported (REQ-1 … REQ-10); the options as read. With
 * `missingThrows`, a scraper that needs cheerio where it is not installed throws its
 * MissingPackageError (a call); without, it passes (validation: the document is not at fault).
 */
function inspect(options: unknown, report: ReportIssue, missingThrows: boolean): RequestOptions | undefined {
  if (!isObject(options)) {
    report('REQ-1', 'request options must be an object')
    return undefined
  }
  for (const key of Object.keys(options)) {
    if (!(OPTION_KEYS as readonly string[]).includes(key)) {
      report('REQ-2', `${clip(key)} is not a request option (known options: ${OPTION_KEYS.join(', ')})`, [key])
    }
  }
  const { origin, pathname, search, body } = options

  let url: RequestOptions['url']
  if (options.url !== undefined) {
    if (origin !== undefined || pathname !== undefined || search !== undefined) {
      report('REQ-3', 'request option url replaces origin, pathname and search: use one or the other', ['url'])
    }
    url = readUrl(options.url, report)
  } else {
    if (typeof origin !== 'string' || origin === '') {
      report('REQ-3', 'request needs url, or origin (a string) with an optional pathname and search', origin === undefined ? [] : ['origin'])
    } else if (!URL.canParse(origin)) {
      report('REQ-3', 'request option origin must be an absolute URL', ['origin'])
    }
    if (pathname !== undefined && typeof pathname !== 'string') report('REQ-5', 'request option pathname must be a string', ['pathname'])
    if (search !== undefined) {
      if (!isObject(search)) {
        report('REQ-6', 'request option search must be an object', ['search'])
      } else if (isMappingForm(search)) {
        checkMappingForm('search', search, report)
      } else {
        for (const [key, literal] of Object.entries(search)) {
          if (!isLiteral(literal)) {
            report('REQ-6', `search parameter ${clip(key)} must name a field of the pipeline value, or be a literal string, number or boolean`, ['search', key])
          }
        }
      }
    }
  }

  const methodGiven = options.method ?? 'GET'
  let method = 'GET'
  if (typeof methodGiven !== 'string' || !METHOD.test(methodGiven)) {
    report('REQ-7', 'request option method must be an HTTP method name', ['method'])
  } else {
    method = methodGiven.toUpperCase()
    if (REFUSED_METHODS.has(method)) report('REQ-7', `request method ${method} is not supported`, ['method'])
  }

  if (body !== undefined) {
    if (!isObject(body) || !isMappingForm(body)) report('REQ-9', 'request option body must be a mapping: { mapping: … }', ['body'])
    else if (method === 'GET' || method === 'HEAD') report('REQ-9', `request option body cannot be sent with ${method}`, ['body'])
    else checkMappingForm('body', body, report)
  }

  const headers = readHeaders(options.headers, report)
  const compiledScraper = options.scraper === undefined ? undefined : readScraper(options.scraper, report, missingThrows)

  return {
    origin: origin as string | undefined,
    pathname: pathname as string | undefined,
    search: search as Record<string, unknown> | undefined,
    url,
    method,
    headers,
    body: body as Record<string, unknown> | undefined,
    pointer: options.pointer,
    scraper: options.scraper,
    compiledScraper,
  }
}

/** The findings of the options a document writes under `request`, for validation (never throws). */
export function checkCallOptions(options: unknown): OptionIssue[] {
  const issues: OptionIssue[] = []
  try {
    inspect(options, (rule, message, at) => issues.push(at === undefined || at.length === 0 ? { rule, message } : { rule, message, at }), false)
  } catch (error) {
    // Nothing in the checks throws on a document; should something, it is a finding, not a crash.
    issues.push({ rule: 'REQ-1', message: `request options could not be checked: ${(error as Error).message}` })
  }
  return issues
}

// The options of a frozen document (every admitted one) are read once.
const readOptions = new WeakMap<object, RequestOptions>()

/** The checked options of a call; the first finding throws InvalidRequestOptionsError (422). */
export function readCallOptions(options: unknown): RequestOptions {
  const cached = isObject(options) ? readOptions.get(options) : undefined
  if (cached !== undefined) return cached
  let first: InvalidRequestOptionsError | undefined
  const read = inspect(options, (rule, message) => {
    first ??= new InvalidRequestOptionsError(message, rule)
  }, true)
  if (first !== undefined) throw first
  if (isObject(options) && Object.isFrozen(options)) readOptions.set(options, read!)
  return read!
}
