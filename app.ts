// mapper-service as a Fastify plugin: `app.register(mapperService, { mappings, extensions, options,
// reloader, prefix })`. It is encapsulated (not wrapped with fastify-plugin), so its hooks, error handler,
// body parser and CORS policy stay inside its own context and the host app is left as it was.
import type { FastifyPluginAsync } from 'fastify'
import { mappingEntries, type MappingEntry, type MappingsInput } from './config/mappings.js'
import { ConfigError, resolveConfig, type IsolationConfig, type ServiceConfig } from './config/resolve.js'
import type { Extensions } from './engine/index.js'
import { noteArrival } from './engine/slices.js'
import { stockExtensions, stockSettingsOf } from './extensions/stock.js'
import { authPlugin } from './plugins/auth.js'
import { bodyPlugin } from './plugins/body.js'
import { corsPlugin } from './plugins/cors.js'
import { enginePlugin } from './plugins/engine.js'
import { errorsPlugin } from './plugins/errors.js'
import { hopPlugin } from './plugins/hop.js'
import { loggingPlugin } from './plugins/logging.js'
import { metricsPlugin } from './plugins/metrics.js'
import { openapiPlugin } from './plugins/openapi.js'
import { pressurePlugin } from './plugins/pressure.js'
import { rateLimitPlugin } from './plugins/rate-limit.js'
import { requestIdPlugin } from './plugins/request-id.js'
import { serviceTracer, tracingPlugin } from './plugins/tracing.js'
import { healthRoutes } from './routes/health.js'
import { mapRoutes } from './routes/map.js'
import { methodRoutes, ServedPaths } from './routes/methods.js'
import { metricsRoutes } from './routes/metrics.js'
import { playgroundRoutes } from './routes/playground.js'
import { registryRoutes } from './routes/registry.js'
import { schemaRoutes } from './routes/schema.js'
import { streamRoutes } from './routes/stream.js'
import { validateRoutes } from './routes/validation.js'
import { cheerioWarning } from './runtime/cheerio-warning.js'
import { EngineRegistry } from './runtime/engine.js'
import type { ExtensionsSpec } from './runtime/isolation.js'
import { ServiceMetrics } from './runtime/metrics.js'
import { Evaluator } from './runtime/evaluator.js'
import { EvaluationObserver } from './runtime/observer.js'
import type { Reloader } from './runtime/reloader.js'
import { ErrorBodySchema } from './schemas/error.js'
import type { Options } from './schemas/options.js'

/** What a host passes to `app.register(mapperService, …)`, besides Fastify's own `prefix`. */
export interface MapperServiceOptions {
  /** The mappings to register (documents, entries from `loadMappings`, or `{ mappings }`). */
  mappings?: MappingsInput
  /** The extension surface; defaults to the stock one (the `request` plugin). */
  extensions?: Extensions
  /**
   * The module `extensions` came from (a path or file URL; its default export is the surface).
   * Worker threads (options.isolation) load their own copy from it: functions cannot cross into a
   * thread, so with isolation on, extensions other than the stock ones need it.
   */
  extensionsModule?: string
  /**
   * The options object (docs/spec/http.md §8), typed from its schema; validated again at
   * registration, so a JavaScript caller's mistake stops it with one line naming the option.
   */
  options?: Options
  /** Replaces the served mappings on demand (`reloader.reload()`): hot reload. */
  reloader?: Reloader
}

/** What `buildServer` adds when it registers the service: not part of the public interface. */
export interface ServerPluginOptions extends MapperServiceOptions {
  /** Resolved configuration, when the caller already resolved `options`. */
  config?: ServiceConfig
  /** True when the Fastify instance already generates this service's request ids. */
  serverIds?: boolean
}

/**
 * How worker threads get the extension surface: the stock one, or the module it came from.
 * Undefined when they cannot get it and the options asked for no isolation (only /validate's
 * default): then nothing is isolated.
 */
function isolatedExtensions(surface: Extensions, module: string | undefined, isolation: IsolationConfig): ExtensionsSpec | undefined {
  if (module !== undefined) return { module }
  const stock = stockSettingsOf(surface)
  if (stock !== undefined) return { stock }
  if (!isolation.asked) return undefined
  throw new ConfigError(
    'options.isolation: extensions given as functions cannot run in worker threads: load them from a module (EXTENSIONS, or the extensionsModule option), or set options.isolation to false'
  )
}

/** Servers whose requests are already counted for the slices' share (a host may register the service twice). */
const arrivalsCounted = new WeakSet<object>()

