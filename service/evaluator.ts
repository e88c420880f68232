// The one place an evaluation is decided (README "Isolation"): the routes hand over a request and
// its caller, once; this decides where it runs (inline on the event loop, or in a worker thread of
// the served set's pool, by options.isolation), runs it (service/evaluation.ts, the same on both
// sides) and has the observer watch it whole: its span, its metrics, what a worker saw.
import type { ServiceConfig } from '../config/resolve.js'
import { InvalidMappingDocument, unknownMapping } from './errors.js'
import type { EngineService } from './mapping-service.js'
import { evaluateRequest, runCompiled, validateDocument, type MapOutcome, type MapRequest, type Report } from './evaluation.js'
import { isHeavy, IsolatedFailure, type Isolation, type TaskAnswer } from '../workers/isolation.js'
import { documentOf, JsonText } from './json-text.js'
import { EXPLICIT, UNKNOWN, type EvaluationObserver } from '../observability/observer.js'

/** Who asked, as the evaluation needs to know it. */
export interface Caller {
  /** The verified claims, when auth is on. */
  readonly identity: unknown
  /** Aborted when the client goes away; made on first use (a pure mapping never asks). */
  readonly signal: () => AbortSignal
  /** Where the `stdout` keyword's lines go. */
  readonly stdout: (text: string) => void
  /** Whether anyone reads them: a worker sends its lines back only then. */
  readonly wantsStdout: boolean
  /** The request body's size in bytes, when known: a large one's isolated work runs in the helper process (`Isolation.run`). */
  readonly bodyBytes?: number
}

/**
 * The `extra` of an inline evaluation: the caller's identity and its abort signal, made on first
 * use. A class rather than a literal with a getter, which would give V8 a new hidden class per
 * request (see http/routes/caller.ts). An observer adds `evaluation` to it.
 */
class CallerExtra {
  [field: string]: unknown
  readonly #caller: Caller

  constructor(caller: Caller) {
    this.#caller = caller
    this.identity = caller.identity
  }

  get signal(): AbortSignal {
    return this.#caller.signal()
  }
}

export class Evaluator {
  constructor(
    private readonly isolation: ServiceConfig['isolation'],
    private readonly observer: EvaluationObserver
  ) {}

