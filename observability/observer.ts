// The one place POST /map's evaluations are observed: their metrics and their span. The evaluator
// (service/evaluator.ts) runs each evaluation inside `run` and hands over what it learns on the way
// (the prepared explicit document, what a worker saw); nothing else in the service counts evaluations. With metrics and tracing both off it only calls through.
import { context, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api'
import { BudgetExceeded, type Extensions, type Prepared, type ValidationReport } from '../engine/index.js'
import type { UpstreamCall } from '../extensions/request/index.js'
import { InvalidMappingDocument, shapeError } from '../service/errors.js'
import { IsolatedFailure, type TaskFacts } from '../workers/isolation.js'
import type { ServiceMetrics } from './metrics.js'

/** The `mapping` label and span attribute of every explicit document: one value, however many documents. */
export const EXPLICIT = '(explicit)'

/**
 * The `mapping` label and span attribute of every request naming an id that is not served (404):
 * one value, however many ids a caller makes up. Only served ids become labels of their own.
 */
export const UNKNOWN = '(unknown)'

/**
 * What the service tells extensions about the evaluation they run in: `context.evaluation`. The
 * service's own plugin wrapper and upstream counter read it; an extension may log it.
 */
export interface Evaluation {
  /** The registered id, or EXPLICIT. */
  readonly mapping: string
}

/** The `extra` of one run, made by the caller for it alone. */
type Extra = Record<string, unknown>

/** What an evaluation's outcome tells the metrics and the span. */
interface Outcome {
  readonly valid: boolean
  readonly errors: readonly unknown[]
  /** The envelope as printed for the response, when the outcome is one. */
  readonly text?: string
}

/** An evaluation as one observer made it: another service instance in the process never counts it. */
class ObservedEvaluation implements Evaluation {
  readonly #observer: EvaluationObserver

  constructor(
    readonly mapping: string,
    observer: EvaluationObserver
  ) {
    this.#observer = observer
  }

  madeBy(observer: EvaluationObserver): boolean {
    return this.#observer === observer
  }
}

/** The evaluation an extension's context belongs to, when this observer runs it. */
function evaluationOf(evaluationContext: unknown, observer: EvaluationObserver): ObservedEvaluation | undefined {
  if (typeof evaluationContext !== 'object' || evaluationContext === null) return undefined
  const evaluation = (evaluationContext as { evaluation?: unknown }).evaluation
  return evaluation instanceof ObservedEvaluation && evaluation.madeBy(observer) ? evaluation : undefined
}

export class EvaluationObserver {
  constructor(
    private readonly metrics: ServiceMetrics | undefined,
    /** Present only when an OpenTelemetry SDK was registered as the service was built. */
    private readonly tracer: Tracer | undefined
  ) {}

  /**
   * Count every plugin call of an evaluation under its mapping: each plugin of the surface wrapped
   * once, at startup, its options check (`validateOptions`) kept. Without metrics the surface is
   * returned as it is.
   */
  surface(extensions: Extensions): Extensions {
    const metrics = this.metrics
    if (metrics === undefined || extensions.plugins === undefined) return extensions
    const observer = this
    const plugins = Object.fromEntries(
      Object.entries(extensions.plugins).map(([name, plugin]) => [
        name,
        Object.assign(
          function observed(options: unknown, value: unknown, evaluationContext: Parameters<typeof plugin>[2]): unknown {
            const evaluation = evaluationOf(evaluationContext, observer)
            if (evaluation !== undefined) metrics.pluginCalled(evaluation.mapping, name)
            return plugin(options, value, evaluationContext)
          },
          plugin.validateOptions === undefined ? {} : { validateOptions: plugin.validateOptions }
        ),
      ])
    )
    return { ...extensions, plugins }
  }

  /**
   * The request plugin's message on UPSTREAM_CHANNEL: its status, counted under the evaluation's
   * mapping. A subscriber that threw would crash the process, so anything else is ignored.
   */
  readonly upstreamCalled = (message: unknown): void => {
    const call = message as Partial<UpstreamCall> | null
    const evaluation = this.metrics === undefined ? undefined : evaluationOf(call?.context, this)
    if (evaluation !== undefined) this.metrics!.upstreamAnswered(evaluation.mapping, typeof call!.status === 'number' ? call!.status : undefined)
  }

  /** An explicit document as `EngineService.explicit` prepared it: a cache lookup, and a refusal when invalid. */
  prepared(prepared: Prepared): void {
    if (this.metrics === undefined) return
    this.metrics.looked(prepared.cached)
    if (prepared.compiled === null) this.metrics.refused(prepared.report)
  }

  /** What a worker thread saw of an isolated evaluation of `mapping`, counted as if it ran here. */
  isolated(mapping: string, facts: TaskFacts): void {
    const metrics = this.metrics
    if (metrics === undefined) return
    if (facts.prepared !== undefined) {
      metrics.looked(facts.prepared.cached)
      if (facts.prepared.refused) metrics.refused(facts.prepared.report as ValidationReport)
    }
    for (const [plugin, calls] of Object.entries(facts.pluginCalls)) {
      for (let call = 0; call < calls; call++) metrics.pluginCalled(mapping, plugin)
    }
    for (const status of facts.upstream) metrics.upstreamAnswered(mapping, status)
  }

  /**
   * Evaluate as `mapping` (`evaluate` runs or explains the plan with `extra`): in its own span,
   * timed, its outcome counted, its printed envelope measured. With metrics, `extra`
   * gains `evaluation`: added to the object itself, since an object derived from it per request
   * (Object.create) would cost V8 a new prototype map each time. An evaluation that finishes
   * synchronously is answered synchronously: no promise, no turn of the microtask queue.
   */
  run<T extends Outcome>(mapping: string, extra: Extra, evaluate: () => T | Promise<T>): T | Promise<T> {
    const { metrics, tracer } = this
    if (metrics === undefined && tracer === undefined) return evaluate()
    if (metrics !== undefined) extra.evaluation = new ObservedEvaluation(mapping, this)
    const span = tracer?.startSpan('mapping.evaluate', { attributes: { 'mapper.mapping': mapping } })
    const started = performance.now()
    let outcome: T | Promise<T>
    try {
      outcome = span === undefined ? evaluate() : context.with(trace.setSpan(context.active(), span), evaluate)
    } catch (error) {
      throw this.#failed(mapping, started, span, error)
    }
    if (!(outcome instanceof Promise)) return this.#succeeded(mapping, started, span, outcome)
    return outcome.then(
      (settled) => this.#succeeded(mapping, started, span, settled),
      (error: unknown) => {
        throw this.#failed(mapping, started, span, error)
      }
    )
  }

  #succeeded<T extends Outcome>(mapping: string, started: number, span: Span | undefined, outcome: T): T {
    const metrics = this.metrics
    if (metrics !== undefined) {
      metrics.evaluated(mapping, outcome.valid ? 'valid' : 'invalid', (performance.now() - started) / 1000, outcome.errors.length)
      if (outcome.text !== undefined) metrics.printed(mapping, Buffer.byteLength(outcome.text))
    }
    if (span !== undefined) {
      span.setAttributes({ 'mapper.valid': outcome.valid, 'mapper.errors': outcome.errors.length })
      span.end()
    }
    return outcome
  }

  /** Count and record a failed evaluation; the error is returned to be thrown on. */
  #failed(mapping: string, started: number, span: Span | undefined, error: unknown): unknown {
    // A document refused by validation was never evaluated.
    const refused = error instanceof InvalidMappingDocument || (error instanceof IsolatedFailure && error.code === 'InvalidMappingDocument')
    const metrics = this.metrics
    if (!refused && metrics !== undefined) {
      metrics.evaluated(mapping, 'failed', (performance.now() - started) / 1000, 0)
      metrics.failed(mapping, shapeError(error, 0).code, error instanceof BudgetExceeded || error instanceof IsolatedFailure ? error.budget : undefined)
    }
    if (span !== undefined) {
      // An unknown id's message names it: the span keeps the code alone.
      if (!refused) failSpan(span, mapping === UNKNOWN ? new Error(shapeError(error, 0).code) : error)
      span.end()
    }
    return error
  }
}

function failSpan(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error))
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
}