const servicePlugin: FastifyPluginAsync<ServerPluginOptions> = async (app, opts) => {
  const config = opts.config ?? resolveConfig(opts.options)
  const entries: MappingEntry[] = mappingEntries(opts.mappings)
  // Observation is decided once, here: metrics by the options, tracing by whether an OpenTelemetry
  // SDK is registered as the service is built.
  const metrics = config.metrics === false ? undefined : new ServiceMetrics()
  const tracer = serviceTracer()
  const evaluations = new EvaluationObserver(metrics, tracer)
  const surface = opts.extensions ?? stockExtensions()
  const extensions = evaluations.surface(surface)
  const crossing = config.isolation === false ? undefined : isolatedExtensions(surface, opts.extensionsModule, config.isolation)
  const isolation = crossing === undefined ? false : config.isolation
  const registry = await EngineRegistry.open(
    entries,
    extensions,
    (message) => app.log.warn(message),
    {
      limits: config.limits,
      explicitStdout: config.map.explicit !== false && config.map.explicit.stdout,
      strict: config.validate.strict,
      cacheBytes: config.map.explicit === false ? 0 : config.map.explicit.cacheBytes,
    },
    isolation === false ? undefined : { config: isolation, extensions: crossing! }
  )
  app.addHook('onClose', () => registry.close())
  // Once, after the mappings are admitted: a missing cheerio is found before the first page arrives.
  const missingCheerio = cheerioWarning(entries, surface)
  if (missingCheerio !== undefined) app.log.warn(missingCheerio)
  // Counted here rather than from the process-wide channel, where another instance's reloads also pass.
  opts.reloader?.attach(registry, app.log, metrics === undefined ? undefined : (outcome) => metrics.reloaded(outcome.ok))

  // Sliced work (streams, long bodies, large outputs) keeps to its share of the loop while other
  // requests arrive (engine/slices.ts): every request the server receives is counted, once per server.
  if (!arrivalsCounted.has(app.server)) {
    arrivalsCounted.add(app.server)
    app.server.on('request', noteArrival)
  }

  // Every route registered from here on is a known path for the method rules (OPTIONS, 405).
  const served = new ServedPaths()
  app.addHook('onRoute', served.onRoute)

  // First, so the request span covers every hook after it.
  if (tracer !== undefined) await app.register(tracingPlugin)
  await app.register(requestIdPlugin, { prefix: config.requestIdPrefix, trust: config.trustRequestId, serverIds: opts.serverIds === true })
  await app.register(errorsPlugin, { maxBodyBytes: config.maxBodyBytes, errorDetail: config.errorDetail })
  await app.register(loggingPlugin, { slowThreshold: config.logging.slowThreshold })
  if (metrics !== undefined) await app.register(metricsPlugin, { metrics, evaluations })
  // A request this service's own request plugin made is refused before anything else runs for it.
  await app.register(hopPlugin)
  if (config.underPressure !== false) await app.register(pressurePlugin, { underPressure: config.underPressure })
  await app.register(bodyPlugin, { maxBodyBytes: config.maxBodyBytes })
  await app.register(corsPlugin, { cors: config.cors })
  await app.register(authPlugin, { auth: config.auth })
  // Before the routes: it limits the routes registered after it.
  if (config.rateLimit !== false) await app.register(rateLimitPlugin, { rateLimit: config.rateLimit, metrics })
  await app.register(enginePlugin, { registry })
  // The error body every route's error responses refer to, by name.
  app.addSchema(ErrorBodySchema)
  if (config.openapi) await app.register(openapiPlugin, { bearer: config.auth !== null, rateLimit: config.rateLimit !== false, underPressure: config.underPressure !== false })

  await app.register(healthRoutes, { mapping: config.health.mapping, timeout: config.health.timeout })
  const evaluator = new Evaluator(isolation, evaluations)
  await app.register(mapRoutes, { map: config.map, evaluator })
  // Its own plugin: the only one whose bodies are read as streams (its content-type parser stays inside it).
  await app.register(streamRoutes, { map: config.map, evaluator, maxBodyBytes: config.maxBodyBytes, errorDetail: config.errorDetail, metrics, stream: config.stream })
  await app.register(validateRoutes, { validate: config.validate, map: config.map, evaluator })
  await app.register(registryRoutes)
  await app.register(schemaRoutes)
  if (config.playground) await app.register(playgroundRoutes, { auth: config.auth !== null, explicit: config.map.explicit !== false })
  if (metrics !== undefined && config.metrics !== false) await app.register(metricsRoutes, { ...config.metrics, metrics })
  // Last: the method rules cover every route registered before them.
  await app.register(methodRoutes, { cors: config.cors, served })
}

/** The service as a Fastify plugin, with the options a host may pass. */
const mapperService: FastifyPluginAsync<MapperServiceOptions> = servicePlugin
export default mapperService
export { mapperService, servicePlugin }
