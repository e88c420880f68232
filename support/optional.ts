// The optional packages (package.json `peerDependencies`, marked optional): the OpenTelemetry SDK and
// @fastify/otel for tracing, tsx for TypeScript modules, pino-pretty for `logging.format: pretty`,
// ioredis for rate limits shared in Redis (`rateLimit.redis`), pg for a mapping store in PostgreSQL,
// cheerio for the request plugin's HTML and XML bodies. An install without them is the light one;
// each is imported here, by the feature that needs it, only once that feature is configured
// (cheerio: at the first HTML or XML body). The only module that may import a package outside
// `dependencies` (test/package-deps.test.ts). The types below are the little the service uses of
// each, so the published declarations name none of them (the compiler checks the packages against
// them here); cheerio's are checked by its one caller, extensions/request/cheerio.ts, which uses
// too much of it to restate.
import { createRequire } from 'node:module'
import type { FastifyPluginCallback } from 'fastify'
import type { DestinationStream } from 'pino'
import { ConfigError } from './config-error.js'

/** A configured feature's optional package that is not installed; the message says which to install. */
export class MissingPackageError extends ConfigError {
  override readonly name: string = 'MissingPackageError'
  constructor(readonly packageName: string, readonly feature: string) {
    super(`${feature} needs the package ${packageName}, which is not installed: npm install ${packageName}`)
  }
}

/** Whether `error` says `name` itself cannot be found (not a module it imports, nor a broken install of it). */
export function isMissingPackage(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false
  // "Cannot find package 'x' imported from …" (ESM) or "Cannot find module 'x'" (CommonJS).
  return typeof message === 'string' && (message.includes(`'${name}'`) || message.includes(`'${name}/`))
}

/** Settle with `load()`, or throw MissingPackageError when `name` is not installed. */
// Each import() below is typed unknown, then the module's interface above: the packages' own types
// are large (the OpenTelemetry SDK alone was a tenth of the type check), and their use is tested at run time.
async function loadOptional<T>(name: string, feature: string, load: () => Promise<unknown>): Promise<T> {
  try {
    return (await load()) as T
  } catch (error) {
    if (isMissingPackage(error, name)) throw new MissingPackageError(name, feature)
    throw error
  }
}

const require = createRequire(import.meta.url)

/** `loadOptional` for a caller that cannot wait: a synchronous parser (require caches the module). */
function requireOptional(name: string, feature: string, load: () => unknown): unknown {
  try {
    return load()
  } catch (error) {
    if (isMissingPackage(error, name)) throw new MissingPackageError(name, feature)
    throw error
  }
}

/**
 * Whether `name` is not installed, found without loading it: for a warning before its feature is
 * used. Any other failure to resolve it is left for that use to report.
 */
export function isMissing(name: string): boolean {
  try {
    require.resolve(name)
    return false
  } catch (error) {
    return isMissingPackage(error, name)
  }
}

export interface NodeSdkModule {
  NodeSDK: new (config: { metricReaders: []; logRecordProcessors: [] }) => { start(): void; shutdown(): Promise<void> }
}

export interface FastifyOtelModule {
  FastifyOtelInstrumentation: new (config: {
    instrumentHooks: boolean
    /** Called with each request span once it starts (its attributes set). */
    requestHook?: (span: { setAttribute(key: string, value: string): unknown }, request: { readonly url: string }) => void
  }) => { plugin(): FastifyPluginCallback }
}

export interface PinoPrettyModule {
  default: (options: { colorize: boolean; sync: boolean }) => DestinationStream
}

/** The ioredis options the rate-limit store sets (http/plugins/rate-limit/index.ts). */
export interface RedisClientOptions {
  connectTimeout: number
  commandTimeout: number
  maxRetriesPerRequest: number
  enableOfflineQueue: boolean
  retryStrategy: (attempt: number) => number
}

/** An ioredis client, as far as the service and @fastify/rate-limit's RedisStore use it. */
export interface RedisClient {
  readonly status: string
  on(event: 'error', listener: (error: Error) => void): unknown
  on(event: 'ready', listener: () => void): unknown
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void
  disconnect(): void
}

export interface IoredisModule {
  Redis: new (url: string, options: RedisClientOptions) => RedisClient
}

