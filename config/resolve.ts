// Configuration (http.md §8): the options object validated against its TypeBox schema, defaults
// filled in, and the cross-field rules a schema cannot state checked — all at startup, so a
// mistake fails the start instead of surfacing at the first request. Service-wide options only: the
// options a plugin owns (auth, rateLimit) are checked here against the schema and handed to it as
// given; the plugin checks the rest and resolves them as it is registered (http/plugins/auth/,
// http/plugins/rate-limit/), which the start waits for all the same.
import { availableParallelism } from 'node:os'
import { getHeapStatistics } from 'node:v8'
import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler, type ValueError } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import { isObject, resolveLimits, type Limits } from '../engine/index.js'
import { didYouMean } from '../engine/suggest.js'
import { OptionsSchema, type AuthOptions, type Claims, type Options, type RateLimitOptions } from './options-schema.js'
import { ConfigError } from '../support/config-error.js'
import { list } from '../support/list.js'

export interface StoreConfig {
  readonly url: string
  readonly keepVersions: number
  readonly maxMappings: number
  readonly resyncMs: number
}

export interface CorsConfig {
  readonly origin: '*' | readonly string[]
  readonly methods: string
  readonly headers: string
}

export interface ServiceConfig {
  /**
   * options.auth as given (its shape checked; null: auth off). The auth plugin checks and resolves
   * the rest as it is registered (http/plugins/auth/options.ts); the rest of the service asks only
   * whether auth is on.
   */
  readonly auth: AuthOptions | null
  readonly cors: CorsConfig | null
  readonly logging: { readonly format: 'json' | 'pretty'; readonly level: string; readonly slowThreshold: number }
  readonly errorDetail: 'minimal' | 'full'
  readonly maxBodyBytes: number
  readonly requestIdPrefix: string
  readonly trustRequestId: boolean
  readonly map: {
    readonly invalidStatus: number | undefined
    readonly claims: Claims | undefined
    readonly explicit: false | { readonly claims: Claims | undefined; readonly stdout: boolean; readonly cacheBytes: number }
    /** Who may ask for explain traces: nobody, or callers with these claims (none: every caller of /map). */
    readonly explain: false | { readonly claims: Claims | undefined }
  }
  readonly limits: { readonly registered: Readonly<Required<Limits>>; readonly explicit: Readonly<Required<Limits>> }
  readonly underPressure: false | UnderPressureConfig
  readonly validate: { readonly claims: Claims | undefined; readonly strict: boolean }
  readonly health: { readonly mapping: string | undefined; readonly timeout: number }
  readonly openapi: OpenApiConfig
  readonly playground: boolean
  readonly metrics: false | { readonly path: string; readonly claims: Claims | undefined }
  readonly host: string
  readonly server: ServerConfig
  readonly reload: { readonly watch: boolean; readonly debounce: number; readonly maxBytes: number }
  /**
   * options.rateLimit as given (`true` as no settings: the defaults), or false when off. The
   * rate-limit plugin checks and resolves it as it is registered (http/plugins/rate-limit/options.ts).
   */
  readonly rateLimit: false | RateLimitOptions
  /** Worker threads for caller-authored work; false when nothing is isolated. */
  readonly isolation: false | IsolationConfig
  /** The worker threads (isolation, upstream parsing) run in a child process at the lowest priority (workers/helper-process.ts). */
  readonly helperProcess: boolean
  /** The mapping store (managed mappings, PUT and DELETE /mappings/{id}); null: none, the write namespace answers 404. */
  readonly store: StoreConfig | null
  /** Who may write managed mappings. */
  readonly mappings: { readonly write: { readonly claims: Claims | undefined } }
  /** POST /map/stream: how long a stream may go without an answer or run at all, and how many run at once. */
  readonly stream: StreamConfig
}

/** The limits of POST /map/stream (options.stream, http/routes/stream.ts), every one filled in. */
export interface StreamConfig {
  /** Milliseconds a stream may go without answering a line (blank lines answer nothing); then it is ended. */
  readonly idleTimeout: number
  /** Milliseconds a stream may run at all; 0: no limit. */
  readonly maxDurationMs: number
  /** Streams open at once in this process; one more is answered 503. */
  readonly maxStreams: number
  /** Streams open at once from one client address (request.ip, by trustProxy); one more is answered 503. */
  readonly maxStreamsPerClient: number
}

/** A stream's longest life by default: an hour, ended with its last line (0 in options.stream: none). */
export const STREAM_MAX_DURATION_MS = 3_600_000

