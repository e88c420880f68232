// The standalone server's OpenTelemetry SDK, configured by the standard OTEL_* environment and
// started before the server is built, so the service finds its tracer provider (http/plugins/tracing.ts).
// Off unless the environment asks for traces: an exporter named in OTEL_TRACES_EXPORTER (other
// than `none`) or an OTLP endpoint; OTEL_SDK_DISABLED=true wins over both. Traces only: metrics
// are the Prometheus endpoint's, and logs are the service's own lines. The SDK is an optional package
// (support/optional.ts): asked for and not installed, start-up fails in one line naming it.
import { loadNodeSdk } from '../support/optional.js'

/** What the server keeps of a started SDK: it flushes the spans still buffered on shutdown. */
export interface Telemetry {
  shutdown(): Promise<void>
}

const isSet = (value: string | undefined): boolean => value !== undefined && value.trim() !== ''

/** Whether the environment asks for traces. */
export function tracingConfigured(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '')
  if (exporters.length > 0) return !exporters.includes('none')
  return isSet(env.OTEL_EXPORTER_OTLP_ENDPOINT) || isSet(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
}

/**
 * Start the SDK when the environment asks for traces; undefined otherwise. The SDK reads the rest
 * of its settings (exporter endpoint, protocol, sampler, service name, propagators) from
 * process.env itself. Loaded only then: a server without tracing never loads the SDK. Throws
 * MissingPackageError when the SDK is not installed.
 */
export async function startTelemetry(env: NodeJS.ProcessEnv): Promise<Telemetry | undefined> {
  if (!tracingConfigured(env)) return undefined
  const { NodeSDK } = await loadNodeSdk()
  const sdk = new NodeSDK({ metricReaders: [], logRecordProcessors: [] })
  sdk.start()
  return sdk
}
