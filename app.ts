// mapper-service as a Fastify plugin: `app.register(mapperService, { mappings, extensions, options,
// reloader, decorator, prefix })`. The service is encapsulated, so its hooks, error handler, body
// parser and CORS policy stay inside its own context and the host app is left as it was; the one
// thing it adds to the host is the `mapper` decorator (the served mappings, callable from the
// host's own routes), for which a thin fastify-plugin wrapper registers it.
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { mappingEntries, type MappingEntry, type MappingsInput } from './sources/mappings.js'
import { ConfigError, resolveConfig, type IsolationConfig, type ServiceConfig } from './config/resolve.js'
import type { Extensions } from './engine/index.js'
import { noteArrival } from './engine/slices.js'
import { requestConfigsOf, stockExtensions, stockSettingsOf } from './extensions/stock.js'
import { parseElsewhere } from './extensions/request/parse-thread.js'
import { helperParsing } from './workers/helper-process.js'
import { authPlugin } from './http/plugins/auth/index.js'
import { bodyPlugin } from './http/plugins/body.js'
import { corsPlugin } from './http/plugins/cors.js'
import { enginePlugin } from './http/plugins/engine.js'
import { errorsPlugin } from './http/plugins/errors.js'
import { hopPlugin } from './http/plugins/hop.js'
import { loggingPlugin } from './http/plugins/logging.js'
import { metricsPlugin } from './http/plugins/metrics.js'
import { openapiPlugin } from './http/plugins/openapi.js'
import { openapiHostPlugin } from './http/plugins/openapi-host.js'
import { pressurePlugin } from './http/plugins/pressure.js'
import { requestIdPlugin } from './http/plugins/request-id.js'
import { serviceTracer, tracingPlugin } from './http/plugins/tracing.js'
import { healthRoutes } from './http/routes/health.js'
import { mapRoutes } from './http/routes/map.js'
import { methodRoutes, ServedPaths } from './http/routes/methods.js'
import { metricsRoutes } from './http/routes/metrics.js'
import { playgroundRoutes } from './http/routes/playground.js'
import { registryRoutes } from './http/routes/registry.js'
import { managedRoutes } from './http/routes/managed.js'
import { schemaRoutes } from './http/routes/schema.js'
import { streamRoutes } from './http/routes/stream.js'
import { validateRoutes } from './http/routes/validation.js'
import { cheerioWarning } from './service/cheerio-warning.js'
import { ServedSet, MapperHandle } from './service/mapping-service.js'
import { ManagedMappings } from './service/managed.js'
import type { ExtensionsSpec } from './workers/isolation.js'
import { ServiceMetrics } from './observability/metrics.js'
import { Evaluator } from './service/evaluator.js'
import { EvaluationObserver } from './observability/observer.js'
import type { Reloader } from './service/reloader.js'
import { ErrorBodySchema } from './http/schemas/error.js'
import type { Options } from './config/options-schema.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The mappings a mapper-service registered on this instance serves now (a reload included):
     * `await app.mapper.map(id, input)` evaluates one from the host's own routes. Present once
     * `app.register(mapperService, …)` has completed, under the name its `decorator` option gives
     * (`mapper` by default).
     */
    mapper: MapperHandle
  }
}

/** What a host passes to `app.register(mapperService, …)`, besides Fastify's own `prefix`. */
export interface MapperServiceOptions {
  /**
   * The mappings to register: mapping documents and entries from `loadMappings`, mixed, in an
   * array or an object keyed by anything, or wrapped as `{ mappings }` (the engine's form).
   */
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
  /**
   * The name under which the host instance gets the served mappings (MapperHandle): `mapper` by
   * default, skipped with a warning when the host already has a decorator of that name (a second
   * mapper-service, say); another name, which must be free; or false for none.
   */
  decorator?: string | false
}

/** What `buildServer` adds when it registers the service: not part of the public interface. */
export interface ServerPluginOptions extends MapperServiceOptions {
  /** Resolved configuration, when the caller already resolved `options`. */
  config?: ServiceConfig
  /** True when the Fastify instance already generates this service's request ids. */
  serverIds?: boolean
  /** Given the served set once it serves: what the host's decorator reads. */
  handle?: MapperHandle
}