/**
 * What pg's Client and Pool are given (service/store/postgres.ts): timeouts in milliseconds;
 * statement_timeout and idle_in_transaction_session_timeout are sent to the server, which enforces
 * them; query_timeout and connectionTimeoutMillis are the client's own.
 */
export interface PgClientOptions {
  connectionString: string
  application_name: string
  connectionTimeoutMillis: number
  statement_timeout: number
  query_timeout: number
  idle_in_transaction_session_timeout: number
  keepAlive: boolean
  keepAliveInitialDelayMillis: number
}

export interface PgPoolOptions extends PgClientOptions {
  max: number
  idleTimeoutMillis: number
  /** Idle clients do not keep the process alive. */
  allowExitOnIdle: boolean
}

export interface PgQueryResult {
  readonly rows: Array<Record<string, unknown>>
}

/** What runs a query: a Pool (on any idle client), a PoolClient or a Client. */
export interface PgQueryable {
  query(text: string, values?: readonly unknown[]): Promise<PgQueryResult>
}

/** A client lent by the pool; `release(error)` with an error (or true) closes it instead of returning it. */
export interface PgPoolClient extends PgQueryable {
  release(error?: Error | boolean): void
  on(event: 'error', listener: (error: Error) => void): unknown
  removeListener(event: 'error', listener: (error: Error) => void): unknown
}

export interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>
  end(): Promise<void>
  /** An idle client's error: without a listener, the process would end on it. */
  on(event: 'error', listener: (error: Error) => void): unknown
}

/** A LISTEN notification: `payload` is what pg_notify sent. */
export interface PgNotification {
  readonly channel: string
  readonly payload?: string
}

/** A connection of its own, outside the pool. */
export interface PgClient extends PgQueryable {
  connect(): Promise<void>
  end(): Promise<void>
  on(event: 'notification', listener: (message: PgNotification) => void): unknown
  on(event: 'error', listener: (error: Error) => void): unknown
  on(event: 'end', listener: () => void): unknown
}

/**
 * pg, as far as the PostgreSQL store uses it. pg ships no declarations, so the compiler cannot
 * check it against these: test/store-postgres.test.ts does, against a real server.
 */
export interface PgModule {
  Pool: new (options: PgPoolOptions) => PgPool
  Client: new (options: PgClientOptions) => PgClient
}

export interface TsxModule {
  register(): unknown
}

/** The OpenTelemetry Node SDK, for tracing configured by the OTEL_* environment. */
export const loadNodeSdk = (): Promise<NodeSdkModule> =>
  loadOptional('@opentelemetry/sdk-node', 'Tracing (configured by the OTEL_* environment)', () => import('@opentelemetry/sdk-node') as Promise<unknown>)

/** @fastify/otel's instrumentation, for request spans once a tracer provider is registered. */
export const loadFastifyOtel = (): Promise<FastifyOtelModule> =>
  loadOptional('@fastify/otel', 'Tracing (an OpenTelemetry tracer provider is registered)', () => import('@fastify/otel') as Promise<unknown>)

/** tsx's ESM loader, for TypeScript modules named by MAPPINGS or EXTENSIONS. */
export const loadTsx = (feature: string): Promise<TsxModule> => loadOptional('tsx', feature, () => import('tsx/esm/api') as Promise<unknown>)

/** pino-pretty, for `logging.format: pretty`. */
export const loadPinoPretty = (): Promise<PinoPrettyModule> => loadOptional('pino-pretty', 'options.logging.format "pretty"', () => import('pino-pretty') as Promise<unknown>)

/** ioredis, for `rateLimit.redis`. */
export const loadIoredis = (): Promise<IoredisModule> => loadOptional('ioredis', 'options.rateLimit.redis', () => import('ioredis') as Promise<unknown>)

/**
 * pg, for a mapping store in PostgreSQL (service/store/postgres.ts); `feature` names what asked for
 * it in the message when pg is missing. Required, not imported: pg ships no declarations, and an
 * import() of it fails the type check without @types/pg, which the project does without.
 */
export const loadPg = (feature = 'A mapping store in PostgreSQL'): Promise<PgModule> => loadOptional('pg', feature, async () => require('pg') as unknown)

/** cheerio, for the request plugin's HTML and XML bodies and its scraper; `feature` says which asked. */
export const loadCheerio = (feature: string): unknown => requireOptional('cheerio', feature, () => require('cheerio'))
