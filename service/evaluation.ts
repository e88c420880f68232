// One POST /map evaluation as data, the same on the event loop and in a worker thread
// (workers/isolation.ts): which plan runs on which budgets, and the envelope printed as the
// response's text. The route decides where it runs; this decides what runs. An output the engine
// counted as large (engine/budget.ts LARGE_OUTPUT_BYTES) is printed a slice at a time (print.ts).
import { boundReport, countExamples, exampleDiagnostics, largeOutputBytes, noteLargeOutput, type CompiledMapping, type Envelope, type ExampleResult, type Explained, type Limits, type Prepared, type RunOptions, type ValidationReport } from '../engine/index.js'
import { InvalidMappingDocument, OutputNotSerializable, unknownMapping } from './errors.js'
import { printSliced } from './print.js'

// What the routes need of the engine, through this layer: routes import nothing from engine/
// (test/layers.test.ts).
export { isObject, jsonMemberText, mappingSchema, type Envelope } from '../engine/index.js'

/** The budgets and switches an engine evaluates with (the same in every worker thread). */
export interface EngineSettings {
  readonly limits: { readonly registered: Readonly<Required<Limits>>; readonly explicit: Readonly<Required<Limits>> }
  /** Whether explicit documents may use `stdout`. */
  readonly explicitStdout: boolean
  /** Strict mode (options.validate.strict): validation's warnings are errors, registered and explicit documents alike. */
  readonly strict: boolean
  /** Total document bytes the explicit-document cache may hold. */
  readonly cacheBytes: number
}

/** What an evaluation asks of the engine serving it (service/mapping-service.ts EngineService). */
export interface Evaluating {
  readonly settings: EngineSettings
  registered(id: string): CompiledMapping | undefined
  explicit(document: object): Prepared
  /** `explicit` for a document held as the JSON text it arrived in (see MapRequest.mappingText), and parsed already unless null. */
  explicitText(text: string, parsed: object | null): Prepared
  explicitExamples(document: object, extra: Readonly<Record<string, unknown>>, stdout: RunOptions['stdout']): Promise<ExampleResult[]>
}

/** What a caller asked POST /map to evaluate. */
export interface MapRequest {
  /** A registered id, or an explicit mapping document; null when only the document's text is carried (`mappingText`). */
  readonly mapping: string | object | null
  /**
   * An explicit document's JSON text exactly as the caller sent it, when the route has it: the
   * prepared-document cache is keyed by it (no printing of the document per request), and it
   * crosses into a worker in place of the object, which the worker parses only on a cache miss.
   */
  readonly mappingText?: string
  /**
   * Where the route kept a large input as its text (service/json-text.ts): a JsonText. In a task
   * crossing into a worker, the input's text is here instead, parsed there (`input` is undefined).
   */
  readonly input: unknown
  readonly inputText?: string
  readonly explain: boolean
}

/** An evaluation's answer: the envelope as printed, and what the route and the metrics need of it. */
export interface MapOutcome {
  readonly text: string
  readonly valid: boolean
  readonly errors: readonly unknown[]
}

/** The envelope with its trace beside valid and errors; an output member named `explain` gives way to it. */
function explained({ envelope, explain }: Explained): Envelope {
  const traced = { ...envelope, explain }
  const bytes = largeOutputBytes(envelope)
  if (bytes !== undefined) noteLargeOutput(traced, bytes)
  return traced
}

/** The envelope as the response's text; a structure too deep for JSON is a 422, not a crash. */
export function printEnvelope(envelope: Envelope): string {
  try {
    return JSON.stringify(envelope)
  } catch (error) {
    if (error instanceof RangeError) throw new OutputNotSerializable()
    throw error
  }
}

/**
 * Evaluate a request on `engine`: a registered id on the engine's own budgets, an explicit
 * document (validated first, 422 with its report when invalid) on the explicit ones.
 * `prepared` sees the explicit document's cache lookup. Synchronous work stays synchronous: the
 * outcome is a promise only when the plan itself awaited, for an explain trace, or for a large output.
 */
