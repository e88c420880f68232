// Public types of the engine: what a library user imports alongside `Mapper`.
import type { Limits } from './budget.js'
import type { Descriptor, MappingDocument, PairingMap } from './descriptor.js'

export type { Descriptor, DescriptorObject, Example, JsonValue, KeywordName, KeywordOperands, MappingDocument, PairingMap, PairingValue } from './descriptor.js'

/** Several named mappings travelling together; the last member is the entry. */
export interface CompoundDocument {
  $id?: string
  description?: string
  mappings: Record<string, MappingDocument>
}

/** Anything `mapper.map` accepts as a document. */
export type Document = MappingDocument | CompoundDocument | PairingMap

/** An entry of the error list: provenance, keyword fields, then `message`. */
export interface ErrorObject {
  message: string
  [field: string]: unknown
}

/** The result of a top-level invocation: the output's keys plus `valid` and `errors`. */
export interface Envelope {
  valid: boolean
  errors: ErrorObject[]
  [outputKey: string]: unknown
}

/** Scopes a re-entrant evaluation may rebind (language.md §4.2). */
export interface ScopeOverrides {
  source?: unknown
  target?: object
}

/** The live evaluation context handed to every extension (language.md §12.5). */
export interface EvaluationContext {
  /** The whole input of the invocation (after array wrapping). */
  readonly input: unknown
  /** The whole output under construction. */
  readonly output: object
  /** The shared error list; push an error object to refuse a value (it short-circuits). */
  readonly errors: ErrorObject[]
  /** The mappings visible to this evaluation, keyed by `$id` (read-only). */
  readonly mappings: Readonly<Record<string, Readonly<MappingDocument>>>
  readonly initializers: Readonly<Record<string, Initializer>>
  readonly transformers: Readonly<Record<string, Transformer>>
  readonly plugins: Readonly<Record<string, Plugin>>
  /** Where reads go at this depth. */
  readonly source: unknown
  /** Where writes go at this depth. */
  readonly target: object
  /** Absolute pointers of the current read and write scopes. */
  readonly paths: { readonly source: string; readonly target: string }
  /** Caller identity, when the host supplies one (the HTTP service passes the verified claims). */
  readonly identity?: unknown
  /**
   * Aborted when the host gives up on the evaluation (request closed, health timeout), when its
   * time budget runs out, and when it stops early (a budget tripped, a failure in a fan-out, §13):
   * a plugin doing I/O should stop then, since its result is no longer wanted.
   */
  readonly signal?: AbortSignal
  /** Run one descriptor through the value pipeline (GET) in a context derived from this one. */
  evaluate(descriptor: Descriptor, overrides?: ScopeOverrides): unknown
  /** Map a structural descriptor (MAP) into a fresh target; `null` when it short-circuits. */
  evaluateMapping(descriptor: Descriptor, overrides?: ScopeOverrides): object | null | Promise<object | null>
  /**
   * A string of `length` characters is about to be matched against a pattern: counted against the
   * `patternInput` budget as the `pattern` keyword's input is (throws `BudgetExceeded` past it).
   */
  matchInput(length: number): void
  readonly [extra: string]: unknown
}

/** `initializer(value, context) → value`; MUST be synchronous (EXT-2). */
export type Initializer = (value: unknown, context: EvaluationContext) => unknown

/** `transformer(value, context, options?) → value`; MUST be synchronous (EXT-6). */
export type Transformer = (value: unknown, context: EvaluationContext, options?: Record<string, unknown>) => unknown

/** One finding of a plugin's own check of its options: the rule, in words, and where under the options. */
export interface PluginOptionIssue {
  readonly rule: string
  readonly message: string
  /** Reference tokens below the options object; absent or empty: the options themselves. */
  readonly at?: readonly string[]
}

/**
 * `async plugin(options, value, context) → value`: the effect boundary of the language. A plugin
 * may carry `validateOptions(options)`: instance-level validation calls it for every descriptor
 * that names the plugin and reports its findings as errors (synchronous, never throwing).
 */
export type Plugin = ((options: any, value: unknown, context: EvaluationContext) => unknown) & {
  validateOptions?: (options: unknown) => readonly PluginOptionIssue[]
}

/** The three extension registries of an engine instance. */
export interface Extensions {
  initializers?: Record<string, Initializer>
  transformers?: Record<string, Transformer>
  plugins?: Record<string, Plugin>
}

/** Engine behaviour switches beyond the language. */
export interface EngineOptions {
  /**
   * `'skip'` (default, the reference behaviour, GET-5): unknown `init` and `transform` names are
   * silently skipped. `'error'`: each one appends an error object naming it.
   */
  unknownNames?: 'skip' | 'error'
  /** Where the `stdout` keyword prints; defaults to `console.log`. */
  stdout?: (text: string) => void
  /**
   * `true` (default): each level's pairings are compiled to one generated JavaScript function
   * (document text enters it only as escaped string literals). `false`: the closure plan only,
   * for a process that must not generate code (it is also used when the process forbids it).
   */
  codegen?: boolean
  /** Per-evaluation budgets of this instance (each evaluation may narrow or widen them again). */
  limits?: Limits
  /** Bounds of the prepared-document cache (`Mapper.prepare`): 256 documents, 1 MiB of their text. */
  cache?: { entries?: number; bytes?: number }
}

/** The environment of the one-shot evaluation functions `evaluate` and `evaluateMapping`. */
export interface Environment extends Extensions, EngineOptions {
  input?: unknown
  /** The error accumulator the caller inspects afterwards. */
  errors?: ErrorObject[]
  /** Named mappings keyed by `$id`, used as given (not flattened). */
  mappings?: Record<string, unknown>
}
