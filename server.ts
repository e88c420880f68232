// The standalone server: `buildServer(config)` builds a Fastify instance (not yet listening) around
// the service plugin, with its logger, body limit, request ids and connection limits
// (`options.server`); `startFromEnvironment` reads PORT, MAPPINGS, EXTENSIONS and OPTIONS /
// OPTIONS_FILE, starts OpenTelemetry when the OTEL_* environment asks for traces, listens, and
// shuts down gracefully.
import { resolve } from 'node:path'
import closeWithGrace from 'close-with-grace'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import pino, { type Logger } from 'pino'
import { servicePlugin, type ServerPluginOptions } from './app.js'
import { loadExtensions } from './sources/extensions.js'
import { MODULE_EXTENSIONS, SourceError, extensionOf } from './sources/files.js'
import { bundledMappingsPath, loadMappings, type MappingsInput } from './sources/mappings.js'
import { readOptions } from './config/read-options.js'
import { ConfigError, resolveConfig, type ServerConfig, type ServiceConfig } from './config/resolve.js'
import { loadPinoPretty } from './support/optional.js'
import { startTelemetry } from './observability/telemetry.js'
import { watchMappings } from './sources/watch.js'
import { isObject, type Extensions } from './engine/index.js'
import { stockExtensions } from './extensions/stock.js'
import { clientErrorHandler } from './http/client-errors.js'
import { RegistrationError } from './service/mapping-service.js'
import { frameworkErrorHandler } from './http/plugins/errors.js'
import { cachedSerializerBuilder } from './http/serializers.js'
import { REDACTED_PATHS } from './http/plugins/logging.js'
import { Reloader, type MappingsSource } from './service/reloader.js'
import { requestIdFor } from './http/plugins/request-id.js'
import { loadOffThread } from './workers/load.js'
import { releaseMemoryWhenIdle } from './service/idle-memory.js'
import type { Options } from './config/options-schema.js'

export const DEFAULT_PORT = 3333

export interface BuildConfig {
  mappings?: MappingsInput
  extensions?: Extensions
  /** The module `extensions` was loaded from: worker threads load their own copy (options.isolation). */
  extensionsModule?: string
  /** The options object (docs/spec/http.md §8), typed from its schema and validated at start. */
  options?: Options
  /** A logger to use instead of the one `options.logging` describes (tests pass a capturing one). */
  logger?: Logger
  /** Replaces the served mappings on demand (hot reload). */
  reloader?: Reloader
}

async function createLogger(config: ServiceConfig): Promise<Logger> {
  const options = {
    level: config.logging.level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  }
  // pino-pretty is an optional package (support/optional.ts), loaded only for this format.
  if (config.logging.format === 'pretty') return pino(options, (await loadPinoPretty()).default({ colorize: false, sync: true }))
  // Written asynchronously: a line joins a buffer on the event loop and the write happens on
  // libuv's thread pool, lines gathered while one is in flight going out in the next write. One
  // synchronous write per request cost as much as sending the response (a third of /map's
  // throughput). Nothing waits for a quiet moment: a line is written as soon as no write is in
  // flight. pino flushes what is buffered synchronously when the process exits, however it exits.
  return pino(options, pino.destination({ dest: 1, sync: false }))
}

/**
 * Node checks headersTimeout and requestTimeout on an interval (30 s unless told), so a 10 s
 * headersTimeout could let a slow client hold its connection for 40 s: check every second, or four
 * times within a shorter headersTimeout.
 */
const checkingInterval = (limits: ServerConfig): number => Math.max(25, Math.min(1000, Math.floor(limits.headersTimeout / 4)))

/** Fastify's trustProxy for options.server.trustProxy: a hop count trusts that many proxies nearest the service. */
function trustedProxies(trust: ServerConfig['trustProxy']): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust === 'number') return (_address, hop) => hop < trust
  return typeof trust === 'boolean' ? trust : [...trust]
}

