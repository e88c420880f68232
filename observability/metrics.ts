// The Prometheus series of one service instance, in a registry of its own: several instances in one
// process (tests, a host embedding two) never clash over a metric name. The process's own figures
// (CPU, memory, event loop, GC) belong to the process, not to an instance: they are collected once
// per process, into a registry shared by every instance, and appended to each one's exposition.
//
// Every label has a bounded set of values: `route` is a route's pattern (unknown paths share one
// value), `mapping` a served id, one value for every explicit document (`(explicit)`) and one for
// every id not served (`(unknown)`: a made-up id adds no series, observability/observer.ts), `rule` a validation
// rule id, `code` an error code of the catalogue, `budget` a budget name, `status` an HTTP status.
import { collectDefaultMetrics, Counter as PromCounter, Gauge, Registry } from 'prom-client'
import { FastCounter as Counter, FastHistogram as Histogram } from './series.js'
import type { ValidationReport } from '../engine/index.js'

/** The `route` label of a request no route matched. */
export const UNMATCHED_ROUTE = '(unmatched)'

const SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const BYTES = [256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216]

let processRegistry: Registry | undefined

/** The process-wide registry of the default Node.js metrics, made on first use. */
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

export type EvaluationResult = 'valid' | 'invalid' | 'failed'

export class ServiceMetrics {
  readonly registry = new Registry()
  readonly contentType = this.registry.contentType

  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  })

  private readonly requestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to sending its response, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  })

  private readonly evaluations = new Counter({
    name: 'mapper_evaluations_total',
    help: 'Evaluations run by POST /map, by mapping and result: valid, invalid (valid: false) or failed (an error answered instead of an envelope).',
    labelNames: ['mapping', 'result'] as const,
    registers: [this.registry],
  })

  private readonly evaluationDuration = new Histogram({
    name: 'mapper_evaluation_duration_seconds',
    help: 'Duration of one evaluation, plugin calls included, by mapping.',
    labelNames: ['mapping'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  })

  private readonly envelopeErrors = new Counter({
    name: 'mapper_envelope_errors_total',
    help: 'Error objects in the envelopes of valid: false evaluations, by mapping.',
    labelNames: ['mapping'] as const,
    registers: [this.registry],
  })

  private readonly failures = new Counter({
    name: 'mapper_evaluation_failures_total',
    help: 'Evaluations that ended in an error answer, by mapping and error code.',
    labelNames: ['mapping', 'code'] as const,
    registers: [this.registry],
  })

  private readonly budgetTrips = new Counter({
    name: 'mapper_budget_exceeded_total',
    help: 'Evaluations stopped by one of their budgets, by mapping and budget.',
    labelNames: ['mapping', 'budget'] as const,
    registers: [this.registry],
  })

  private readonly refusals = new Counter({
    name: 'mapper_document_errors_total',
    help: 'Validation errors of explicit documents refused by POST /map (422), by rule id.',
    labelNames: ['rule'] as const,
    registers: [this.registry],
  })

  private readonly outputBytes = new Histogram({
    name: 'mapper_output_bytes',
    help: 'Bytes of the serialized envelope of one evaluation, by mapping.',
    labelNames: ['mapping'] as const,
    buckets: BYTES,
    registers: [this.registry],
  })

  private readonly pluginCalls = new Counter({
    name: 'mapper_plugin_calls_total',
    help: 'Plugin calls made by evaluations, by mapping and plugin name.',
    labelNames: ['mapping', 'plugin'] as const,
    registers: [this.registry],
  })

  private readonly upstream = new Counter({
    name: 'mapper_upstream_responses_total',
    help: 'Upstream exchanges of the request plugin, by mapping and HTTP status ("error" when no response came).',
    labelNames: ['mapping', 'status'] as const,
    registers: [this.registry],
  })

  private readonly cache = new Counter({
    name: 'mapper_explicit_cache_lookups_total',
    help: 'Explicit documents looked up in the prepared-document cache, by result: hit or miss.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  })

  private readonly reloads = new Counter({
    name: 'mapper_reloads_total',
    help: 'Reloads of the registered mappings, by result: ok or failed.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  })

  private readonly streamLines = new Counter({
    name: 'mapper_stream_lines_total',
    help: 'Lines answered by POST /map/stream, by mapping and result: envelope, or error (an error line: not JSON, over the line limit, or its evaluation failed).',
    labelNames: ['mapping', 'result'] as const,
    registers: [this.registry],
  })

  private readonly streamErrors = new Counter({
    name: 'mapper_stream_line_errors_total',
    help: 'Error lines of POST /map/stream, by mapping and error code.',
    labelNames: ['mapping', 'code'] as const,
    registers: [this.registry],
  })

  private readonly streamBytes = new Counter({
    name: 'mapper_stream_bytes_total',
    help: 'Bytes of POST /map/stream bodies, by direction: in (read from requests) or out (answer lines written).',
    labelNames: ['direction'] as const,
    registers: [this.registry],
  })

  /** Made by rateLimitStore(), only when the rate limits live in Redis. */
  private storeSeries: RateLimitStoreSeries | undefined
  /** Made by mappingStore(), only with a mapping store. */
  private mappingStoreSeries: MappingStoreSeries | undefined

  constructor() {
    // Series a dashboard divides by exist from the start, at zero.
    for (const result of ['hit', 'miss']) this.cache.series(result)
    for (const result of ['ok', 'failed']) this.reloads.series(result)
    for (const direction of ['in', 'out']) this.streamBytes.series(direction)
  }

  /** The exposition: this instance's series, then the process's. */
  async exposition(): Promise<string> {
    return `${await this.registry.metrics()}\n${await processMetrics().metrics()}`
  }

  answered(method: string, route: string | undefined, status: number, seconds: number): void {
    const path = route ?? UNMATCHED_ROUTE
    this.requests.series(method, path, status).value++
    this.requestDuration.observe(this.requestDuration.series(method, path, status), seconds)
  }

  evaluated(mapping: string, result: EvaluationResult, seconds: number, errors: number): void {
    this.evaluations.series(mapping, result).value++
    this.evaluationDuration.observe(this.evaluationDuration.series(mapping), seconds)
    if (errors > 0) this.envelopeErrors.series(mapping).value += errors
  }

  failed(mapping: string, code: string, budget: string | undefined): void {
    this.failures.series(mapping, code).value++
    if (budget !== undefined) this.budgetTrips.series(mapping, budget).value++
  }

  refused(report: ValidationReport): void {
    for (const error of report.errors) this.refusals.series(error.rule).value++
  }

  printed(mapping: string, bytes: number): void {
    this.outputBytes.observe(this.outputBytes.series(mapping), bytes)
  }

  pluginCalled(mapping: string, plugin: string): void {
    this.pluginCalls.series(mapping, plugin).value++
  }

  upstreamAnswered(mapping: string, status: number | undefined): void {
    this.upstream.series(mapping, status ?? 'error').value++
  }

  looked(hit: boolean): void {
    this.cache.series(hit ? 'hit' : 'miss').value++
  }

  /** A stream's line answered with its envelope (`code` undefined) or an error line of that code. */
  streamLine(mapping: string, code: string | undefined): void {
    if (code === undefined) {
      this.streamLines.series(mapping, 'envelope').value++
      return
    }
    this.streamLines.series(mapping, 'error').value++
    this.streamErrors.series(mapping, code).value++
  }

  streamed(direction: 'in' | 'out', bytes: number): void {
    this.streamBytes.series(direction).value += bytes
  }

  reloaded(ok: boolean): void {
    this.reloads.series(ok ? 'ok' : 'failed').value++
  }

  /**
   * The series of the shared rate-limit store (options.rateLimit.redis), registered on first call:
   * an instance counting in memory exposes none. Off the request path's fast series: they move
   * only when Redis fails or comes back.
   */
  rateLimitStore(): RateLimitStoreSeries {
    if (this.storeSeries === undefined) {
      const errors = new PromCounter({
        name: 'mapper_rate_limit_store_errors_total',
        help: 'Requests let through without a rate limit because the Redis store failed to answer (fail open).',
        registers: [this.registry],
      })
      const up = new Gauge({
        name: 'mapper_rate_limit_store_up',
        help: 'Whether the last exchange with the Redis rate-limit store succeeded (1) or failed (0).',
        registers: [this.registry],
      })
      this.storeSeries = { failedOpen: () => errors.inc(), reachable: (ok) => up.set(ok ? 1 : 0) }
    }
    return this.storeSeries
  }

  /** The series of the mapping store (options.store), registered on first call: without a store there are none. */
  mappingStore(): MappingStoreSeries {
    if (this.mappingStoreSeries === undefined) {
      const writes = new PromCounter({
        name: 'mapper_mapping_writes_total',
        help: 'Writes of managed mappings (PUT and DELETE /mappings/{id}), by operation and result.',
        labelNames: ['operation', 'result'] as const,
        registers: [this.registry],
      })
      for (const operation of ['put', 'delete']) for (const result of MAPPING_WRITE_RESULTS) writes.labels(operation, result)
      const syncs = new PromCounter({
        name: 'mapper_mapping_store_syncs_total',
        help: 'Changes of the mapping store this replica read and tried to serve (another replica\'s write, a resync), by result: ok or failed (the previous set kept).',
        labelNames: ['result'] as const,
        registers: [this.registry],
      })
      for (const result of ['ok', 'failed']) syncs.labels(result)
      const revision = new Gauge({
        name: 'mapper_mapping_store_revision',
        help: 'The revision of the mapping store this replica serves: every replica that shares the store shows the same one once a change has reached them all.',
        registers: [this.registry],
      })
      this.mappingStoreSeries = {
        wrote: (operation, result) => writes.labels(operation, result).inc(),
        synced: (ok) => syncs.labels(ok ? 'ok' : 'failed').inc(),
        serving: (served) => revision.set(served),
      }
    }
    return this.mappingStoreSeries
  }
}

/** What the managed mappings report (service/managed.ts). */
export interface MappingStoreSeries {
  /** A write (`put` or `delete`) answered, by its result. */
  wrote(operation: 'put' | 'delete', result: MappingWriteResult): void
  /** The store's changes served by this replica: how many, and whether the last attempt to serve one succeeded. */
  synced(ok: boolean): void
  /** The store's revision this replica serves now. */
  serving(revision: number): void
}

/** Every result of a write: each is a series from the start, at zero. */
export const MAPPING_WRITE_RESULTS = ['created', 'replaced', 'deleted', 'invalid', 'conflict', 'precondition_failed', 'not_found', 'unavailable', 'failed'] as const
export type MappingWriteResult = (typeof MAPPING_WRITE_RESULTS)[number]

/** What the shared rate-limit store reports (http/plugins/rate-limit/store.ts). */
export interface RateLimitStoreSeries {
  /** A request passed unlimited because the store failed. */
  failedOpen(): void
  reachable(ok: boolean): void
}
