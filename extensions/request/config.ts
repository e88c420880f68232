// Construction config of the request plugin (request-plugin.md §2). Every key is checked when the
// plugin is built, so a deployment finds a wrong value at start-up, never at the first request.
// Nothing here can be set from a mapping: a document chooses what to fetch, never how safely.
import { isObject } from '../../engine/index.js'
import type { Dispatcher } from 'undici'
import { canonicalHost } from './private-network.js'

export type RedirectMode = 'refuse' | 'follow'

/** What `createRequest(config)` accepts. Every key is optional; `undefined` means the default. */
export interface RequestConfig {
  /** One deadline for the whole call: connection, every redirect hop and the body. Default 10000. */
  timeoutMs?: number
  /** `'refuse'` (default) fails on any redirect; `'follow'` follows safe GET redirects. */
  redirect?: RedirectMode
  /** Hops followed under `'follow'`, an integer 0–20. Default 2. */
  maxRedirects?: number
  /** Under `'follow'`, also allow `http:` → `https:` on the same host with default ports. Default true. */
  redirectHttpsUpgrade?: boolean
  /** `true` (default) forwards the mapping's literal headers; a list forwards only those names. */
  allowHeaders?: true | readonly string[]
  /** Throw (or reject) to refuse a URL; called before the first request and before every hop. */
  checkUrl?: (url: string) => void | Promise<void>
  /** Refuse destinations that resolve to loopback, private, link-local or other special-purpose addresses. */
  denyPrivateNetworks?: boolean
  /** Host names or IP literals exempt from `denyPrivateNetworks` (which they require). Default none. */
  allowHosts?: readonly string[]
  /** Schemes the plugin may fetch; a subset of `['http:', 'https:']` (the default). */
  allowedProtocols?: readonly string[]
  /** Larger bodies are refused while streaming. Default 10485760 (10 MiB). */
  maxResponseBytes?: number
  /**
   * The bytes of upstream bodies held at once by every call in this thread (read, parsing, being
   * handed back), at least `maxResponseBytes`. A call that finds it spent waits up to 1 s, then
   * fails with InFlightLimitError (503 `UpstreamBusy`). Default 67108864 (64 MiB).
   */
  maxBytesInFlight?: number
  /** The undici dispatcher to send through; default a shared keep-alive Agent. */
  dispatcher?: Dispatcher
}

/** The checked, defaulted config: the policy one plugin instance enforces. */
export interface RequestPolicy {
  readonly timeoutMs: number
  readonly redirect: RedirectMode
  readonly maxRedirects: number
  readonly redirectHttpsUpgrade: boolean
  /** `null` forwards every header; otherwise the lowercased names that may pass. */
  readonly allowHeaders: ReadonlySet<string> | null
  readonly checkUrl: ((url: string) => void | Promise<void>) | undefined
  readonly denyPrivateNetworks: boolean
  /** Canonical hosts (`canonicalHost`) that connect without the private-network check. */
  readonly allowHosts: ReadonlySet<string>
  readonly allowedProtocols: readonly string[]
  readonly maxResponseBytes: number
  readonly maxBytesInFlight: number
  /** The caller's dispatcher, or undefined for the plugin's shared Agent. */
  readonly dispatcher: Dispatcher | undefined
}

export const DEFAULTS = Object.freeze({
  timeoutMs: 10_000,
  redirect: 'refuse' as RedirectMode,
  maxRedirects: 2,
  redirectHttpsUpgrade: true,
  allowHeaders: true as const,
  denyPrivateNetworks: false,
  allowHosts: Object.freeze([] as string[]),
  allowedProtocols: Object.freeze(['http:', 'https:']),
  maxResponseBytes: 10_485_760,
  maxBytesInFlight: 67_108_864,
})

/** The schemes undici can fetch; `allowedProtocols` narrows this set and can never widen it. */
const FETCHABLE_PROTOCOLS: readonly string[] = ['http:', 'https:']

/** The largest delay `setTimeout` honours; beyond it Node fires at once. */
const MAX_TIMEOUT_MS = 2_147_483_647

const MAX_REDIRECTS_LIMIT = 20

const CONFIG_KEYS = [
  'timeoutMs',
  'redirect',
  'maxRedirects',
  'redirectHttpsUpgrade',
  'allowHeaders',
  'checkUrl',
  'denyPrivateNetworks',
  'allowHosts',
  'allowedProtocols',
  'maxResponseBytes',
  'maxBytesInFlight',
  'dispatcher',
] as const

