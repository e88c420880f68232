// Request spans from @fastify/otel, registered only when an OpenTelemetry SDK is: the standalone
// server starts one from the OTEL_* environment (observability/telemetry.ts), a host may start its own
// before registering the service. Without one nothing is registered, so a request pays nothing.
// @fastify/otel is an optional package (support/optional.ts), loaded only then.
import { ProxyTracerProvider, trace, type Tracer } from '@opentelemetry/api'
import fp from 'fastify-plugin'
import { loadFastifyOtel, type FastifyOtelModule } from '../../support/optional.js'
import { packageInfo } from '../../support/package.js'
import { redactUrl } from '../../support/redact.js'

/** What the API's global provider delegates to while no SDK is registered. */
const NO_PROVIDER = new ProxyTracerProvider().getDelegate()

/** The service's tracer when a tracer provider is registered globally; undefined otherwise. */
export function serviceTracer(): Tracer | undefined {
  const provider = trace.getTracerProvider()
  if (provider instanceof ProxyTracerProvider && provider.getDelegate() === NO_PROVIDER) return undefined
  return trace.getTracer('mapper-service', packageInfo().version)
}

// No require hook to install (it patches nothing), so one instrumentation serves every instance.
let instrumentation: InstanceType<FastifyOtelModule['FastifyOtelInstrumentation']> | undefined

/**
 * A span per request (`request`, its route's handler as a child); lifecycle hooks get none of their
 * own, which would be a dozen spans of bookkeeping around every evaluation. Registration fails
 * with MissingPackageError when @fastify/otel is not installed.
 */
export const tracingPlugin = fp(
  async (app) => {
    if (instrumentation === undefined) {
      const { FastifyOtelInstrumentation } = await loadFastifyOtel()
      // `url.path` is the request's URL as sent, query included: its values may be keys (support/redact.ts).
      instrumentation ??= new FastifyOtelInstrumentation({
        instrumentHooks: false,
        requestHook: (span, request) => span.setAttribute('url.path', redactUrl(request.url)),
      })
    }
    await app.register(instrumentation.plugin())
  },
  { name: 'mapper-tracing', fastify: '5.x' }
)