/** The OpenAPI document (options.openapi): the service's own, and how its routes show in a host's. */
export interface OpenApiConfig {
  /** GET /openapi.json is served. */
  readonly serve: boolean
  /** The routes are left out of any other @fastify/swagger document of the process (a host app's). */
  readonly hideFromHost: boolean
  /** Put before every operationId, in the service's own document and in a host's alike ('' none). */
  readonly operationIdPrefix: string
}

/** Worker threads for caller-authored work (options.isolation, workers/isolation.ts). */
export interface IsolationConfig {
  /** Explicit documents and explain traces go to the workers. */
  readonly explicit: boolean
  /**
   * POST /validate of a submitted document (validation and examples) goes to the workers, whatever
   * `explicit` says: on unless set false (validation grows with the document; the pool starts lazily).
   */
  readonly validate: boolean
  /**
   * Whether the options asked for any isolation. False when only `validate`'s default is on: then an
   * extension surface given as functions, which cannot cross into a thread, turns isolation off
   * rather than failing registration (app.ts).
   */
  readonly asked: boolean
  /**
   * Whether options.isolation itself was given. When it was not (isolation implied by
   * map.explicit), an extension surface given as functions turns isolation off with a warning
   * rather than failing registration (app.ts).
   */
  readonly configured: boolean
  /** Registered mappings go to the workers too (off: they run inline, the fast path). */
  readonly registered: boolean
  readonly threads: number
  /** Each worker's old-generation heap, in MiB. */
  readonly memoryMb: number
  /** Added to the evaluation's `timeMs` budget before its worker is terminated. */
  readonly graceMs: number
  /** Tasks that may wait for a worker beyond those running; one more is refused (503). */
  readonly queue: number
  /** How long a task may wait for a worker to begin it before it is refused (503). */
  readonly queueMs: number
  /** The threads run in the helper process (options.helperProcess), not in this one. */
  readonly helperProcess: boolean
}

const ISOLATION_DEFAULTS = { memoryMb: 256, graceMs: 1000, queue: 1024, queueMs: 10_000 } as const

/** The standalone server's connection limits (options.server), every one filled in. */
export interface ServerConfig {
  readonly requestTimeout: number
  readonly headersTimeout: number
  readonly keepAliveTimeout: number
  readonly connectionTimeout: number
  readonly maxConnections: number
  readonly maxHeaderSize: number
  readonly loadTimeout: number
  /** Fastify's trustProxy: false, true, a hop count, or the proxies' addresses and ranges. */
  readonly trustProxy: boolean | number | readonly string[]
}

export const SERVER_DEFAULTS: ServerConfig = {
  requestTimeout: 30000,
  headersTimeout: 10000,
  keepAliveTimeout: 5000,
  // The only bound on a response nobody reads: requestTimeout ends when the request is in.
  connectionTimeout: 60000,
  maxConnections: 10000,
  maxHeaderSize: 16384,
  loadTimeout: 10000,
  trustProxy: false,
}

/** Load shedding (options.underPressure): a threshold of 0 is not checked. */
export interface UnderPressureConfig {
  readonly maxEventLoopDelay: number
  readonly maxHeapUsedBytes: number
  readonly maxRssBytes: number
  readonly maxEventLoopUtilization: number
  readonly retryAfter: number
  readonly sampleInterval: number
}

/**
 * Budgets of explicit documents: a caller wrote them, so they get a fraction of what a deployment's
 * own mappings may use (engine/budget.ts DEFAULT_LIMITS apply to registered ones).
 */
export const EXPLICIT_LIMITS: Readonly<Required<Limits>> = Object.freeze({
  steps: 1_000_000,
  outputValues: 200_000,
  outputBytes: 8 * 1024 * 1024,
  builtBytes: 8 * 1024 * 1024,
  outputDepth: 1_000,
  fanOut: 100_000,
  depth: 200,
  timeMs: 2_000,
  pluginCalls: 20,
  patternInput: 20_000,
})

/**
 * Total document bytes of the compiled explicit-document cache. A compiled plan holds 70 to 140
 * times its document's text in heap, so 1 MiB of documents keeps about 70–140 MiB of plans.
 */
const EXPLICIT_CACHE_BYTES = 1024 * 1024

/** The heap fraction above which requests are shed by default. */
const HEAP_SHED_FRACTION = 0.9

