// The optional packages (package.json `peerDependencies`, marked optional): the OpenTelemetry SDK and
// @fastify/otel for tracing, tsx for TypeScript modules, pino-pretty for `logging.format: pretty`,
// ioredis for rate limits shared in Redis (`rateLimit.redis`), cheerio for the request plugin's HTML
// and XML bodies. An install without them is the light one; each is imported here, by the feature
// that needs it, only once that feature is configured (cheerio: at the first HTML or XML body). The
// only module that may import a package outside `dependencies` (test/package-deps.test.ts). The
// types below are the little the service uses of each, so the published declarations name none of
// them (the compiler checks the packages against them here); cheerio's are checked by its one
// caller, extensions/request/cheerio.ts, which uses too much of it to restate.
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

/** cheerio, for the request plugin's HTML and XML bodies and its scraper; `feature` says which asked. */
export const loadCheerio = (feature: string): unknown => requireOptional('cheerio', feature, () => require('cheerio'))
