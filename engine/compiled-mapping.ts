// A compiled mapping (language.md §6.2, Part 2 "API"): one document compiled for repeated evaluation,
// the envelope its runs answer, and the options of a run. `Mapper` (mapper.ts) makes them.
import { BUDGETS, BudgetExceeded, resolveLimits, type Limits, type SharedBudget } from './budget.js'
import { Compiler } from './compile.js'
import { ExplainRegistry } from './explain/instrument.js'
import { traceRun, type Explanation, type Tracer } from './explain/trace.js'
import { reachedPairingValue } from './document.js'
import { standingAlone } from './keywords/index.js'
import { firstCheckpoint, Run } from './run.js'
import { Context, type EvaluationRun, type Maybe, type Pairings, type Plan, type RegistryView, type Slot } from './context.js'
import { mapPlan } from './procedures.js'
import type { Envelope, ErrorObject } from './types.js'

/** Build the envelope (§6.2 step 5); a short-circuited output counts as empty. */
function envelope(result: object | null, output: object, errors: ErrorObject[]): Envelope {
  const valid = errors.length === 0
  // `in` (no getter runs): an inherited name only sends the envelope the copying way, as an own one does.
  if (result === null || 'valid' in output || 'errors' in output) return envelopeApart(result, output, valid, errors)
  const out = output as Envelope
  out.valid = valid
  out.errors = errors
  return out
}

/** An envelope of its own: for a short-circuited output, or one whose output has keys named `valid` or `errors`. */
function envelopeApart(result: object | null, output: object, valid: boolean, errors: ErrorObject[]): Envelope {
  return result === null ? { valid, errors } : { ...output, valid, errors }
}

/** Per-evaluation settings of `run` and `map`. */
export interface RunOptions {
  /** Budgets of this evaluation, over the instance's (`resolveLimits` output is used as it is). */
  limits?: Limits
  /** Where the `stdout` keyword prints in this evaluation. */
  stdout?: (text: string) => void
  /**
   * A budget shared with other evaluations (the examples of one request): this one goes on from
   * what they used, and its limits stand in for `limits`.
   */
  budget?: SharedBudget
}

/**
 * What an evaluation hands its extensions, the `extra` argument of `map`, `explain` and `run`: any
 * members but the names of RunOptions, so that run options given in its place
 * (`map(doc, input, { limits })`, where they would be silently ignored) do not compile.
 */
export type Extra = Readonly<Record<string, unknown>> & { readonly [K in keyof RunOptions]?: never }

function isComplete(limits: Limits): limits is Required<Limits> {
  return BUDGETS.every((budget) => typeof limits[budget] === 'number')
}

/**
 * The pairings of an entry plan that can run generated from the top, with no Context (see
 * `CompiledMapping.evaluateEntry`): written in place, each with a generated form, under a GET that
 * passes the source through, with no diagnostics and no paths of its own.
 */
function fromTop(plan: Plan): Pairings | undefined {
  const pairings = plan.fixedPairings
  if (pairings?.free === undefined || !plan.passesThrough || plan.print !== undefined || plan.sourcePath !== undefined || plan.targetPath !== undefined) return undefined
  return pairings
}

/** The pairing map of an entry that has none. */
const EMPTY_MAP = Object.freeze({})

/** An envelope and the explain trace of the evaluation that produced it. */
export interface Explained {
  readonly envelope: Envelope
  readonly explain: Explanation
}

/** A document compiled for repeated evaluation: `run` is synchronous when nothing is asynchronous. */
export class CompiledMapping {
  private wrapped: Slot | undefined
  private readonly direct: Slot
  /** The explain-mode twin of this plan, compiled on the first `explain`. */
  private traced: CompiledMapping | undefined

  constructor(
    private readonly compiler: Compiler,
    private readonly registry: RegistryView,
    private readonly entry: string | Record<string, unknown>,
    private readonly stdout: (text: string) => void,
    private readonly limits: Readonly<Required<Limits>>
  ) {
    this.direct = compiler.slot(entry)
    this.checkpoint = firstCheckpoint(limits)
    if (typeof entry === 'object' && standingAlone(entry) === undefined) this.fixedEntry = fromTop(compiler.plan(entry))
  }