function resolveUnderPressure(options: Options['underPressure']): false | UnderPressureConfig {
  if (options === false) return false
  return {
    maxEventLoopDelay: options?.maxEventLoopDelay ?? 1000,
    maxHeapUsedBytes: options?.maxHeapUsedBytes ?? Math.floor(getHeapStatistics().heap_size_limit * HEAP_SHED_FRACTION),
    maxRssBytes: options?.maxRssBytes ?? 0,
    maxEventLoopUtilization: options?.maxEventLoopUtilization ?? 0,
    retryAfter: options?.retryAfter ?? 10,
    sampleInterval: options?.sampleInterval ?? 1000,
  }
}

function resolveBudgets(options: Options['limits']): ServiceConfig['limits'] {
  const { explicit, ...registered } = options ?? {}
  return { registered: resolveLimits(registered), explicit: resolveLimits(explicit, EXPLICIT_LIMITS) }
}

/** options.rateLimit as its plugin takes it: off, or its settings (`true` gives none: the defaults). */
function rateLimitOptions(option: Options['rateLimit']): false | RateLimitOptions {
  if (option === undefined || option === false) return false
  return option === true ? {} : option
}

/** The paths the service's own routes take: the metrics endpoint may take none of them. */
const SERVICE_PATHS = new Set(['/map', '/validate', '/health', '/health/mapping', '/mappings', '/extensions', '/openapi.json', '/schema/mapping.json', '/playground'])

function resolveMetrics(options: Options['metrics']): ServiceConfig['metrics'] {
  if (options === false) return false
  const path = (typeof options === 'object' ? options.path : undefined) ?? '/metrics'
  if (SERVICE_PATHS.has(path)) throw new ConfigError(`options.metrics.path: ${path} is already a route of this service`)
  return { path, claims: typeof options === 'object' ? options.claims : undefined }
}

export { ConfigError }

const checkOptions = TypeCompiler.Compile(OptionsSchema)

/** The parts of a TypeBox schema the walk for unknown options reads. */
interface SchemaNode {
  readonly type?: unknown
  readonly properties?: Readonly<Record<string, SchemaNode>>
  readonly additionalProperties?: unknown
  readonly anyOf?: readonly SchemaNode[]
}

interface UnknownOption {
  /** `options.map.explict` */
  readonly path: string
  readonly key: string
  /** The path of the object holding it (`options.map`) and the keys it may hold. */
  readonly parent: string
  readonly known: readonly string[]
}

/**
 * The first key of `value` that its schema refuses as unknown, searched in document order through
 * nested objects and through the object choices of a union (`isolation: false | {…}`), where
 * TypeBox reports only that no choice fits. In a union, a key counts as unknown only when every
 * object choice refuses it; undefined when the schema does not apply to the value at all.
 */
