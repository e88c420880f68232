// A keyword of the language is one record (like a vocabulary entry of a JSON Schema validator):
// its name, stage and tier, its operand's JSON Schema fragment (which editors check the operand
// with, and validation reads as the operand's grammar: grammar.ts), what the operand holds
// (`parts`: the one traversal every driver that walks a document uses), and how it compiles into
// its stage of the value pipeline. As in Ajv, the driver decides when a keyword runs and the
// keyword decides what it does. Each keyword is one module under its stage's folder;
// keywords/index.ts lists them in pipeline order, and everything else — the compiler, validation,
// the expansion bound, explain, the descriptor type, the catalogue — is derived from that list.
import type { InlineForm } from '../codegen/inline.js'
import type { CompileContext, Context, Maybe, Print, Step } from '../context.js'
import type { Run } from '../run.js'
import type { KeywordName } from '../descriptor.js'
import type { Provenance } from '../diagnostics.js'
import type { Inference, Inferred } from '../output-types.js'

export type Stage =
  | 'registry'
  | 'structure'
  | 'locate'
  | 'dispatch'
  | 'shape'
  | 'validate'
  | 'finalize'
  | 'diagnostic'
  | 'inert'

export type Tier = 'core' | 'extended' | 'experimental'

/** A document-level finding about an operand; `at` continues the keyword's pointer. */
export interface OperandIssue {
  readonly rule: string
  readonly message: string
  readonly at?: readonly string[]
  readonly descriptor?: unknown
}

/** Where a locate keyword takes the pipeline's value from. */
export type Locate = (context: Context) => Maybe<unknown>

/** A locate operation, and whether it always returns a plain value (never a promise). */
export interface CompiledLocate {
  readonly locate: Locate
  readonly sync: boolean
}

/** A validator: appends at most one error object to the run's errors, never changes the value. */
export type Check = (value: unknown, run: Run) => void

/** What a keyword of each pipeline stage compiles to. */
export interface Compiled {
  locate: CompiledLocate
  dispatch: Step
  shape: Step
  validate: Check
  finalize: Step
  diagnostic: Print
}

export type CompiledFor<S extends Stage> = S extends keyof Compiled ? Compiled[S] : never

/**
 * What a keyword's operand holds, as every driver that walks a document sees it: the documents in
 * it (nested descriptors, the pairing value, ancestors, the mapping it stands for) and what
 * validation checks inside it (pointers, extension names, findings of its own). A keyword's `parts`
 * calls one method per part, in order, `at` continuing the keyword's pointer (reference tokens);
 * what a part means is the driver's. Validation (validation/validate.ts) takes every part as
 * written. The compiler, the static expansion bound (validation/expansion.ts), the stdout check and
 * output-schema inference walk the documents evaluation reaches, through `visitChildren`
 * (keywords/index.ts), which passes on no falsy pairing value; the checks are nothing to them.
 */
export interface Parts {
  /** A descriptor read every time the keyword runs (a combinator's elements): variant lists are not allowed there. */
  descriptor(value: unknown, at: readonly string[]): void
  /** One of several descriptors of which a run reads at most one (a switch's cases). */
  alternative(value: unknown, at: readonly string[]): void
  /** The pairing value the descriptor maps through, as written: pairings, a descriptor giving them, or a mapping reference. */
  pairings(value: unknown, at: readonly string[]): void
  /** Mapping ids whose pairings the descriptor inherits (an `$extend` operand, as written). */
  ancestry(value: unknown, at: readonly string[]): void
  /** The registered mapping the whole descriptor stands for (with `standsAlone`; REG-1 at the instance level). */
  reference(id: unknown, at: readonly string[]): void
  /** A JSON Pointer operand (PTR-9, PTR-10); anything but a string is left alone. */
  pointer(value: unknown, at: readonly string[]): void
  /** An initializer name (KW-init-1 at the instance level). */
  initializer(name: string, at: readonly string[]): void
  /** A transformer name (KW-transform-1 at the instance level). */
  transformer(name: string, at: readonly string[]): void
  /** A finding of the keyword's own about what lies inside its operand. */
  report(rule: string, message: string, at: readonly string[], descriptor: unknown): void
  /** Validation at the instance level: the lookup of a mapping id (its document, or undefined); null anywhere else. */
  mappings(): ((id: string) => unknown) | null
  /**
   * Validation at the instance level: why a descriptor's `$extend` ancestry does not flatten (named
   * `self` in the message), or undefined when it does. One traversal flattens each mapping once,
   * whichever member asks.
   */
  inheritance(descriptor: Record<string, unknown>, self: string): string | undefined
}

/**
 * A JSON Schema (draft 2020-12) fragment for an operand. It may accept more than the operand grammar
 * (it is an editor's aid, never a gate) but never less; `description` is what an editor shows on hover.
 */
