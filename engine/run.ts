// The meter of one evaluation (language.md §4 "Budgets"): the `Run` every context of an invocation
// shares. It holds what the invocation shares (its input, output, errors, registry, compiler and
// extras) and counts what it does against its budgets (engine/budget.ts): steps, levels, values,
// bytes, depth, plugin calls, pattern input and time. The counting methods are on the evaluation
// path of every document: they stay small, and the state that only long, tripped or
// plugin-calling evaluations need is made when first needed (`RareState`).
import { setMaxListeners } from 'node:events'
import { BudgetExceeded, LARGE_OUTPUT_BYTES, measure, noteLargeOutput, type Budget, type Limits, type SharedBudget } from './budget.js'
import type { WriteOwnership } from './pointer.js'
import type { ErrorObject } from './types.js'

/** What entering a mapping level counts (a level's compiled pairings, `Pairings`, carry these). */
export interface LevelCost {
  /** Its pairings: a value and a key counted for each. */
  readonly list: { readonly length: number }
  /** The work steps one run of the level counts for. */
  readonly weight: number
  /** The printed bytes its pairings' keys and short values take at most. */
  readonly keyBytes: number
  /** The most output levels one of its writes adds: the longest pointer's tokens, and an array of mapped elements. */
  readonly reach: number
}

/** How many steps pass between two looks at the clock. */
const CLOCK_INTERVAL = 1024

/** The meter's state that a short, pure evaluation never touches. */
interface RareState {
  pluginCalls: number
  /** The clock starts at the first checkpoint (or plugin await): short evaluations never read it. */
  started: number
  deadline: number
  /** Why the evaluation stopped (a budget it tripped, a failure that ends it); null while it runs. */
  halt: { readonly reason: unknown } | null
  /** Aborted when the evaluation stops: the extensions' signal watches it. */
  stopper: AbortController | undefined
  signal: AbortSignal | undefined
}

/** The first step count at which a run with these limits looks at its meter. */
export function firstCheckpoint(limits: Readonly<Required<Limits>>): number {
  return Math.min(CLOCK_INTERVAL, limits.steps, limits.fanOut, limits.outputValues) + 1
}

/**
 * The shared state of one invocation, and the meter of its budgets. `Registry` and `Compiler` are
 * what the evaluation resolves names against and re-enters the compiler through; the meter never
 * reads them (engine/context.ts gives them their types: `EvaluationRun`).
 */
export class Run<Registry = unknown, Compiler = unknown> implements WriteOwnership {
  private foreign: Set<object> | null = null
  private steps = 0
  private values = 0
  private bytes = 0
  private levels = 0
  /** Bytes the keywords built (`build`). */
  private built = 0
  /** The deepest context made so far (its depth; the root is 0): a Context made deeper calls `reached`. */
  deepest = 0
  /** The most output levels one pairing of the levels entered may add: its pointer's tokens, and an array. */
  private reach = 0
  /** The deepest container written by reference (measured as it was written). */
  private referenceDepth = 0
  /** What only long, tripped or plugin-calling evaluations need, made when first needed. */
  private rare: RareState | null = null

  constructor(
    public input: unknown,
    /** The output to write into; undefined: an empty object, made when first asked for (`output`). */
    private made: object | undefined,
    public errors: ErrorObject[],
    readonly registry: Registry,
    readonly compiler: Compiler,
    readonly stdout: (text: string) => void,
    readonly extra: Readonly<Record<string, unknown>> | undefined,
    readonly limits: Readonly<Required<Limits>>,
    /** `firstCheckpoint(limits)`, computed once per set of limits by the caller. */
    private checkpoint: number,
    /** `limits.depth`, read on every context made. */
    readonly maxDepth: number,
    /** A budget shared with the evaluations before this one: its counts go on from theirs (`release`). */
    private readonly shared?: SharedBudget
  ) {
    // (Small on purpose, as the meter's hot methods are: see CompiledMapping.evaluateEntry.)
    if (shared !== undefined) this.resume(shared)
  }

  /**
   * The output the plan writes into. A level generated from the top returns an object of its own
   * (CompiledMapping.evaluateEntry), so an evaluation that runs only such code never makes this one.
   */
  get output(): object {
    return (this.made ??= {})
  }

  /** The names of `extra` a Context carries, found when the first Context is made (engine/context.ts; generated levels make none). */
  extraKeys: readonly string[] | undefined