export function evaluateRequest(
  engine: Evaluating,
  request: MapRequest,
  extra: Record<string, unknown>,
  stdout: RunOptions['stdout'],
  prepared?: (prepared: Prepared) => void
): MapOutcome | Promise<MapOutcome> {
  let compiled
  // Registered mappings run on the engine's own budgets (set from limits.*); explicit ones on limits.explicit.*.
  let limits: Limits | undefined
  if (typeof request.mapping === 'string') {
    compiled = engine.registered(request.mapping)
    if (compiled === undefined) throw unknownMapping(request.mapping)
  } else {
    const explicit = request.mappingText !== undefined ? engine.explicitText(request.mappingText, request.mapping) : engine.explicit(explicitDocument(request.mapping))
    prepared?.(explicit)
    if (explicit.compiled === null) throw new InvalidMappingDocument(explicit.report)
    compiled = explicit.compiled
    limits = engine.settings.limits.explicit
  }
  const options = { limits, stdout }
  // An explain answer is the evaluation as data: the trace matters most when the envelope is invalid.
  if (request.explain) return Promise.resolve(compiled.explain(request.input, extra, options)).then((traced) => outcomeOf(explained(traced)))
  const envelope = compiled.run(request.input, extra, options)
  return envelope instanceof Promise ? envelope.then(outcomeOf) : outcomeOf(envelope)
}

/**
 * One evaluation of a compiled mapping already chosen and admitted (a stream's lines,
 * service/evaluator.ts `stream`): synchronous when the evaluation did not await.
 */
export function runCompiled(compiled: CompiledMapping, input: unknown, extra: Record<string, unknown>, options: RunOptions): MapOutcome | Promise<MapOutcome> {
  const envelope = compiled.run(input, extra, options)
  return envelope instanceof Promise ? envelope.then(outcomeOf) : outcomeOf(envelope)
}

/** The explicit document of a request that carries no text of it. */
function explicitDocument(mapping: object | null): object {
  if (mapping === null) throw new Error('a map request without its explicit document or that document\'s text')
  return mapping
}

/** The outcome of an envelope: printed at once, or a slice at a time when the engine counted its output as large. */
function outcomeOf(envelope: Envelope): MapOutcome | Promise<MapOutcome> {
  if (largeOutputBytes(envelope) !== undefined) return printedLarge(envelope)
  return { text: printEnvelope(envelope), valid: envelope.valid, errors: envelope.errors }
}

/** `printEnvelope` of a large envelope, in slices with the event loop free between them (print.ts). */
async function printedLarge(envelope: Envelope): Promise<MapOutcome> {
  let text: string | undefined
  try {
    text = await printSliced(envelope)
  } catch (error) {
    if (error instanceof RangeError) throw new OutputNotSerializable()
    throw error
  }
  return { text: text!, valid: envelope.valid, errors: envelope.errors }
}

/** A /validate report: the instance-level report, with an expansion bound where there is one. */
export type Report = ValidationReport & { expansion?: number }

/**
 * POST /validate of a submitted document: its report and, when it is valid and the caller may
 * evaluate it, its examples run on one shared budget; each failing one is an `EXAMPLE-1` error.
 */
export async function validateDocument(
  engine: Evaluating,
  document: object,
  mayEvaluate: boolean,
  extra: Readonly<Record<string, unknown>>,
  stdout: RunOptions['stdout']
): Promise<Report> {
  // The prepared report is cached with the document: what examples add goes on a copy.
  const report: Report = engine.explicit(document).report
  if (!report.valid || countExamples(document) === 0) return report
  if (!mayEvaluate) {
    const warning = { rule: 'EXAMPLE-2', message: 'examples not run: this caller may not evaluate submitted documents here', pointer: '', descriptor: null }
    return boundReport({ ...report, warnings: [...report.warnings, warning] })
  }
  const results = await engine.explicitExamples(document, extra, stdout)
  const failed = exampleDiagnostics(results)
  // The examples share one budget: the one that spent it failed (EXAMPLE-1), the rest did not run.
  const notRun = countExamples(document) - results.length
  const warnings =
    notRun === 0
      ? report.warnings
      : [...report.warnings, { rule: 'EXAMPLE-2', message: `${notRun} example${notRun === 1 ? '' : 's'} not run: the examples of one request share one evaluation budget, and it is spent`, pointer: '', descriptor: null }]
  // Bounded again as a whole (engine boundReport): the examples' diagnostics count toward the report's bounds.
  return failed.length === 0 && notRun === 0 ? report : boundReport({ ...report, valid: report.valid && failed.length === 0, errors: [...report.errors, ...failed], warnings })
}
