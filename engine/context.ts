// The evaluation context (engine.md §4). Everything shared by one invocation lives in its `Run`;
// a `Context` adds the rebound scopes. Compiled plans hold no per-run state, so one plan serves
// any number of concurrent runs.
import { BudgetExceeded, measure, type Budget, type Limits } from './budget.js'
import { resolvePath, type WriteOwnership } from './pointer.js'
import type { Pairings, RunCompiler } from './plan.js'
import type { RegistryView } from './registry.js'
import type {
  Descriptor,
  ErrorObject,
  EvaluationContext,
  Initializer,
  MappingDocument,
  Plugin,
  ScopeOverrides,
  Transformer,
} from './types.js'

const NO_EXTRAS: readonly string[] = []

/** Names an `extra` field may not take: they are the context's own members. */
const RESERVED = new Set([
  // Read through getters below, so a host may supply them lazily (a signal made on first use).
  'identity', 'signal',
  'input', 'output', 'errors', 'mappings', 'initializers', 'transformers', 'plugins', 'source',
  'target', 'paths', 'run', 'parent', 'index', 'sourcePath', 'targetPath', 'evaluate',
  'evaluateMapping', 'matchInput', 'derive', 'constructor', '__proto__', 'prototype',
])

/** How many steps pass between two looks at the clock. */
const CLOCK_INTERVAL = 1024

/** The meter's state that a short, pure evaluation never touches. */
interface RareState {
  pluginCalls: number
  /** The clock starts at the first checkpoint (or plugin await): short evaluations never read it. */
  started: number
  deadline: number
  tripped: BudgetExceeded | null
  signal: AbortSignal | undefined
}

/** The first step count at which a run with these limits looks at its meter. */
export function firstCheckpoint(limits: Readonly<Required<Limits>>): number {
  return Math.min(CLOCK_INTERVAL, limits.steps, limits.fanOut, limits.outputValues) + 1
}

/** The shared state of one invocation, and the meter of its budgets. */
export class Run implements WriteOwnership {
  readonly extraKeys: readonly string[]
  private foreign: WeakSet<object> | null = null
  private steps = 0
  private values = 0
  private bytes = 0
  private levels = 0
  /** What only long, tripped or plugin-calling evaluations need, made when first needed. */
  private rare: RareState | null = null

  constructor(
    readonly input: unknown,
    readonly output: object,
    readonly errors: ErrorObject[],
    readonly registry: RegistryView,
    readonly compiler: RunCompiler,
    readonly stdout: (text: string) => void,
    readonly extra: Readonly<Record<string, unknown>> | undefined,
    readonly limits: Readonly<Required<Limits>>,
    /** `firstCheckpoint(limits)`, computed once per set of limits by the caller. */
    private checkpoint: number,
    /** `limits.depth`, read on every context made. */
    readonly maxDepth: number
  ) {
    this.extraKeys = extra === undefined ? NO_EXTRAS : Object.keys(extra).filter((k) => !RESERVED.has(k))
  }

  private get state(): RareState {
    return (this.rare ??= { pluginCalls: 0, started: 0, deadline: Infinity, tripped: null, signal: undefined })
  }

  /** Stop the evaluation: every later step of it (a concurrent branch too) rethrows the same error. */
  trip(budget: Budget, limit: number, used: number): never {
    const tripped = (this.state.tripped = new BudgetExceeded(budget, limit, used))
    this.checkpoint = -Infinity
    throw tripped
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
    const tripped = this.rare?.tripped
    if (tripped) throw tripped
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
    if (this.steps > limits.steps) this.trip('steps', limits.steps, this.steps)
    if (this.levels > limits.fanOut) this.trip('fanOut', limits.fanOut, this.levels)
    if (this.values > limits.outputValues) this.trip('outputValues', limits.outputValues, this.values)
    // Scalar text is looked at here, not per write: a string written many times is shared until
    // the output is printed, and the evaluation's end looks once more (`finish`).
    if (this.bytes > limits.outputBytes) this.trip('outputBytes', limits.outputBytes, this.bytes)
  }

  /** The evaluation is over: its output is within the budgets, or it throws. */
  finish(): void {
    const tripped = this.rare?.tripped
    if (tripped) throw tripped
    this.checkCounts()
  }

  /**
   * One mapping level entered (an `each` element, a `mapping` or reference expansion). It counts
   * its pairings' work, and a value and a key for each of them: an upper bound of what they write,
   * so that a write itself costs nothing unless it brings text or a container by reference.
   */
  enterLevel(pairings: Pairings): void {
    this.levels++
    this.values += pairings.list.length
    this.bytes += pairings.keyBytes
    this.tick(pairings.weight + 1)
  }

  /** A string written: its text will be printed (looked at on the next checkpoint). */
  wroteText(length: number): void {
    this.bytes += length
  }