export interface SchemaFragment {
  readonly description: string
  readonly [keyword: string]: unknown
  /** The grammar's annotations (keywords/grammar.ts `REFUSE`, `SCREEN`), never published. */
  readonly [annotation: symbol]: unknown
}

export interface KeywordRecord<N extends KeywordName = KeywordName, S extends Stage = Stage> {
  readonly name: N
  readonly stage: S
  readonly tier: Tier
  /**
   * It stands at the top of a mapping document (language.md §2.5): `single`, a member of a single
   * document (the editor offers it there); `compound`, also beside `mappings` in a compound
   * document, where validation checks its operand.
   */
  readonly documentMember?: 'single' | 'compound'
  /** Its operand is a JSON Pointer into a scope: it names a descriptor's provenance, and a `..` in it stops the pipeline. */
  readonly pointer?: boolean
  /** Its evaluation can observe the context's paths (so a descriptor using it gets its own context). */
  readonly observesPaths?: boolean
  /**
   * The operand's JSON Schema fragment, and its grammar: engine/schema.ts assembles the document
   * schema from the fragments, and validation reads the same fragment with the findings written
   * on it (keywords/grammar.ts `refuse`, `operandIssues`).
   */
  readonly schema: SchemaFragment
  /** A fragment for the whole keyword object carrying it, for a grammar that depends on the keys beside it. */
  readonly objectSchema?: Readonly<Record<string, unknown>>
  /**
   * A truthy operand stands for the whole descriptor: the keys beside it are never read, so
   * validation, the expansion bound and a dereferencing position take this keyword alone (`$ref`).
   */
  readonly standsAlone?: boolean
  /**
   * What its operand holds (`Parts`): the documents in it and what validation checks inside it, one
   * call per part. Called whenever the operand is present (not undefined), well-formed or not.
   */
  readonly parts?: (value: unknown, descriptor: Record<string, unknown>, visit: Parts) => void
  /**
   * Locate stage: a truthy string operand extends this path of the context (SHIFT, language.md
   * §7.1), where a nested level's and a relative reference's paths continue from.
   */
  readonly shifts?: 'source' | 'target'
  /**
   * Explain mode, locate stage: where in the input its read stands, for a string operand, given
   * where the context's source stands; absent when the read is not from the input.
   */
  readonly readsAt?: (operand: string, sourceAt: string) => string
  /** Its part of the pipeline for a descriptor, or null when it does nothing there. */
  readonly compile?: (descriptor: Record<string, unknown>, cx: CompileContext, provenance: Provenance) => CompiledFor<S> | null
  /**
   * Its inline form (engine/codegen/inline.ts), which a generated level writes in place of a call
   * of its compiled step: data, never source. The form's `run` is what `compile` calls. Absent:
   * a generated level calls the step (a validator), or the descriptor keeps its compiled pipeline.
   */
  readonly inline?: InlineForm
  /** Shape stage: a promise it returns is settled before the next keyword that needs settled values. */
  readonly settlesLater?: boolean
  /** Shape stage: it needs a settled value (an initializer's promise is settled before it). */
  readonly needsSettled?: boolean
  /**
   * Output-schema inference (engine/output-schema.ts): the value after this keyword in an
   * evaluation that ends valid, given the value before it (for a locate keyword, the scope passed
   * through), or undefined when a locate keyword does not act. Absent: a keyword without `compile`
   * or a validator leaves the value as it is; any other makes it unknown. Never narrower than
   * what evaluation can give.
   */
  readonly outputType?: (value: Inferred, operand: unknown, descriptor: Record<string, unknown>, infer: Inference) => Inferred | undefined
}

/**
 * Declare a keyword: `keyword<'name', 'stage'>({ … })`. Its operand's type is the one
 * descriptor.ts gives that name.
 */
export function keyword<N extends KeywordName, S extends Stage>(record: KeywordRecord<N, S>): KeywordRecord<N, S> {
  return Object.freeze(record)
}

// Schema fragments may name these definitions of the document schema (engine/schema.ts defines them).

/** A JSON Pointer operand, as validation reads one (PTR-9, PTR-10). */
export const POINTER_SCHEMA = { $ref: '#/$defs/pointer' } as const
/** A descriptor where a variant list is allowed (a pairing's right side). */
export const DESCRIPTOR_SCHEMA = { $ref: '#/$defs/descriptor' } as const
/** A descriptor read where a variant list is not allowed (combinator elements, switch cases). */
export const READ_DESCRIPTOR_SCHEMA = { $ref: '#/$defs/readDescriptor' } as const
/** The value of `mapping` / `each`: pairings, a descriptor with pairings, or a mapping reference. */
export const PAIRING_VALUE_SCHEMA = { $ref: '#/$defs/pairingValue' } as const
/** A value the language counts as true (not undefined, null, false, 0 or ""). */
export const TRUTHY_SCHEMA = { $ref: '#/$defs/truthy' } as const
