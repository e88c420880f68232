// The evaluation context (language.md §4), and the shapes a compiled document takes. Everything
// shared by one invocation lives in its `Run` (engine/run.ts, the meter of its budgets); a
// `Context` adds the rebound scopes. A plan is built once and never changes: it holds no per-run
// state, so one plan serves any number of concurrent runs. (Plans and contexts name each other, so
// they share this module: no import circle.)
import { DEFAULT_LIMITS } from './budget.js'
import { resolvePath, type Reader, type Writer } from './pointer.js'
import { firstCheckpoint, Run, type LevelCost } from './run.js'
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
export interface Pairings extends LevelCost {
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
  /**
   * `free` for a null target, called directly (the entry of an evaluation, a nested level written
   * out): the function that makes the level's object, which `free` would call for it. Saves a
   * call and a test per evaluation of the shortest documents (about 2.5 ns of 52 on `small`).
   */
  readonly made: Free | undefined
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
export type Free = (run: EvaluationRun, source: unknown, target: object | null, depth: number) => object | null

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

/** The meter of one evaluation, with what it resolves names against and re-enters the compiler through. */
export type EvaluationRun = Run<RegistryView, RunCompiler>

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

const ROOT_PATHS = Object.freeze({ source: '/', target: '/' })

/** One depth of evaluation: the run's shared fields plus this depth's source, target and paths. */
export class Context implements EvaluationContext {
  private cachedPaths: { readonly source: string; readonly target: string } | undefined
  /** How many contexts lie above this one (the root is 0), bounded by the depth budget. */
  readonly depth: number
  readonly [extra: string]: unknown

  constructor(
    readonly run: EvaluationRun,
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
    const keys = run.extraKeys ?? (run.extraKeys = run.extra === undefined ? NO_EXTRAS : extraKeysOf(run.extra))
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