  /**
   * The pool a request of this form runs in, or undefined for inline. A large request (a body the
   * route kept as text, service/json-text.ts) runs in the pool whenever there is one.
   */
  #pool(engine: EngineService, registered: boolean, explain: boolean, large: boolean): Isolation | undefined {
    const isolation = this.isolation
    if (isolation === false) return undefined
    const isolated = large || (registered ? isolation.registered || (explain && isolation.explicit) : isolation.explicit)
    return isolated ? engine.isolation : undefined
  }

  /** The lines a worker printed, passed on; its failure thrown as the error it was shaped into. */
  #settle(answer: TaskAnswer, caller: Caller): TaskAnswer & { ok: true } {
    for (const line of answer.stdout) caller.stdout(line)
    if (!answer.ok) throw new IsolatedFailure(answer.failure)
    return answer
  }

  /**
   * POST /map on `engine` (read once by the route: a reload may swap the served set meanwhile). A
   * registered id that is not served is 404, an invalid explicit document 422 with its report.
   * Inline, an evaluation that needs no await is answered synchronously; a refusal may be thrown.
   */
  map(engine: EngineService, request: MapRequest, caller: Caller): MapOutcome | Promise<MapOutcome> {
    const registered = typeof request.mapping === 'string'
    const label = registered ? (request.mapping as string) : EXPLICIT
    // Only a served id becomes a label (metrics, span): any other is counted under one, and refused.
    if (registered && !engine.has(label)) {
      return this.observer.run<MapOutcome>(UNKNOWN, {}, () => {
        throw unknownMapping(label)
      })
    }
    // Kept as text by the route: a large input, or (mapping null) a large explicit document.
    const largeInput = request.input instanceof JsonText
    const pool = this.#pool(engine, registered, request.explain, largeInput || request.mapping === null)
    if (pool === undefined) {
      // Isolation off: a large input is parsed here after all.
      if (largeInput) request = { ...request, input: (request.input as JsonText).parse() }
      const extra = new CallerExtra(caller)
      return this.observer.run(label, extra, () => evaluateRequest(engine, request, extra, caller.stdout, (prepared) => this.observer.prepared(prepared)))
    }
    return this.observer.run(label, {}, async () => {
      const limits = registered ? engine.settings.limits.registered : engine.settings.limits.explicit
      // A document's text crosses in place of the document, and a large input's in place of the
      // input: a string is copied, an object graph cloned.
      const mapping = request.mappingText === undefined ? request.mapping : null
      const crossing: MapRequest = largeInput
        ? { mapping, mappingText: request.mappingText, input: undefined, inputText: (request.input as JsonText).text, explain: request.explain }
        : request.mappingText === undefined
          ? request
          : { mapping, mappingText: request.mappingText, input: request.input, explain: request.explain }
      const heavy = isHeavy(caller.bodyBytes, crossing.inputText, crossing.mappingText)
      const answer = await pool.run({ kind: 'map', request: crossing, identity: caller.identity, stdout: caller.wantsStdout }, limits.timeMs, caller.signal(), heavy)
      this.observer.isolated(label, answer)
      const settled = this.#settle(answer, caller)
      if (!('outcome' in settled)) throw new Error('an isolated evaluation answered without an outcome')
      return settled.outcome
    })
  }

  /**
   * POST /map/stream: the evaluation of each line of a stream, decided once for the whole stream
   * where `map` decides per request, by the same rules: a registered id not served is 404, an
   * invalid explicit document 422 with its report, both before any line runs. Each line is then
   * one evaluation on the mapping's own budgets, observed (counted, traced) as a /map evaluation
   * is. Inline, the plan is looked up (or the explicit document validated) once, and a line that
   * needs no await is answered synchronously; isolated, each line is a task of the pool, and an
   * explicit document is validated there first.
   */
  async stream(engine: EngineService, mapping: string | object, caller: Caller): Promise<(input: unknown) => MapOutcome | Promise<MapOutcome>> {
    const registered = typeof mapping === 'string'
    const label = registered ? mapping : EXPLICIT
    const pool = this.#pool(engine, registered, false, false)
    if (pool === undefined) {
      let compiled
      let limits
      if (registered) {
        compiled = engine.registered(mapping)
        if (compiled === undefined) throw unknownMapping(mapping)
      } else {
        const prepared = engine.explicit(mapping)
        this.observer.prepared(prepared)
        if (prepared.compiled === null) throw new InvalidMappingDocument(prepared.report)
        compiled = prepared.compiled
        limits = engine.settings.limits.explicit
      }
      const options = { limits, stdout: caller.stdout }
      return (input) => {
        const extra = new CallerExtra(caller)
        return this.observer.run(label, extra, () => runCompiled(compiled, input, extra, options))
      }
    }
    if (registered && engine.registered(label) === undefined) throw unknownMapping(label)
    if (!registered) {
      const task = { kind: 'validate', document: mapping, mayEvaluate: false, identity: caller.identity, stdout: caller.wantsStdout } as const
      const settled = this.#settle(await pool.run(task, engine.settings.limits.explicit.timeMs, caller.signal()), caller)
      if (!('report' in settled)) throw new Error('an isolated validation answered without a report')
      if (!settled.report.valid) throw new InvalidMappingDocument(settled.report)
    }
    return (input) => this.map(engine, { mapping, input, explain: false }, caller)
  }

  /**
   * POST /validate of a submitted document (an object, or kept as text when large: JsonText), with
   * its JSON text as sent when the route has it: its report, and its examples run when valid and
   * `mayEvaluate` (all on one shared budget). In a worker wherever `isolation.validate` is on (the
   * default, whatever `map.explicit` says): validation grows with the document. There the document
   * crosses as its text and the report comes back printed (a string), which the route sends as it is.
   */
  async validate(engine: EngineService, document: object, text: string | undefined, mayEvaluate: boolean, caller: Caller): Promise<Report | string> {
    const pool = this.isolation !== false && this.isolation.validate ? engine.isolation : undefined
    if (pool === undefined) {
      const parsed = document instanceof JsonText ? documentOf(document.parse()) : document
      return validateDocument(engine, parsed, mayEvaluate, { identity: caller.identity }, caller.stdout)
    }
    const documentText = document instanceof JsonText ? document.text : text
    const task = { kind: 'validate', document: documentText === undefined ? document : null, documentText, printed: true, mayEvaluate, identity: caller.identity, stdout: caller.wantsStdout } as const
    const heavy = isHeavy(caller.bodyBytes, documentText)
    const settled = this.#settle(await pool.run(task, engine.settings.limits.explicit.timeMs, caller.signal(), heavy), caller)
    if (!('reportText' in settled)) throw new Error('an isolated validation answered without its printed report')
    return settled.reportText
  }
}