/** A Fastify instance serving mapper-service at the root, not yet listening. */
export async function buildServer(build: BuildConfig = {}): Promise<FastifyInstance> {
  const config = resolveConfig(build.options)
  const ids = { prefix: config.requestIdPrefix, trust: config.trustRequestId }
  const logger = (build.logger ?? (await createLogger(config))) as FastifyBaseLogger
  const limits = config.server
  const app = Fastify({
    loggerInstance: logger,
    // This service writes its own one line per request (http/plugins/logging.ts).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    bodyLimit: config.maxBodyBytes,
    genReqId: (raw) => requestIdFor(raw, ids),
    // No child logger per request: the one line per request carries its requestId itself.
    childLoggerFactory: (logger) => logger,
    requestIdHeader: false,
    // A URL that does not decode fails before routing; it still gets the error body and request id.
    frameworkErrors: frameworkErrorHandler({ maxBodyBytes: config.maxBodyBytes, errorDetail: config.errorDetail }),
    // While draining, requests on connections already open are served (with our error body and
    // request id, which Fastify's own 503 would lack) and each response closes its connection.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Slow and idle clients (options.server): each phase of a connection has a bound.
    requestTimeout: limits.requestTimeout,
    keepAliveTimeout: limits.keepAliveTimeout,
    connectionTimeout: limits.connectionTimeout,
    // request.ip (the rate-limit key, the log) is the forwarded client only behind a trusted proxy.
    trustProxy: trustedProxies(limits.trustProxy),
    http: {
      requestTimeout: limits.requestTimeout,
      headersTimeout: limits.headersTimeout,
      maxHeaderSize: limits.maxHeaderSize,
      connectionsCheckingInterval: checkingInterval(limits),
    },
    // 400, 408 and 431 from Node's parser: our error body, and never the raw request in the log.
    clientErrorHandler: clientErrorHandler({ log: logger, requestIdPrefix: config.requestIdPrefix, maxHeaderSize: limits.maxHeaderSize }),
    // Each distinct response schema compiled once per process (http/serializers.ts).
    schemaController: { compilersFactory: { buildSerializer: cachedSerializerBuilder } },
  })
  // Beyond the cap a connection is closed as it arrives: file descriptors stay for those served.
  app.server.maxConnections = limits.maxConnections
  // A keep-alive client (a load balancer, a probe) would otherwise hold its socket, and so the
  // shutdown, open until its idle timeout: once closing, every response says `Connection: close`.
  let draining = false
  app.addHook('preClose', async () => {
    draining = true
  })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) reply.header('connection', 'close')
    done(null, payload)
  })
  await app.register(servicePlugin, {
    mappings: build.mappings,
    extensions: build.extensions,
    extensionsModule: build.extensionsModule,
    config,
    serverIds: true,
    reloader: build.reloader,
  } satisfies ServerPluginOptions)
  await app.ready()
  return app
}

/** Name the setting a source error came from: `MAPPINGS: <file> does not parse as JSON (line 3…)`. */
async function fromSetting<T>(setting: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (error) {
    if (error instanceof SourceError) throw new SourceError(`${setting}: ${error.message}`)
    throw error
  }
}

const isSet = (value: string | undefined): value is string => value !== undefined && value !== ''

/**
 * STORE_URL as options.store.url (the mapping store: README "Managed mappings"), where the options
 * name none; both naming one refuse to start, since neither can be taken for the other.
 */
function withStoreUrl(options: Record<string, unknown>, url: string | undefined): Record<string, unknown> {
  if (!isSet(url)) return options
  const given = isObject(options.store) ? options.store.url : undefined
  if (given !== undefined && given !== url) throw new ConfigError('STORE_URL and options.store.url name two different stores: set one of them')
  return { ...options, store: { ...(isObject(options.store) ? options.store : {}), url } }
}

/** Everything the environment configures (http.md §8); throws a one-line error on any mistake. */
export async function configFromEnvironment(
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void
): Promise<BuildConfig & { port: number; mappingsPath: string }> {
  const options = withStoreUrl(await readOptions(env), env.STORE_URL)
  const timeoutMs = resolveConfig(options).server.loadTimeout
  const portText = env.PORT ?? String(DEFAULT_PORT)
  const port = Number(portText)
  if (!/^\d+$/.test(portText) || port < 0 || port > 65535) throw new ConfigError(`PORT must be a port number, not ${JSON.stringify(portText)}`)
  const mappingsPath = isSet(env.MAPPINGS) ? env.MAPPINGS : bundledMappingsPath()
  const mappings = await fromSetting('MAPPINGS', () => loadMappings(mappingsPath, { warn, timeoutMs }))
  if (!isSet(env.EXTENSIONS)) return { options, mappings, extensions: stockExtensions(env), port, mappingsPath }
  const extensions = await fromSetting('EXTENSIONS', () => loadExtensions(env.EXTENSIONS!, { timeoutMs }))
  return { options, mappings, extensions, extensionsModule: resolve(env.EXTENSIONS), port, mappingsPath }
}