  /**
   * Made ready for another evaluation with the same settings: every count back to zero, a new
   * input and error list, nothing of the last evaluation left. Only for a run nothing else holds:
   * CompiledMapping keeps the run of an evaluation that ran generated code alone from the top (no
   * Context made, no extension called, none stopped) for the next one with the same settings,
   * which saves a Run's allocation on the shortest evaluations (npm run bench small, Node 24:
   * about 1 ns of 51).
   */
  again(input: unknown, errors: ErrorObject[], checkpoint: number): void {
    this.foreign = null
    this.steps = 0
    this.values = 0
    this.bytes = 0
    this.levels = 0
    this.built = 0
    this.deepest = 0
    this.reach = 0
    this.referenceDepth = 0
    this.rare = null
    this.input = input
    this.made = undefined
    this.errors = errors
    this.checkpoint = checkpoint
  }

  /** Go on from what the evaluations before this one used of a shared budget. */
  private resume(shared: SharedBudget): void {
    this.steps = shared.steps
    this.values = shared.values
    this.bytes = shared.bytes
    this.built = shared.built
    this.levels = shared.levels
    this.rare = { pluginCalls: shared.pluginCalls, started: shared.started, deadline: shared.deadline, halt: shared.tripped === null ? null : { reason: shared.tripped }, stopper: undefined, signal: undefined }
    this.checkpoint = shared.tripped === null ? this.nextCheckpoint() : -Infinity
  }

  /** The evaluation is over, however it ended: what it used goes back to the shared budget. */
  release(): void {
    if (this.shared !== undefined) this.giveBack(this.shared)
  }

  private giveBack(shared: SharedBudget): void {
    shared.steps = this.steps
    shared.values = this.values
    shared.bytes = this.bytes
    shared.built = this.built
    shared.levels = this.levels
    shared.pluginCalls = this.state.pluginCalls
    // A spent budget stays spent for the evaluations after this one; any other failure was this one's.
    const reason = this.rare?.halt?.reason
    shared.tripped ??= reason instanceof BudgetExceeded ? reason : null
  }

  private get state(): RareState {
    return (this.rare ??= { pluginCalls: 0, started: 0, deadline: Infinity, halt: null, stopper: undefined, signal: undefined })
  }

  /** Stop the evaluation on a budget: every later step of it (a concurrent branch too) rethrows the same error. */
  trip(budget: Budget, limit: number, used: number): never {
    const halt = this.state.halt
    if (halt !== null) throw halt.reason
    const tripped = new BudgetExceeded(budget, limit, used)
    this.stop(tripped)
    throw tripped
  }

  /**
   * End the evaluation with `reason`; the first reason given is the one that stands. Every later
   * step rethrows it, and the signal plugins see aborts with it, so that the branches of a fan-out
   * still in flight wind down instead of running on for an answer nobody will read (§13).
   */
  stop(reason: unknown): void {
    const state = this.state
    if (state.halt !== null) return
    state.halt = { reason }
    this.checkpoint = -Infinity
    state.stopper?.abort(reason)
  }

  /** Why the evaluation stopped, or null while it runs. */
  get halted(): { readonly reason: unknown } | null {
    return this.rare === null ? null : this.rare.halt
  }

  /** Aborted when the evaluation stops (made on first use: a run without plugins never needs it). */
  private stopSignal(): AbortSignal {
    const state = this.state
    if (state.stopper === undefined) {
      state.stopper = new AbortController()
      if (state.halt !== null) state.stopper.abort(state.halt.reason)
    }
    return state.stopper.signal
  }

  /**
   * Count `n` work steps. A level entered counts at least one step more than the values it may
   * write, and a container written by reference a step per value, so one comparison serves all the
   * counted budgets: the checkpoint is never further than the step, fan-out or value budget has
   * room left, nor than CLOCK_INTERVAL steps.
   */
  tick(n: number): void {
    if ((this.steps += n) >= this.checkpoint) this.atCheckpoint()
  }

  private nextCheckpoint(): number {
    const limits = this.limits
    const room = Math.min(CLOCK_INTERVAL, limits.steps - this.steps, limits.fanOut - this.levels, limits.outputValues - this.values)
    return this.steps + room + 1
  }

  private atCheckpoint(): void {
    const halt = this.rare?.halt
    if (halt) throw halt.reason
    this.checkCounts()
    const limits = this.limits
    if (this.startClock()) {
      const now = performance.now()
      if (now > this.state.deadline) this.trip('timeMs', limits.timeMs, Math.ceil(now - this.state.started))
    }
    this.checkpoint = this.nextCheckpoint()
  }

  private checkCounts(): void {
    const limits = this.limits
    // One test on the way, the budget named apart (the evaluation path stays small: CompiledMapping.evaluateEntry).
    if (this.steps > limits.steps || this.levels > limits.fanOut || this.values > limits.outputValues || this.bytes > limits.outputBytes) this.overCounts()
  }