  /** An entry written in place: its pairings when they run generated from the top (see `fromTop`). */
  private readonly fixedEntry: Pairings | undefined

  /** The registry version `looked` was found at (-1: none yet). */
  private lookedAt = -1
  private looked: Pairings | undefined

  /**
   * A registered entry's pairings when they run generated from the top, looked up as the entry's
   * slot looks it up: again whenever the registry changed (or when it keeps no version).
   */
  private lookUp(id: string, version: number | undefined): Pairings | undefined {
    const plan = this.registry.lookup(id)
    const pairings = plan === undefined ? undefined : fromTop(plan)
    if (version !== undefined) {
      this.lookedAt = version
      this.looked = pairings
    }
    return pairings
  }

  private readonly checkpoint: number
  /**
   * The run of the last evaluation that ran the generated entry alone with the instance's own
   * settings, once it ended: the next such evaluation takes it (Run.again) instead of a new one.
   * Taken before use, so an evaluation inside another never shares its run.
   */
  private idle: EvaluationRun | null = null

  private entrySlot(arrayInput: boolean): Slot {
    if (!arrayInput) return this.direct
    return (this.wrapped ??= this.itemsSlot())
  }

  /**
   * The entry as array input reaches it, made once: mapped element by element under `items` (§6.2
   * step 2), with the entry's pairing map only. An entry given by name is reached as a registered
   * document is; one given in place is read by its document form (document.ts): a pairing map or a
   * reference as it is, a descriptor by its own pairing value.
   */
  private itemsSlot(): Slot {
    const entry = this.entry
    const each = typeof entry === 'string' ? entry : (reachedPairingValue(entry) ?? EMPTY_MAP)
    return this.compiler.slot(Object.freeze({ mapping: Object.freeze({ '/items': Object.freeze({ source: '/items', each }) }) }))
  }

  /**
   * Evaluate against an input: the envelope, or a promise of it when a plugin was reached. An
   * evaluation that passes one of its budgets throws (or rejects with) a `BudgetExceeded` error.
   */
  run(input: unknown, extra?: Extra, options?: RunOptions): Envelope | Promise<Envelope> {
    return this.evaluateEntry(input, extra, options, undefined)
  }

  /**
   * Evaluate as `run` does, with the explain trace of the evaluation beside the envelope. The
   * trace comes from a plan compiled for it on first use and kept apart from the one `run` uses,
   * which never records anything. The envelope is the one `run` gives.
   */
  explain(input: unknown, extra?: Extra, options?: RunOptions): Explained | Promise<Explained> {
    const traced = (this.traced ??= new CompiledMapping(
      this.compiler.explaining(),
      new ExplainRegistry(this.registry, this.compiler.explaining()),
      this.entry,
      this.stdout,
      this.limits
    ))
    let tracer: Tracer | undefined
    const result = traced.evaluateEntry(input, extra, options, (run) => (tracer = traceRun(run)))
    if (result instanceof Promise) return result.then((envelope) => ({ envelope, explain: tracer!.explanation() }))
    return { envelope: result, explain: tracer!.explanation() }
  }