/** Said once at registration when extensions given as functions keep explicit work on the event loop. */
export const INLINE_EXTENSIONS_WARNING =
  'options.isolation: the extensions were given as functions, which cannot cross into worker threads, so explicit documents, explain traces and POST /validate run on the event loop: their budgets still apply, but work inside a library call (a regular expression, JSON.stringify, an extension\'s own code) cannot be stopped from outside. To isolate them, pass extensionsModule (the module whose default export is the extensions); to keep them inline without this warning, set options.isolation to false'

/**
 * How worker threads get the extension surface: the stock one, or the module it came from.
 * Undefined when they cannot get it and nothing asks for isolation but a default: only /validate's
 * (then nothing is isolated, silently), or the explicit form's (then nothing is isolated, with
 * INLINE_EXTENSIONS_WARNING). Isolation that options.isolation asks for itself cannot be had
 * without them: a ConfigError.
 */
function isolatedExtensions(surface: Extensions, module: string | undefined, isolation: IsolationConfig, warn: (message: string) => void): ExtensionsSpec | undefined {
  if (module !== undefined) return { module }
  const stock = stockSettingsOf(surface)
  if (stock !== undefined) return { stock }
  // Request plugins made from plain data are made again in each worker.
  const requests = requestConfigsOf(surface)
  if (requests !== undefined) return { requests }
  if (!isolation.asked) return undefined
  if (!isolation.configured) {
    warn(INLINE_EXTENSIONS_WARNING)
    return undefined
  }
  throw new ConfigError(
    'options.isolation: extensions given as functions cannot run in worker threads: load them from a module (EXTENSIONS, or the extensionsModule option), or set options.isolation to false'
  )
}

/** Servers whose requests are already counted for the slices' share (a host may register the service twice). */
const arrivalsCounted = new WeakSet<object>()