  /** A counted budget is passed: trip the first of them, in checkCounts' order. */
  private overCounts(): void {
    const limits = this.limits
    if (this.steps > limits.steps) this.trip('steps', limits.steps, this.steps)
    if (this.levels > limits.fanOut) this.trip('fanOut', limits.fanOut, this.levels)
    if (this.values > limits.outputValues) this.trip('outputValues', limits.outputValues, this.values)
    // Scalar text is looked at here, not per write: a string written many times is shared until
    // the output is printed, and the evaluation's end looks once more (`finish`).
    if (this.bytes > limits.outputBytes) this.trip('outputBytes', limits.outputBytes, this.bytes)
  }

  /**
   * The evaluation is over: what will be printed — the output (null when it is left out) and the
   * error objects — is within the budgets, or it throws. The output's nesting is bounded from what
   * the run saw (contexts, pointer lengths, references), and walked only when that bound is too
   * high; error objects are measured only when there are some.
   */
  finish(output: object | null = this.output): void {
    const halt = this.rare?.halt
    if (halt) throw halt.reason
    this.checkCounts()
    if (output !== null && (this.deepest + 1) * (this.reach + 1) + this.referenceDepth + 1 > this.limits.outputDepth) this.measureDepth(output)
    if (this.errors.length > 0) this.wroteReference(this.errors)
  }

  /** The output's nesting walked: the bound from what the run saw was too high to vouch for it. */
  private measureDepth(output: object): void {
    const limit = this.limits.outputDepth
    const depth = measure(output, Infinity, Infinity, limit).depth
    if (depth > limit) this.trip('outputDepth', limit, depth)
  }

  /** A context `depth` levels down was made, deeper than any before. */
  reached(depth: number): void {
    if (depth > this.maxDepth) this.trip('depth', this.maxDepth, depth)
    this.deepest = depth
  }

  /**
   * `bytes` of text or structure about to be built by a keyword: counted before it is built, so a
   * value too large for the budget is never made.
   */
  build(bytes: number): void {
    if ((this.built += bytes) > this.limits.builtBytes) this.trip('builtBytes', this.limits.builtBytes, this.built)
  }

  /**
   * JSON text of a value the engine prints (`as: json`, `stdout`): its nesting is bounded and its
   * size estimated before JSON.stringify recurses into it, and the text counts as built.
   */
  stringify(value: unknown, indent?: number): string | undefined {
    let estimate: number
    if (value !== null && typeof value === 'object') {
      const limits = this.limits
      const size = measure(value, Infinity, limits.builtBytes - this.built, limits.outputDepth)
      if (size.depth > limits.outputDepth) this.trip('outputDepth', limits.outputDepth, size.depth)
      this.tick(size.values)
      estimate = size.bytes
    } else {
      estimate = typeof value === 'string' ? value.length + 2 : 8
    }
    this.build(estimate)
    const text = JSON.stringify(value, null, indent)
    // Escapes and long numbers print longer than the estimate: the rest is counted once it is known.
    if (text !== undefined && text.length > estimate) this.build(text.length - estimate)
    return text
  }

  /**
   * One mapping level entered (an `each` element, a `mapping` or reference expansion). It counts
   * its pairings' work, and a value and a key for each of them: an upper bound of what they write,
   * so that a write itself costs nothing unless it brings text or a container by reference.
   */
  enterLevel(pairings: LevelCost): void {
    this.levels++
    if (pairings.reach > this.reach) this.reach = pairings.reach
    this.values += pairings.list.length
    this.bytes += pairings.keyBytes
    this.tick(pairings.weight + 1)
  }

  /** A string written: its text will be printed (looked at on the next checkpoint). */
  wroteText(length: number): void {
    this.bytes += length
  }

  /**
   * A pairing's value about to be written (SET, §7.1), counted: a string's text; a container not
   * `fresh` (not built by the engine for this write, whose contents were counted as they were
   * made) measured, and marked as from elsewhere, so that no later write changes it in place.
   * The level counted the pairing's key and value when it was entered (`enterLevel`). The one
   * count of a write: the compiled put (procedures.ts putter) and generated levels call it.
   */
  wrote(value: unknown, fresh: boolean): void {
    if (typeof value === 'string') this.bytes += value.length
    else if (!fresh && value !== null && typeof value === 'object') {
      this.wroteReference(value)
      this.markForeign(value)
    }
  }

  /**
   * The envelope of the finished evaluation, as it is returned: a large one (its counted output
   * bytes past LARGE_OUTPUT_BYTES) is noted, so the route prints it a slice at a time.
   */
  sized<T extends object>(envelope: T): T {
    if (this.bytes > LARGE_OUTPUT_BYTES) noteLargeOutput(envelope, this.bytes)
    return envelope
  }