/** An HTTP field name (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

function isInteger(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max
}

/** Check every key of a config and fill in the defaults; throws naming the first wrong key. */
export function resolvePolicy(config: unknown): RequestPolicy {
  if (config === undefined) config = {}
  if (!isObject(config)) throw new TypeError('request config must be an object')
  const given = config
  for (const key of Object.keys(given)) {
    if (!(CONFIG_KEYS as readonly string[]).includes(key)) {
      throw new TypeError(`${key} is not a request config key (known keys: ${CONFIG_KEYS.join(', ')})`)
    }
  }
  const pick = (key: (typeof CONFIG_KEYS)[number]): unknown => given[key]
  // Only `undefined` means "the default": a `null` is a wrong value like any other.
  const or = <T>(value: unknown, fallback: T): unknown => (value === undefined ? fallback : value)

  const timeoutMs = or(pick('timeoutMs'), DEFAULTS.timeoutMs)
  if (!isInteger(timeoutMs, 1, MAX_TIMEOUT_MS)) {
    throw new RangeError(`timeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS}`)
  }

  const redirect = or(pick('redirect'), DEFAULTS.redirect)
  if (redirect !== 'refuse' && redirect !== 'follow') {
    throw new TypeError(`Unsupported redirect mode ${describe(redirect)}: only "refuse" and "follow" are implemented`)
  }

  const maxRedirects = or(pick('maxRedirects'), DEFAULTS.maxRedirects)
  if (!isInteger(maxRedirects, 0, MAX_REDIRECTS_LIMIT)) {
    throw new RangeError(`maxRedirects must be an integer from 0 to ${MAX_REDIRECTS_LIMIT}`)
  }

  const redirectHttpsUpgrade = or(pick('redirectHttpsUpgrade'), DEFAULTS.redirectHttpsUpgrade)
  if (typeof redirectHttpsUpgrade !== 'boolean') throw new TypeError('redirectHttpsUpgrade must be a boolean')

  const allowHeadersGiven = or(pick('allowHeaders'), DEFAULTS.allowHeaders)
  let allowHeaders: ReadonlySet<string> | null
  if (allowHeadersGiven === true) {
    allowHeaders = null
  } else if (Array.isArray(allowHeadersGiven) && allowHeadersGiven.every((name) => typeof name === 'string' && HEADER_NAME.test(name))) {
    allowHeaders = new Set((allowHeadersGiven as string[]).map((name) => name.toLowerCase()))
  } else {
    throw new TypeError('allowHeaders must be true or a list of header names')
  }

  const checkUrl = pick('checkUrl')
  if (checkUrl !== undefined && typeof checkUrl !== 'function') throw new TypeError('checkUrl must be a function')

  const denyPrivateNetworks = or(pick('denyPrivateNetworks'), DEFAULTS.denyPrivateNetworks)
  if (typeof denyPrivateNetworks !== 'boolean') throw new TypeError('denyPrivateNetworks must be a boolean')

  const allowHosts = readAllowHosts(or(pick('allowHosts'), DEFAULTS.allowHosts))
  if (allowHosts.size > 0 && !denyPrivateNetworks) {
    // Read as a destination allowlist, the list would promise a restriction nothing enforces.
    throw new TypeError('allowHosts lists exceptions to denyPrivateNetworks, which must then be true')
  }

  const protocolsGiven = or(pick('allowedProtocols'), DEFAULTS.allowedProtocols)
  if (
    !Array.isArray(protocolsGiven) ||
    protocolsGiven.length === 0 ||
    !protocolsGiven.every((p) => typeof p === 'string' && FETCHABLE_PROTOCOLS.includes(p.toLowerCase()))
  ) {
    throw new TypeError('allowedProtocols must be a non-empty list drawn from "http:" and "https:"')
  }
  const allowedProtocols = Object.freeze([...new Set((protocolsGiven as string[]).map((p) => p.toLowerCase()))])

  const maxResponseBytes = or(pick('maxResponseBytes'), DEFAULTS.maxResponseBytes)
  if (!isInteger(maxResponseBytes, 1, Number.MAX_SAFE_INTEGER)) {
    throw new RangeError('maxResponseBytes must be a positive integer')
  }

  const maxBytesInFlight = or(pick('maxBytesInFlight'), Math.max(DEFAULTS.maxBytesInFlight, maxResponseBytes))
  if (!isInteger(maxBytesInFlight, maxResponseBytes, Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`maxBytesInFlight must be an integer of at least maxResponseBytes (${maxResponseBytes})`)
  }

  const dispatcher = pick('dispatcher')
  if (dispatcher !== undefined && !isDispatcher(dispatcher)) {
    throw new TypeError('dispatcher must be an undici Dispatcher (an object with dispatch and request methods)')
  }
  if (dispatcher !== undefined && denyPrivateNetworks) {
    // The address check lives in the connector of the plugin's own Agent; a foreign dispatcher
    // connects by its own rules, so the promise could not be kept.
    throw new TypeError('denyPrivateNetworks cannot be combined with a custom dispatcher: the check runs in the connector of the plugin\'s own Agent')
  }

  return Object.freeze({
    timeoutMs,
    redirect,
    maxRedirects,
    redirectHttpsUpgrade,
    allowHeaders,
    checkUrl: checkUrl as RequestPolicy['checkUrl'],
    denyPrivateNetworks,
    allowHosts,
    allowedProtocols,
    maxResponseBytes,
    maxBytesInFlight,
    dispatcher: dispatcher as Dispatcher | undefined,
  })
}

function readAllowHosts(given: unknown): ReadonlySet<string> {
  if (!Array.isArray(given)) throw new TypeError('allowHosts must be a list of host names or IP addresses')
  const hosts = new Set<string>()
  for (const entry of given) {
    const host = typeof entry === 'string' ? canonicalHost(entry) : null
    if (host === null) {
      throw new TypeError(`allowHosts entry ${JSON.stringify(entry) ?? String(entry)} is not a host name or IP address (no scheme, port, path or credentials)`)
    }
    hosts.add(host)
  }
  return hosts
}

function isDispatcher(value: unknown): value is Dispatcher {
  if (value === null || typeof value !== 'object') return false
  const candidate = value as Record<string, unknown>
  return typeof candidate.dispatch === 'function' && typeof candidate.request === 'function'
}

function describe(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value)
}