const servicePlugin: FastifyPluginAsync<ServerPluginOptions> = async (app, opts) => {
  const config = opts.config ?? resolveConfig(opts.options)
  // Upstream HTML and XML bodies are parsed in the helper process (process-wide).
  if (config.helperProcess) parseElsewhere(helperParsing)
  const entries: MappingEntry[] = mappingEntries(opts.mappings)
  // Observation is decided once, here: metrics by the options, tracing by whether an OpenTelemetry
  // SDK is registered as the service is built.
  const metrics = config.metrics === false ? undefined : new ServiceMetrics()
  const tracer = serviceTracer()
  const evaluations = new EvaluationObserver(metrics, tracer)
  const surface = opts.extensions ?? stockExtensions()
  const extensions = evaluations.surface(surface)
  const crossing = config.isolation === false ? undefined : isolatedExtensions(surface, opts.extensionsModule, config.isolation, (message) => app.log.warn(message))
  const isolation = crossing === undefined ? false : config.isolation
  // The mapping store, when one is configured: opened and read before the first set is admitted,
  // which serves its mappings beside the files'.
  const store = config.store === null ? undefined : await ManagedMappings.open(config.store, app.log, metrics?.mappingStore())
  if (store !== undefined) app.addHook('onClose', () => store.managed.close())
  const servedSet = await ServedSet.open(
    entries,
    extensions,
    (message) => app.log.warn(message),
    {
      limits: config.limits,
      explicitStdout: config.map.explicit !== false && config.map.explicit.stdout,
      strict: config.validate.strict,
      cacheBytes: config.map.explicit === false ? 0 : config.map.explicit.cacheBytes,
    },
    isolation === false ? undefined : { config: isolation, extensions: crossing! },
    store?.initial
  ).catch(async (error: unknown) => {
    await store?.managed.close()
    throw error
  })
  app.addHook('onClose', () => servedSet.close())
  if (store !== undefined) {
    store.managed.serve(servedSet)
    app.log.info({ store: store.managed.description, mappings: store.initial.entries.length }, 'managed mappings: serving the mapping store')
    if (config.auth === null) {
      app.log.warn('options.store with options.auth off: anyone who can reach this service can change the mappings it serves (PUT and DELETE /mappings/{id}); turn authentication on and set options.mappings.write.claims, or keep the port private (README "Deployment postures")')
    }
  }
  opts.handle?.serve(servedSet)
  // Once, after the mappings are admitted: a missing cheerio is found before the first page arrives.
  const missingCheerio = cheerioWarning(entries, surface)
  if (missingCheerio !== undefined) app.log.warn(missingCheerio)
  // Counted here rather than from the process-wide channel, where another instance's reloads also pass.
  opts.reloader?.attach(servedSet, app.log, metrics === undefined ? undefined : (outcome) => metrics.reloaded(outcome.ok))

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
  // The auth and rate-limit plugins check and resolve their own options as they are registered:
  // a mistake there fails registration here, with the ConfigError naming the setting.
  await app.register(authPlugin, { auth: config.auth })
  // Before the routes: it limits the routes registered after it.
  // Loaded only when configured (it brings @fastify/rate-limit).
  if (config.rateLimit !== false) {
    const { rateLimitPlugin } = await import('./http/plugins/rate-limit/index.js')
    await app.register(rateLimitPlugin, { rateLimit: config.rateLimit, metrics })
  }
  await app.register(enginePlugin, { served: servedSet })
  // The error body every route's error responses refer to, by name.
  app.addSchema(ErrorBodySchema)
  // Before the routes, whose operationIds and place in a host app's document it sets.
  await app.register(openapiHostPlugin, { hideFromHost: config.openapi.hideFromHost, operationIdPrefix: config.openapi.operationIdPrefix })
  if (config.openapi.serve) {
    await app.register(openapiPlugin, {
      bearer: config.auth !== null,
      rateLimit: config.rateLimit !== false,
      underPressure: config.underPressure !== false,
      operationIdPrefix: config.openapi.operationIdPrefix,
    })
  }

  await app.register(healthRoutes, { mapping: config.health.mapping, timeout: config.health.timeout })
  const evaluator = new Evaluator(isolation, evaluations)
  await app.register(mapRoutes, { map: config.map, evaluator })
  // Its own plugin: the only one whose bodies are read as streams (its content-type parser stays inside it).
  await app.register(streamRoutes, { map: config.map, evaluator, maxBodyBytes: config.maxBodyBytes, errorDetail: config.errorDetail, metrics, stream: config.stream })
  await app.register(validateRoutes, { validate: config.validate, map: config.map, evaluator })
  await app.register(registryRoutes)
  if (store !== undefined) await app.register(managedRoutes, { managed: store.managed, evaluator, write: config.mappings.write })
  await app.register(schemaRoutes)
  if (config.playground) await app.register(playgroundRoutes, { auth: config.auth !== null, explicit: config.map.explicit !== false, explain: config.map.explain !== false })
  if (metrics !== undefined && config.metrics !== false) await app.register(metricsRoutes, { ...config.metrics, metrics })
  // Last: the method rules cover every route registered before them.
  await app.register(methodRoutes, { cors: config.cors, served })
}

/**
 * The service as a Fastify plugin, with the options a host may pass. A fastify-plugin wrapper, so
 * that the decorator lands on the host instance; the service itself is registered inside it as its
 * own encapsulated context, under the host's `prefix` (and any other register option it gave).
 */
const registerService: FastifyPluginAsync<MapperServiceOptions> = async (host, opts) => {
  const { decorator = 'mapper', ...rest } = opts
  if (decorator !== false && (typeof decorator !== 'string' || decorator === '')) throw new ConfigError('the decorator option must be a non-empty string, or false')
  // A name given outright must be free; the default gives way to a decorator already there.
  if (decorator !== false && decorator !== 'mapper' && host.hasDecorator(decorator)) {
    throw new ConfigError(`the decorator option: the instance already has a decorator named "${decorator}"; choose another name, or false`)
  }
  const handle = new MapperHandle()
  await host.register(servicePlugin, { ...rest, handle } satisfies ServerPluginOptions)
  if (decorator === false) return
  if (host.hasDecorator(decorator)) {
    host.log.warn(`mapper-service: the instance already has a decorator named "${decorator}" (another mapper-service?), so this one is not reachable through it: give it another name with the decorator option`)
    return
  }
  host.decorate(decorator, handle)
}
const mapperService: FastifyPluginAsync<MapperServiceOptions> = fp(registerService, { fastify: '5.x' })
export default mapperService
export { mapperService, servicePlugin }