  /** A container written by reference: measured now, as printing copies it each time it is written. */
  wroteReference(value: object): void {
    const limits = this.limits
    const size = measure(value, limits.outputValues - this.values, limits.outputBytes - this.bytes, limits.outputDepth)
    this.values += size.values
    this.bytes += size.bytes
    this.tick(size.values)
    if (this.values > limits.outputValues) this.trip('outputValues', limits.outputValues, this.values)
    if (this.bytes > limits.outputBytes) this.trip('outputBytes', limits.outputBytes, this.bytes)
    if (size.depth > this.referenceDepth) {
      if (size.depth > limits.outputDepth) this.trip('outputDepth', limits.outputDepth, size.depth)
      this.referenceDepth = size.depth
    }
  }

  /** `count` values about to be made at once (a `random` selection). */
  willMake(count: number): void {
    const allowed = this.limits.outputValues - this.values
    if (count > allowed) this.trip('outputValues', this.limits.outputValues, this.values + count)
    this.tick(count)
  }

  /** One plugin call about to start. */
  callPlugin(): void {
    const state = this.state
    if (++state.pluginCalls > this.limits.pluginCalls) this.trip('pluginCalls', this.limits.pluginCalls, state.pluginCalls)
    this.tick(1)
  }

  /** A string about to be matched against a pattern. */
  matchInput(length: number): void {
    if (length > this.limits.patternInput) this.trip('patternInput', this.limits.patternInput, length)
    this.tick(1 + (length >> 6))
  }

  /** Start the clock unless it runs already; false when there is no time budget. */
  private startClock(): boolean {
    if (this.limits.timeMs === Infinity) return false
    const state = this.state
    if (state.deadline === Infinity) {
      state.started = performance.now()
      state.deadline = state.started + this.limits.timeMs
    }
    return true
  }

  /** Milliseconds left before the deadline (Infinity without one). */
  private remainingMs(): number {
    return this.startClock() ? this.state.deadline - performance.now() : Infinity
  }

  /**
   * Await a plugin's promise inside the evaluation. The deadline bounds the wait: a plugin that
   * outlives it trips the time budget, and is no longer waited for (its promise stays observed, so
   * its late rejection is never unhandled). Once the evaluation has stopped, the plugin has been
   * told through its signal and is still waited for, within the same deadline, so that no call the
   * evaluation started outlives its answer; its result is then the reason the evaluation stopped.
   */
  awaitPlugin<T>(pending: Promise<T>): Promise<T> {
    const state = this.state
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined
      if (this.startClock()) {
        timer = setTimeout(() => {
          try {
            this.trip('timeMs', this.limits.timeMs, Math.ceil(performance.now() - state.started))
          } catch {
            // The run has stopped now, if it had not already: its reason answers this await.
          }
          reject(state.halt!.reason)
        }, Math.max(0, this.remainingMs()))
      }
      pending.then(
        (value) => {
          clearTimeout(timer)
          if (state.halt === null) resolve(value)
          else reject(state.halt.reason)
        },
        (error: unknown) => {
          clearTimeout(timer)
          reject(state.halt === null ? error : state.halt.reason)
        }
      )
    })
  }

  /** The signal extensions see: the evaluation's end, joined by the host's and by the deadline when there are. */
  signal(): AbortSignal {
    const state = this.state
    if (state.signal === undefined) {
      const signals = [this.stopSignal()]
      const host = this.extra?.signal as AbortSignal | undefined
      if (host !== undefined) signals.push(host)
      if (this.startClock()) signals.push(AbortSignal.timeout(Math.max(0, Math.ceil(this.remainingMs()))))
      const signal = signals.length === 1 ? signals[0]! : AbortSignal.any(signals)
      // Every plugin call of the evaluation may listen to this one signal, a fan-out's calls all at
      // once (up to the pluginCalls budget): many listeners are its normal use, not a leak.
      setMaxListeners(0, signal)
      state.signal = signal
    }
    return state.signal
  }

  /** A value written into the output that came from outside the engine (input, document, extension). */
  markForeign(value: object): void {
    ;(this.foreign ??= new Set()).add(value)
  }

  isForeign(container: object): boolean {
    return this.foreign !== null && this.foreign.has(container)
  }

  adopt(copy: object): void {
    // The copy is the engine's own now; the members it shares with the original are not.
    for (const member of Object.values(copy)) {
      if (member !== null && typeof member === 'object') this.markForeign(member)
    }
  }
}
