// The evaluation context (language.md §4), and the shapes a compiled document takes. Everything
// shared by one invocation lives in its `Run`; a `Context` adds the rebound scopes. A plan is built
// once and never changes: it holds no per-run state, so one plan serves any number of concurrent
// runs. (Plans and contexts name each other, so they share this module: no import circle.)
import { setMaxListeners } from 'node:events'
import { BudgetExceeded, DEFAULT_LIMITS, LARGE_OUTPUT_BYTES, measure, noteLargeOutput, type Budget, type Limits, type SharedBudget } from './budget.js'
import { resolvePath, type Reader, type WriteOwnership, type Writer } from './pointer.js'
import type { Steps } from './steps.js'
import type { Code, CodeGen } from './codegen/code.js'
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

// The shapes a compiled document takes.

/** A value or the promise of one: pure documents never pay for promises. */
export type Maybe<T> = T | Promise<T>

/** One pipeline stage operation. `awaits`: a promise it returns is settled before the next step. */
export interface Step {
  readonly run: (value: unknown, context: Context) => unknown
  readonly awaits: boolean
}

/** A diagnostic keyword's work: what it shows of a level once MAP has filled the level's target. */
export type Print = (context: Context) => void

/** A descriptor position that dereferences (`$ref`, name strings) when evaluation reaches it. */
export type Slot = (context: Context) => Plan

/** Where a level's pairings come from: fixed, or resolved through names when evaluation gets there. */
export type PairingSlot = (context: Context, hops?: number) => Pairings

/** The pairings of one mapping level, compiled. */
export interface Pairings {
  readonly list: readonly Pairing[]
  /**
   * The level's pairings as one generated function (engine/codegen/level.ts), when the compiler made one:
   * undefined when it ran to the end, null when an error stopped it, else the promise of the rest.
   */
  readonly level: Level | undefined
  /**
   * The level's pairings as a generated function that needs no Context (engine/codegen/level.ts): every
   * pairing generated, nothing that observes paths or awaits. It runs the entered level (its
   * caller counts it with `Run.enterLevel` first) in a context `depth` levels down reading
   * `source`, writing `target`: null when an error stopped it, else the target. A null `target`
   * asks for a fresh object of its own, which it returns (level.ts madeFirst makes it in one
   * step). Never given an array target. Used only while no registered id shadows a pointer
   * string.
   */
  readonly free: Free | undefined
  /** The work steps one run of the level counts for (budgets). */
  readonly weight: number
  /** The printed bytes its pairings' keys and short values take at most (budgets). */
  readonly keyBytes: number
  /** The most output levels one of its writes adds: the longest pointer's tokens, and an array of mapped elements (budgets). */
  readonly reach: number
}

/** Where a pairing map stands: a JSON Pointer into the document named by `mapping`, or into the evaluated one. */
export interface Place {
  readonly mapping: string | undefined
  readonly pointer: string
}

/** One `left ← right` pairing: `run` evaluates the right side and writes it; a promise when async. */
export interface Pairing {
  readonly pointer: string
  /** Where its pairing map stands in its document, when known (for budget errors). */
  readonly place: Place | undefined
  readonly write: Writer
  readonly run: (pairingContext: Context) => Promise<void> | undefined
  /** What a generated level may do in place of `run` (engine/codegen/level.ts); undefined: call `run`. */
  readonly inline?: Inline
}

/** Write a pairing's value; `fresh`: a container the engine built for it (its contents were counted). */
export type Put = (context: Context, value: unknown, fresh: boolean) => void

/**
 * A pairing's run as parts a generated level can inline: read the source at `read` (reference
 * tokens; empty: the whole source) unless the registry shadows pointers, or evaluate `get`; then
 * store at `ownKey` (one plain token) or through `put`.
 */
export interface Inline {
  readonly read?: readonly string[]
  readonly get?: (context: Context) => unknown
  /** The right side's plan (a keyword object), whose pipeline a generated level may inline (`Plan.emit`). */
  readonly plan?: Plan
  /** A structural right side's fixed pairings, which a generated level maps the value through (`Pairings.free`). */
  readonly nested?: Pairings
  readonly ownKey: string | undefined
  readonly put: Put
}

