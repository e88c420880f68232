// What one upstream call tells the outside, without this plugin knowing who listens: an
// OpenTelemetry client span (a no-op unless the host started an SDK), the W3C trace context sent
// upstream only where the header allowlist lets those headers through, and one diagnostics_channel
// message per call with the status it got, for a host that counts them (mapper-service's metrics).
import { channel } from 'node:diagnostics_channel'
import { context as activeContext, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api'
import type { EvaluationContext } from '../../engine/index.js'
import { redactUrl } from '../../support/redact.js'
import { RedirectRefusedError } from './redirect.js'

/** The diagnostics channel an upstream call is published on once it is over. */
export const UPSTREAM_CHANNEL = 'mapper-service:request:upstream'

/** The message on UPSTREAM_CHANNEL. */
export interface UpstreamCall {
  /** The evaluation context of the plugin call: the host finds its own `extra` fields on it. */
  readonly context: EvaluationContext
  readonly method: string
  /** Origin and path of the first URL asked (never its query, which may carry keys). */
  readonly url: string
  /** The status of the last response, or undefined when none came (refused, timed out, failed). */
  readonly status: number | undefined
  readonly error: unknown
}

const published = channel(UPSTREAM_CHANNEL)
const tracer = trace.getTracer('mapper-service/request')

/** One call in flight: its span, and what will be published when it ends. */
export class UpstreamWatch {
  private readonly span: Span
  private readonly url: string
  private status: number | undefined = undefined
  private error: unknown = undefined

  /**
   * Start watching a call to `url`. The trace context goes into `headers` (which the call sends)
   * only for the names the allowlist forwards (`null`: every name): with `allowHeaders: []`, the
   * default of the stock surface, an upstream never learns the trace.
   */
  constructor(
    private readonly context: EvaluationContext,
    private readonly method: string,
    url: URL,
    headers: Map<string, string>,
    allow: ReadonlySet<string> | null
  ) {
    this.url = url.origin + url.pathname
    this.span = tracer.startSpan(method, {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': method,
        'server.address': url.hostname,
        'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
        // Query values and userinfo redacted: they may be keys.
        'url.full': redactUrl(url),
      },
    })
    const carrier: Record<string, string> = {}
    propagation.inject(trace.setSpan(activeContext.active(), this.span), carrier)
    for (const [name, value] of Object.entries(carrier)) {
      if (allow === null || allow.has(name)) headers.set(name, value)
    }
  }

  responded(status: number): void {
    this.status = status
  }

  failed(error: unknown): void {
    this.error = error
    // A refused redirect did get a response: its 3xx.
    if (error instanceof RedirectRefusedError) this.status = error.status
  }

  end(): void {
    const span = this.span
    if (span.isRecording()) {
      if (this.status !== undefined) span.setAttribute('http.response.status_code', this.status)
      if (this.error !== undefined) {
        span.recordException(this.error instanceof Error ? this.error : String(this.error))
        span.setStatus({ code: SpanStatusCode.ERROR, message: this.error instanceof Error ? this.error.message : String(this.error) })
      } else if (this.status !== undefined && this.status >= 400) {
        span.setStatus({ code: SpanStatusCode.ERROR })
      }
    }
    span.end()
    if (published.hasSubscribers) {
      published.publish({ context: this.context, method: this.method, url: this.url, status: this.status, error: this.error } satisfies UpstreamCall)
    }
  }
}