  /**
   * One evaluation, from the input to its envelope; `tracing` sees the Run first (explain).
   *
   * Shaped for V8's optimizer (docs/engine.md §7): the evaluation's top level is this one function,
   * and what it calls on every evaluation is small (the Run's constructor, meter, `finish` and
   * `release`, the envelope), its rare branches apart. V8 inlines into one optimized function only
   * up to a cumulative bytecode budget, and does not inline a function of more than 460 bytes of
   * bytecode into its callers. Kept as several small functions, the path was sometimes inlined
   * into the caller whole, which spent the budget before the Run's constructor and `finish`: the
   * `small` benchmark ran at about 80 ns an evaluation in one process of three, 63 in the others.
   * As one function above that size it is always compiled on its own, with those inlined into it.
   */
  private evaluateEntry(input: unknown, extra: Extra | undefined, options: RunOptions | undefined, tracing: ((run: EvaluationRun) => void) | undefined): Envelope | Promise<Envelope> {
    const arrayInput = Array.isArray(input)
    const rootInput = arrayInput ? { items: input } : input
    const errors: ErrorObject[] = []
    // Its budgets: the instance's, a caller's limits over them, or a budget shared with the evaluations before it.
    let budgets = this.limits
    let checkpoint = this.checkpoint
    let stdout = this.stdout
    let shared: SharedBudget | undefined
    if (options !== undefined) {
      if (options.stdout !== undefined) stdout = options.stdout
      shared = options.budget
      const limits = options.limits
      if (shared !== undefined) budgets = shared.limits
      else if (limits !== undefined) budgets = Object.isFrozen(limits) && isComplete(limits) ? limits : resolveLimits(limits, this.limits)
      if (budgets !== this.limits) checkpoint = firstCheckpoint(budgets)
    }
    const idle = this.idle
    let run: EvaluationRun
    if (idle !== null && options === undefined && extra === undefined && tracing === undefined) {
      this.idle = null
      idle.again(rootInput, errors, checkpoint)
      run = idle
    } else {
      run = new Run(rootInput, undefined, errors, this.registry, this.compiler, stdout, extra, budgets, checkpoint, budgets.depth, shared)
    }
    if (tracing !== undefined) tracing(run)
    let result: Maybe<object | null>
    let entry: Pairings | undefined
    try {
      if (arrayInput || run.registry.shadowsPointers) {
        entry = undefined
      } else if (typeof this.entry !== 'string') {
        entry = this.fixedEntry
      } else {
        const version = this.registry.version
        entry = version !== undefined && version === this.lookedAt ? this.looked : this.lookUp(this.entry, version)
      }
      if (entry !== undefined) {
        // mapPlan, runLevel and runPairings (procedures.ts) for an entry whose GET passes its
        // source through to pairings written in place with a generated form: the root's level is
        // one depth down, counted as the Context mapPlan makes would count it.
        if (run.deepest < 1) run.reached(1)
        run.enterLevel(entry)
        // A target of the level's own (null): it may build the output in one step. Nothing reads
        // `run.output` meanwhile: the `output` keyword has no generated form.
        result = entry.made!(run, run.input, null, 1)
      } else {
        result = this.throughPlan(run, arrayInput)
      }
    } catch (error) {
      throw this.failed(run, error)
    }
    // A generated level never awaits (Pairings.free): only the plan's result may be a promise.
    if (entry === undefined && result instanceof Promise) return this.settle(run, result, errors)
    try {
      run.finish(result)
    } catch (error) {
      run.release()
      throw this.placed(error)
    }
    run.release()
    const answer = run.sized(envelope(result, entry === undefined || result === null ? run.output : result, errors))
    // Nothing holds the run of a generated entry (no Context, no extension): the next evaluation may take it.
    if (entry !== undefined && options === undefined && extra === undefined && tracing === undefined) this.idle = run
    return answer
  }

  /** The entry's plan from a root context: what has no generated form from the top. */
  private throughPlan(run: EvaluationRun, arrayInput: boolean): Maybe<object | null> {
    const root = new Context(run, run.input, run.output, null, -1, undefined, undefined)
    return mapPlan(this.entrySlot(arrayInput)(root), root)
  }

  /** The envelope of an evaluation that reached a plugin, once it settles. */
  private settle(run: EvaluationRun, result: Promise<object | null>, errors: ErrorObject[]): Promise<Envelope> {
    return result.then(
      (settled) => {
        try {
          run.finish(settled)
        } catch (error) {
          throw this.failed(run, error)
        } finally {
          run.release()
        }
        return run.sized(envelope(settled, run.output, errors))
      },
      (error: unknown) => {
        throw this.failed(run, error)
      }
    )
  }

  /**
   * The evaluation fails: its run stops, so that work an extension still holds (an inner
   * evaluation it raced against its own timeout) winds down and its signal aborts (§13).
   */
  private failed(run: EvaluationRun, error: unknown): unknown {
    run.stop(error)
    // What it used goes back to a shared budget (release only copies counts: a second call is harmless).
    run.release()
    return this.placed(error)
  }

  /** A budget error that no pairing placed stopped at the entry document's root. */
  private placed(error: unknown): unknown {
    if (error instanceof BudgetExceeded) error.locate('', typeof this.entry === 'string' ? this.entry : undefined)
    return error
  }
}