/** A level's pairings generated to run without a Context (see Pairings.free). */
export type Free = (run: Run, source: unknown, target: object | null, depth: number) => object | null

/** A generated level: runs a level's pairings against `pairingContext` (see Pairings.level). */
export type Level = (context: Context, pairingContext: Context, print: Print | undefined) => Promise<object | null> | null | undefined

/** How a plan came about: a keyword object, one of the string forms, or a variant list. */
export type PlanKind = 'object' | 'pointer' | 'relative' | 'invalid' | 'variant'

/** A compiled descriptor. */
export interface Plan {
  readonly kind: PlanKind
  readonly descriptor: unknown
  /** GET (language.md §8): the descriptor's value in a context. */
  readonly get: (context: Context) => unknown
  /** The work steps one GET counts for in its level's weight: pipeline stages and combinator reads. */
  readonly weight: number
  /** A structure keyword gives it a pairing value (`mapping`, `each`): the descriptor maps instead of returning a read value. */
  readonly structural: boolean
  /** A dispatch keyword (`switch`) is present: its value is dispatched (§7.2) like a structural one's. */
  readonly dispatches: boolean
  /** The truthy pointers of its shifting keywords (`source`, `target`), which extend the context's paths. */
  readonly sourcePath: string | undefined
  readonly targetPath: string | undefined
  /** Its diagnostic keywords (`stdout`), run when MAP receives this descriptor directly. */
  readonly print: Print | undefined
  /** True when its evaluation can observe the context's paths (so it needs its own context). */
  readonly observesPaths: boolean
  /** The dereferenced pairing map of its pairing value (null when not structural). */
  readonly pairings: PairingSlot | null
  /** Its pairings when they are written in place (not a name): `pairings` always gives them. */
  readonly fixedPairings: Pairings | undefined
  /** GET gives the context's source as it is: no locate keyword, no step (a plain `{ mapping }`). */
  readonly passesThrough: boolean
  /** Its pairings when it is named as the value of another descriptor's `mapping` / `each`. */
  asPairingMap(context: Context, hops: number): Pairings
  /**
   * Its value pipeline as generated source (engine/codegen/level.ts) leaving GET's value in `v`, or
   * undefined when some step has no generated form (a keyword without `code`, a plugin, explain mode).
   */
  readonly emit: ((gen: CodeGen) => Code | undefined) | undefined
}

/** The extension registries names are bound against when a document compiles. */
export interface ResolvedExtensions {
  readonly initializers: Readonly<Record<string, Initializer>>
  readonly transformers: Readonly<Record<string, Transformer>>
  readonly plugins: Readonly<Record<string, Plugin>>
}

/**
 * What a keyword's compile step may ask of the compiler. Keyword modules see only this view, so
 * none of them depends on the compiler itself (compile.ts imports them, never the reverse).
 */
export interface CompileContext {
  readonly extensions: ResolvedExtensions
  readonly options: { readonly unknownNames: 'skip' | 'error' }
  /** Explain mode: a keyword that decides something a trace shows (a switch's branch) records it. */
  readonly tracing: boolean
  /** A compiled reader for a keyword pointer; an unparseable pointer throws when it is read. */
  reader(pointer: unknown): Reader
  /** A descriptor in a dereferencing position: name strings and `$ref` resolve at run time. */
  slot(descriptor: unknown): Slot
  /** The pairing map of a `mapping` / `each` value, resolved when evaluation reaches it. */
  pairingSlot(value: unknown): PairingSlot
}

/** What an evaluation asks of the compiler while it runs: re-entrant evaluation (EXT-4) and readers. */
export interface RunCompiler extends CompileContext {
  reenter(context: Context, descriptor: Descriptor, overrides: ScopeOverrides | undefined, asMapping: boolean): unknown
}