/**
 * What a reload reads: the MAPPINGS directory or document file again. A module is imported once
 * per process (Node keeps no way to forget an ES module), so its mappings change with a restart.
 */
function reloadSource(path: string, warn: (message: string) => void, timeoutMs: number, maxBytes: number): { source: MappingsSource; watchable: boolean } {
  if (MODULE_EXTENSIONS.has(extensionOf(path))) {
    return {
      source: () => {
        throw new SourceError(`MAPPINGS: ${path} is a module; its mappings are loaded once, restart the service to change them`)
      },
      watchable: false,
    }
  }
  // Read and parsed in a thread of its own, within reload.maxBytes: the service answers meanwhile.
  return { source: () => fromSetting('MAPPINGS', () => loadOffThread({ path, timeoutMs, maxBytes }, warn)), watchable: true }
}

/**
 * SIGHUP, and changes under MAPPINGS when `reload.watch` is on, reload the mappings; resolves,
 * once every directory is watched, with the stop.
 */
async function reloadTriggers(
  path: string,
  watchable: boolean,
  reloader: Reloader,
  reload: ServiceConfig['reload'],
  warn: (message: string) => void
): Promise<() => void> {
  const watching = reload.watch && watchable ? watchMappings(path, () => { void trigger() }, reload.debounce, warn) : undefined
  // Watching first, reading second: a change made while the set loads is seen, and reloads again.
  const trigger = async (): Promise<void> => {
    await watching?.rearm()
    await reloader.reload()
  }
  await watching?.rearm()
  const onHangup = (): void => { void trigger() }
  process.on('SIGHUP', onHangup)
  return () => {
    process.off('SIGHUP', onHangup)
    watching?.close()
  }
}

/** Listening failures a deployment causes (port taken, privileged port, unknown host). */
const LISTEN_ERRORS = new Set(['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN'])

/** The errors that mean "this configuration cannot start", reported as one line. */
export function isStartupError(error: unknown): boolean {
  return (
    error instanceof ConfigError ||
    error instanceof SourceError ||
    error instanceof RegistrationError ||
    (error instanceof Error && /Plugin ".*" cannot be registered/.test(error.message)) ||
    (error instanceof Error && LISTEN_ERRORS.has(String((error as NodeJS.ErrnoException).code)))
  )
}

/** The one line the command prints on stderr when the service cannot start. */
export function startupFailureLine(error: unknown): string {
  if (isStartupError(error)) return `mapper-service: ${(error as Error).message}\n`
  return `mapper-service: could not start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`
}

/** Serve from the environment; resolves with the listening server. */
export async function startFromEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<FastifyInstance> {
  const warn = (message: string): void => {
    process.stderr.write(`mapper-service: ${message}\n`)
  }
  const { port, mappingsPath, ...build } = await configFromEnvironment(env, warn)
  const config = resolveConfig(build.options)
  const { source, watchable } = reloadSource(mappingsPath, warn, config.server.loadTimeout, config.reload.maxBytes)
  const reloader = new Reloader(source)
  // Before the server is built: the service decides whether to trace as it is registered.
  const telemetry = await startTelemetry(env)
  let app: FastifyInstance
  let stopReloading = (): void => {}
  try {
    app = await buildServer({ ...build, reloader })
    // Watched before it listens (the reloader is attached once the app is ready): a service that
    // answers sees every change made from then on.
    await app.ready()
    stopReloading = await reloadTriggers(mappingsPath, watchable, reloader, config.reload, warn)
    await app.listen({ port, host: config.host })
  } catch (error) {
    stopReloading()
    await telemetry?.shutdown()
    throw error
  }
  // This process is the service's own: what a burst leaves is given back once it is idle.
  const idleRelease = releaseMemoryWhenIdle(app.server)
  // SIGHUP reloads (above); it does not stop the service.
  closeWithGrace({ delay: 10000, skip: ['SIGHUP'] }, async ({ signal, err }) => {
    stopReloading()
    idleRelease.stop()
    if (err !== undefined) app.log.error({ err }, 'shutting down after an error')
    else app.log.info({ signal }, 'shutting down')
    await app.close()
    await telemetry?.shutdown()
  })
  return app
}