function unknownOption(schema: SchemaNode, value: unknown, path: string): UnknownOption | undefined {
  if (schema.anyOf !== undefined) {
    let first: UnknownOption | undefined
    for (const choice of schema.anyOf) {
      if (choice.anyOf === undefined && (choice.type !== 'object' || choice.properties === undefined)) continue
      const found = unknownOption(choice, value, path)
      if (found === undefined) return undefined
      first ??= found
    }
    return first
  }
  if (schema.type !== 'object' || schema.properties === undefined || !isObject(value)) return undefined
  const properties = schema.properties
  for (const [key, member] of Object.entries(value)) {
    const at = `${path}.${key}`
    if (!Object.hasOwn(properties, key)) {
      if (schema.additionalProperties === false) return { path: at, key, parent: path, known: Object.keys(properties) }
      continue
    }
    const found = unknownOption(properties[key]!, member, at)
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * An object that fits none of a union's choices (`openapi: { operationIdPrefix: '1x' }`, `isolation:
 * { threads: 0 }`), where TypeBox says only "Expected union value": the first error of the one
 * object choice it was meant for, at its own path. Any other error as it is.
 */
function objectChoiceError(error: ValueError): Pick<ValueError, 'path' | 'message' | 'schema'> {
  const choices = (error.schema as { anyOf?: TSchema[] }).anyOf
  if (choices === undefined || !isObject(error.value)) return error
  const objects = choices.filter((choice) => (choice as { type?: unknown }).type === 'object')
  if (objects.length !== 1) return error
  const inner = Value.Errors(objects[0]!, error.value).First()
  return inner === undefined ? error : { path: `${error.path}${inner.path}`, message: inner.message, schema: inner.schema }
}

function resolveServer(server: Options['server'] = {}): ServerConfig {
  const requestTimeout = server.requestTimeout ?? SERVER_DEFAULTS.requestTimeout
  // Unset, it follows a shorter requestTimeout down (as Node does), so that one setting alone is valid.
  const headersTimeout = server.headersTimeout ?? Math.min(SERVER_DEFAULTS.headersTimeout, requestTimeout)
  if (headersTimeout > requestTimeout) {
    throw new ConfigError(`options.server.headersTimeout (${headersTimeout}) must not exceed options.server.requestTimeout (${requestTimeout}): the headers are part of the request`)
  }
  return {
    requestTimeout,
    headersTimeout,
    keepAliveTimeout: server.keepAliveTimeout ?? SERVER_DEFAULTS.keepAliveTimeout,
    connectionTimeout: server.connectionTimeout ?? SERVER_DEFAULTS.connectionTimeout,
    maxConnections: server.maxConnections ?? SERVER_DEFAULTS.maxConnections,
    maxHeaderSize: server.maxHeaderSize ?? SERVER_DEFAULTS.maxHeaderSize,
    loadTimeout: server.loadTimeout ?? SERVER_DEFAULTS.loadTimeout,
    trustProxy: typeof server.trustProxy === 'string' ? list(server.trustProxy) : (server.trustProxy ?? SERVER_DEFAULTS.trustProxy),
  }
}

/**
 * Who may ask for explain traces. A trace shows input values and the document's workings, which a
 * caller of the explicit form can see anyway (it may send any document), so by default the explicit
 * form's gate is explain's too.
 */
function resolveExplain(option: boolean | { claims?: Claims } | undefined, explicit: ServiceConfig['map']['explicit']): ServiceConfig['map']['explain'] {
  if (option === undefined) return explicit === false ? false : { claims: explicit.claims }
  if (option === false) return false
  return { claims: option === true ? undefined : option.claims }
}

/**
 * Validate and complete the options object; throws ConfigError naming the offending setting. The
 * options a plugin owns (auth, rateLimit) are checked here against the schema only, and handed to
 * the plugin, which checks the rest as it is registered.
 */
export function resolveConfig(raw: unknown = {}): ServiceConfig {
  const options = raw ?? {}
  if (!checkOptions.Check(options)) {
    // A misspelt option is named as such, with the option it was likely meant to be.
    const unknown = unknownOption(OptionsSchema as SchemaNode, options, 'options')
    if (unknown !== undefined) {
      throw new ConfigError(`${unknown.path}: not an option${didYouMean(unknown.key, unknown.known, (key) => `${unknown.parent}.${key}`)}`)
    }
    const first = objectChoiceError([...checkOptions.Errors(options)][0]!)
    const where = first.path === '' ? 'options' : `options${first.path.replace(/\//g, '.')}`
    // A choice among fixed values says which values it accepts.
    const choices = (first.schema as { anyOf?: Array<{ const?: unknown }> }).anyOf
    const message =
      choices !== undefined && choices.every((choice) => choice.const !== undefined)
        ? `must be one of ${choices.map((choice) => JSON.stringify(choice.const)).join(', ')}`
        : first.message
    throw new ConfigError(`${where}: ${message}`)
  }
  const auth = options.auth ?? null
  const explicit = options.map?.explicit
  const claimSettings: Array<[string, Claims | undefined]> = [
    ['options.map.claims', options.map?.claims],
    ['options.map.explicit.claims', typeof explicit === 'object' ? explicit.claims : undefined],
    ['options.map.explain.claims', typeof options.map?.explain === 'object' ? options.map.explain.claims : undefined],
    ['options.validate.claims', options.validate?.claims],
    ['options.metrics.claims', typeof options.metrics === 'object' ? options.metrics.claims : undefined],
    ['options.mappings.write.claims', options.mappings?.write?.claims],
  ]
  for (const [name, claims] of claimSettings) {
    if (claims !== undefined && auth === null) throw new ConfigError(`${name} needs options.auth: claims cannot be checked without authentication`)
  }
  const cors = options.cors
  const server = resolveServer(options.server)
  const explicitForm: ServiceConfig['map']['explicit'] =
    explicit === undefined || explicit === false
      ? false
      : explicit === true
        ? { claims: undefined, stdout: false, cacheBytes: EXPLICIT_CACHE_BYTES }
        : { claims: explicit.claims, stdout: explicit.stdout ?? false, cacheBytes: explicit.cacheBytes ?? EXPLICIT_CACHE_BYTES }
  return {
    auth,
    cors:
      cors === undefined
        ? null
        : {
            origin: cors.origin === undefined || cors.origin === '*' ? '*' : list(cors.origin),
            methods: list(cors.methods ?? 'GET, POST, OPTIONS').join(', '),
            headers: list(cors.headers ?? 'authorization, content-type').join(', '),
          },
    logging: {
      format: options.logging?.format ?? 'json',
      level: options.logging?.level ?? 'info',
      slowThreshold: options.logging?.slowThreshold ?? 1000,
    },
    errorDetail: options.errorDetail ?? 'minimal',
    maxBodyBytes: options.maxBodyBytes ?? 1048576,
    requestIdPrefix: options.requestIdPrefix ?? 'req_',
    trustRequestId: options.trustRequestId ?? false,
    map: {
      invalidStatus: options.map?.invalidStatus,
      claims: options.map?.claims,
      explicit: explicitForm,
      explain: resolveExplain(options.map?.explain, explicitForm),
    },
    limits: resolveBudgets(options.limits),
    underPressure: resolveUnderPressure(options.underPressure),
    validate: { claims: options.validate?.claims, strict: options.validate?.strict === true },
    health: { mapping: options.health?.mapping, timeout: options.health?.timeout ?? 5000 },
    openapi: resolveOpenApi(options.openapi),
    playground: options.playground ?? false,
    metrics: resolveMetrics(options.metrics),
    host: options.host ?? '0.0.0.0',
    server,
    reload: { watch: options.reload?.watch ?? true, debounce: options.reload?.debounce ?? 300, maxBytes: options.reload?.maxBytes ?? 16 * 1024 * 1024 },
    rateLimit: rateLimitOptions(options.rateLimit),
    isolation: resolveIsolation(options.isolation, explicitForm !== false, options.helperProcess ?? true),
    helperProcess: options.helperProcess ?? true,
    store: resolveStore(options.store),
    mappings: { write: { claims: options.mappings?.write?.claims } },
    stream: {
      // By default a stream may be as quiet as a request may be slow.
      idleTimeout: options.stream?.idleTimeout ?? server.requestTimeout,
      maxDurationMs: options.stream?.maxDurationMs ?? STREAM_MAX_DURATION_MS,
      maxStreams: options.stream?.maxStreams ?? 64,
      maxStreamsPerClient: options.stream?.maxStreamsPerClient ?? 8,
    },
  }
}

/** options.store, its defaults filled in; a URL that does not parse, or a file: URL that is not absolute, fails the start. */
function resolveStore(options: Options['store']): StoreConfig | null {
  if (options === undefined) return null
  let url: URL
  try {
    url = new URL(options.url)
  } catch {
    throw new ConfigError('options.store.url: not a URL (postgres://user:password@host:port/database, or file:///absolute/path)')
  }
  if (url.protocol === 'file:' && (url.host !== '' || url.pathname === '/' || url.search !== '' || url.hash !== '')) {
    throw new ConfigError('options.store.url: a file: URL names a directory on this machine, as file:///absolute/path (no host, query or fragment)')
  }
  return { url: options.url, keepVersions: options.keepVersions ?? 20, maxMappings: options.maxMappings ?? 1000, resyncMs: options.resyncMs ?? 30_000 }
}

/** options.openapi: `true` (the default) and `false` are whether the document is served; an object sets each part. */
function resolveOpenApi(options: Options['openapi']): OpenApiConfig {
  const given = typeof options === 'object' ? options : { serve: options ?? true }
  return { serve: given.serve ?? true, hideFromHost: given.hideFromHost ?? false, operationIdPrefix: given.operationIdPrefix ?? '' }
}

/**
 * options.isolation: explicit work isolated by default wherever the explicit form is on, and
 * /validate of a submitted document always (only `isolation: false` or `validate: false` keep it inline).
 */
function resolveIsolation(options: Options['isolation'], explicitForm: boolean, helperProcess: boolean): false | IsolationConfig {
  if (options === false) return false
  const explicit = options?.explicit ?? explicitForm
  const registered = options?.registered ?? false
  const validate = options?.validate ?? true
  if (!explicit && !registered && !validate) return false
  return {
    explicit,
    registered,
    validate,
    asked: options !== undefined || explicit || registered,
    configured: options !== undefined,
    threads: options?.threads ?? availableParallelism(),
    memoryMb: options?.memoryMb ?? ISOLATION_DEFAULTS.memoryMb,
    graceMs: options?.graceMs ?? ISOLATION_DEFAULTS.graceMs,
    queue: options?.queue ?? ISOLATION_DEFAULTS.queue,
    queueMs: options?.queueMs ?? ISOLATION_DEFAULTS.queueMs,
    helperProcess,
  }
}