/** What a registry asks of the compiler: documents placed and compiled as they are registered. */
export interface DocumentCompiler {
  plan(descriptor: unknown): Plan
  locate(document: object, mapping: string | undefined): void
  /** `locate` then `plan`, step by step (engine/steps.ts), for a registration run in slices. */
  compiling(document: object, mapping: string | undefined): Steps<Plan>
}

/** What an evaluation resolves names against. */
export interface RegistryView {
  lookup(id: string): Plan | undefined
  /** True when some id starts with `/`, so a pointer string could name a mapping (§2.4 rule 1). */
  readonly shadowsPointers: boolean
  /** Changes whenever what `lookup` returns may change; absent when a lookup's answer is never kept. */
  readonly version?: number
  /** The visible documents keyed by `$id` (read-only). */
  view(): Readonly<Record<string, Readonly<MappingDocument>>>
}

const NO_EXTRAS: readonly string[] = []

/** The names of `extra` a context takes as its own members. */
function extraKeysOf(extra: Readonly<Record<string, unknown>>): readonly string[] {
  const reserved = (RESERVED ??= reservedNames())
  return Object.keys(extra).filter((k) => !reserved.has(k))
}

/**
 * Names an `extra` field may not take: the context's own members, read from the class itself —
 * its prototype's getters and methods (`input`, `signal`, `evaluate`, …; the getters let a host
 * supply a member lazily, as a signal made on first use) and an instance's fields (`run`,
 * `source`, `depth`, …), which an extra of that name would overwrite — and the names every object
 * has. Made once, on the first evaluation given an `extra`.
 */
let RESERVED: ReadonlySet<string> | undefined

function reservedNames(): ReadonlySet<string> {
  const instance = SHAPE_KEEPERS[1]!
  return new Set([...Object.getOwnPropertyNames(Context.prototype), ...Object.keys(instance), '__proto__', 'prototype'])
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

/** The shared state of one invocation, and the meter of its budgets. */
export class Run implements WriteOwnership {
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
    readonly input: unknown,
    /** The output to write into; undefined: an empty object, made when first asked for (`output`). */
    private made: object | undefined,
    readonly errors: ErrorObject[],
    readonly registry: RegistryView,
    readonly compiler: RunCompiler,
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

  private keys: readonly string[] | undefined

  /** The names of `extra` a Context carries, found when the first Context is made (generated levels make none). */
  get extraKeys(): readonly string[] {
    return (this.keys ??= this.extra === undefined ? NO_EXTRAS : extraKeysOf(this.extra))
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
  enterLevel(pairings: Pairings): void {
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

const ROOT_PATHS = Object.freeze({ source: '/', target: '/' })

/** One depth of evaluation: the run's shared fields plus this depth's source, target and paths. */
export class Context implements EvaluationContext {
  private cachedPaths: { readonly source: string; readonly target: string } | undefined
  /** How many contexts lie above this one (the root is 0), bounded by the depth budget. */
  readonly depth: number
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
    if (this.depth > run.deepest) run.reached(this.depth)
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

  /** The host's abort signal (`extra.signal`) joined by the time budget and the evaluation's end, made only when an extension asks. */
  get signal(): AbortSignal {
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

/**
 * A Run and a Context that live as long as the engine, never evaluated with. V8 frees a hidden
 * class once no object has it, and deoptimizes every function compiled against it ("weak objects"
 * in `--trace-deopt`). Between two evaluations no Run or Context is alive, so each full collection
 * that ran then sent the whole evaluation path (the run's constructor and meter, the generated
 * levels, the closures) back to the interpreter, to be optimized again over the next evaluations:
 * four times in a four-second benchmark of `small`. Holding one instance of each keeps their
 * classes, and the code compiled against them, alive. Neither is ever handed out: their registry
 * and compiler are never read.
 */
export const SHAPE_KEEPERS: readonly object[] = (() => {
  const run = new Run(undefined, {}, [], null as never, null as never, () => {}, undefined, DEFAULT_LIMITS, firstCheckpoint(DEFAULT_LIMITS), DEFAULT_LIMITS.depth)
  return Object.freeze([run, new Context(run, undefined, {}, null, -1, undefined, undefined)])
})()