  /** A container written by reference: measured now, as printing copies it each time it is written. */
  wroteReference(value: object): void {
    const limits = this.limits
    const size = measure(value, limits.outputValues - this.values, limits.outputBytes - this.bytes)
    this.values += size.values
    this.bytes += size.bytes
    this.tick(size.values)
    if (this.values > limits.outputValues) this.trip('outputValues', limits.outputValues, this.values)
    if (this.bytes > limits.outputBytes) this.trip('outputBytes', limits.outputBytes, this.bytes)
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

  /** Settle a plugin's promise, or fail with the time budget when the deadline comes first. */
  withinDeadline<T>(pending: Promise<T>): Promise<T> {
    if (!this.startClock()) return pending
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        try {
          this.trip('timeMs', this.limits.timeMs, Math.ceil(performance.now() - this.state.started))
        } catch (error) {
          reject(error)
        }
      }, Math.max(0, this.remainingMs()))
      pending.then(
        (value) => {
          clearTimeout(timer)
          resolve(value)
        },
        (error: unknown) => {
          clearTimeout(timer)
          reject(error)
        }
      )
    })
  }

  /** The signal extensions see: the host's, joined by the deadline when there is one. */
  signal(): AbortSignal | undefined {
    const host = this.extra?.signal as AbortSignal | undefined
    if (!this.startClock()) return host
    const state = this.state
    if (state.signal === undefined) {
      const timeout = AbortSignal.timeout(Math.max(0, Math.ceil(this.remainingMs())))
      state.signal = host === undefined ? timeout : AbortSignal.any([host, timeout])
    }
    return state.signal
  }

  /** A value written into the output that came from outside the engine (input, document, extension). */
  markForeign(value: object): void {
    ;(this.foreign ??= new WeakSet()).add(value)
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

const ROOT_PATHS = Object.freeze({ source: '/', target: '/' })

/** One depth of evaluation: the run's shared fields plus this depth's source, target and paths. */
export class Context implements EvaluationContext {
  private cachedPaths: { readonly source: string; readonly target: string } | undefined
  private readonly depth: number
  readonly [extra: string]: unknown

  constructor(
    readonly run: Run,
    readonly source: unknown,
    readonly target: object,
    /** The enclosing context (read by explain traces to find a step's pairing). */
    readonly parent: Context | null,
    /** Element index appended to `paths.source` (NEST), or -1. */
    readonly index: number,
    /** The descriptor's truthy `source`, appended to `paths.source`. */
    readonly sourcePath: string | undefined,
    /** The descriptor's truthy `target`, appended to `paths.target`. */
    private readonly targetPath: string | undefined
  ) {
    // A mapping that references itself recurses as long as its input does; one whose scope never
    // shrinks would recurse forever, so the depth budget stops it before the host stack runs out.
    this.depth = parent === null ? 0 : parent.depth + 1
    if (this.depth > run.maxDepth) run.trip('depth', run.maxDepth, this.depth)
    const keys = run.extraKeys
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!
      ;(this as Record<string, unknown>)[key] = run.extra![key]
    }
  }

  get input(): unknown {
    return this.run.input
  }

  get output(): object {
    return this.run.output
  }

  get errors(): ErrorObject[] {
    return this.run.errors
  }

  get mappings(): Readonly<Record<string, Readonly<MappingDocument>>> {
    return this.run.registry.view()
  }

  get initializers(): Readonly<Record<string, Initializer>> {
    return this.run.compiler.extensions.initializers
  }

  get transformers(): Readonly<Record<string, Transformer>> {
    return this.run.compiler.extensions.transformers
  }

  get plugins(): Readonly<Record<string, Plugin>> {
    return this.run.compiler.extensions.plugins
  }

  /** The caller's identity, when the host supplied one (`extra.identity`). */
  get identity(): unknown {
    return this.run.extra?.identity
  }

  /** The host's abort signal (`extra.signal`) joined by the time budget, made only when an extension asks. */
  get signal(): AbortSignal | undefined {
    return this.run.signal()
  }

  /** Computed on first use: only relative references and extensions look at paths. */
  get paths(): { readonly source: string; readonly target: string } {
    if (this.cachedPaths !== undefined) return this.cachedPaths
    const base = this.parent === null ? ROOT_PATHS : this.parent.paths
    let source = base.source
    if (this.sourcePath !== undefined) {
      source = this.index >= 0 ? resolvePath(source, `/${this.index}`, this.sourcePath) : resolvePath(source, this.sourcePath)
    }
    const target = this.targetPath !== undefined ? resolvePath(base.target, this.targetPath) : base.target
    this.cachedPaths = source === base.source && target === base.target ? base : Object.freeze({ source, target })
    return this.cachedPaths
  }

  /** A context with the same target and paths reading from another source. */
  withSource(source: unknown): Context {
    return new Context(this.run, source, this.target, this, -1, undefined, undefined)
  }

  evaluate(descriptor: Descriptor, overrides?: ScopeOverrides): unknown {
    return this.run.compiler.reenter(this, descriptor, overrides, false)
  }

  evaluateMapping(descriptor: Descriptor, overrides?: ScopeOverrides): object | null | Promise<object | null> {
    return this.run.compiler.reenter(this, descriptor, overrides, true) as object | null | Promise<object | null>
  }

  /** An extension's pattern input, under the budget the `pattern` keyword's is (the request plugin's scraper). */
  matchInput(length: number): void {
    this.run.matchInput(length)
  }
}
