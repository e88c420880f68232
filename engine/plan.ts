// The shapes a compiled document takes. A plan is built once and never changes; everything an
// evaluation varies lives in the Context / Run it is given.
import type { Context } from './context.js'
import type { Reader, Writer } from './pointer.js'
import type { Descriptor, Initializer, Plugin, ScopeOverrides, Transformer } from './types.js'

/** A value or the promise of one: pure documents never pay for promises. */
export type Maybe<T> = T | Promise<T>

/** One pipeline stage operation. `awaits`: a promise it returns is settled before the next step. */
export interface Step {
  readonly run: (value: unknown, context: Context) => unknown
  readonly awaits: boolean
}

/** A descriptor position that dereferences (`$ref`, name strings) when evaluation reaches it. */
export type Slot = (context: Context) => Plan

/** Where a level's pairings come from: fixed, or resolved through names when evaluation gets there. */
export type PairingSlot = (context: Context, hops?: number) => Pairings

/** The pairings of one mapping level, compiled. */
export interface Pairings {
  readonly list: readonly Pairing[]
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
}

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
  /** Truthy `mapping` or `each`: the descriptor maps instead of returning a read value. */
  readonly structural: boolean
  readonly hasSwitch: boolean
  /** Truthy `source` / `target` pointers, which extend the context's paths. */
  readonly sourcePath: string | undefined
  readonly targetPath: string | undefined
  /** The `stdout` operand, printed when MAP receives this descriptor directly. */
  readonly stdout: unknown
  /** True when its evaluation can observe the context's paths (so it needs its own context). */
  readonly observesPaths: boolean
  /** The dereferenced pairing map of `mapping` / `each` (null when not structural). */
  readonly pairings: PairingSlot | null
  /** Its pairings when it is named as the value of another descriptor's `mapping` / `each`. */
  asPairingMap(context: Context, hops: number): Pairings
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
}
