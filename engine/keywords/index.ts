// The keyword catalogue (language.md §9): every name the language gives meaning to, one module each,
// listed here in pipeline order. Adding a keyword is its module plus one entry in this list; the
// compiler (pipeline.ts), validation, the descriptor type and the catalogue all read from it. A
// plugin may never be registered under one of these names.
import type { Provenance } from '../diagnostics.js'
import description from './inert/description.js'
import examples from './inert/examples.js'
import extend from './registry/extend.js'
import id from './registry/id.js'
import ref from './registry/ref.js'
import each from './structure/each.js'
import mapping from './structure/mapping.js'
import all from './locate/all.js'
import first from './locate/first.js'
import input from './locate/input.js'
import last from './locate/last.js'
import output from './locate/output.js'
import source from './locate/source.js'
import target from './locate/target.js'
import switchKeyword from './dispatch/switch.js'
import concat from './shape/concat.js'
import constant from './shape/constant.js'
import find from './shape/find.js'
import init from './shape/init.js'
import random from './shape/random.js'
import template from './shape/template.js'
import transform from './shape/transform.js'
import unique from './shape/unique.js'
import enumKeyword from './validate/enum.js'
import maxLength from './validate/max-length.js'
import maximum from './validate/maximum.js'
import minLength from './validate/min-length.js'
import minimum from './validate/minimum.js'
import multipleOf from './validate/multiple-of.js'
import pattern from './validate/pattern.js'
import required from './validate/required.js'
import typeKeyword from './validate/type.js'
import asKeyword from './finalize/as.js'
import defaultKeyword from './finalize/default.js'
import regexpI from './finalize/regexp-i.js'
import stdout from './diagnostic/stdout.js'
import type { KeywordName } from '../descriptor.js'
import { truthy } from '../values.js'
import type { KeywordRecord, Parts, Stage } from './record.js'

/** Every keyword, in pipeline order within each stage (the order validators report in, too). */
export const KEYWORDS = [
  id,
  ref,
  extend,
  description,
  examples,
  mapping,
  each,
  source,
  target,
  input,
  output,
  first,
  last,
  all,
  switchKeyword,
  find,
  concat,
  init,
  constant,
  random,
  unique,
  template,
  transform,
  typeKeyword,
  maximum,
  minimum,
  multipleOf,
  minLength,
  maxLength,
  enumKeyword,
  pattern,
  required,
  defaultKeyword,
  regexpI,
  asKeyword,
  stdout,
] as const

/** A name descriptor.ts gives an operand type but no record implements (checked as the project compiles). */
type Unimplemented = Exclude<KeywordName, (typeof KEYWORDS)[number]['name']>
const everyKeywordHasARecord: [Unimplemented] extends [never] ? true : Unimplemented = true
void everyKeywordHasARecord

const BY_NAME: ReadonlyMap<string, KeywordRecord> = new Map(KEYWORDS.map((k) => [k.name, k as KeywordRecord]))

export function isKeyword(name: string): boolean {
  return BY_NAME.has(name)
}

export function keywordRecord(name: string): KeywordRecord | undefined {
  return BY_NAME.get(name)
}

const BY_STAGE = new Map<Stage, KeywordRecord[]>()
for (const record of KEYWORDS as readonly KeywordRecord[]) {
  const list = BY_STAGE.get(record.stage) ?? []
  list.push(record)
  BY_STAGE.set(record.stage, list)
}

/** The records of one stage, in pipeline order. */
export function stage(name: Stage): readonly KeywordRecord[] {
  return BY_STAGE.get(name) ?? []
}

/** Keywords whose operand is a JSON Pointer into a scope (source, target, input, output). */
export const POINTER_KEYWORDS: readonly string[] = KEYWORDS.filter((k) => (k as KeywordRecord).pointer === true).map((k) => k.name)

/** Keywords whose evaluation can observe the context's paths. */
export const PATH_OBSERVING_KEYWORDS: readonly string[] = KEYWORDS.filter((k) => (k as KeywordRecord).observesPaths === true).map((k) => k.name)

const SHIFTING: readonly KeywordRecord[] = (KEYWORDS as readonly KeywordRecord[]).filter((k) => k.shifts !== undefined)

/** The paths a descriptor's keywords extend (SHIFT): the truthy string operands of those that shift one. */
export function shiftsOf(descriptor: Record<string, unknown>): { source: string | undefined; target: string | undefined } {
  const paths: { source: string | undefined; target: string | undefined } = { source: undefined, target: undefined }
  for (const record of SHIFTING) {
    const operand = descriptor[record.name]
    if (truthy(operand) && typeof operand === 'string') paths[record.shifts!] ??= operand
  }
  return paths
}

/** The provenance of a descriptor: the first of its pointer keywords that is defined. */
export function provenanceOf(descriptor: unknown): Provenance {
  if (descriptor === null || typeof descriptor !== 'object' || Array.isArray(descriptor)) return null
  for (const key of POINTER_KEYWORDS) {
    if (Object.hasOwn(descriptor, key) && (descriptor as Record<string, unknown>)[key] !== undefined) {
      return [key, (descriptor as Record<string, unknown>)[key]]
    }
  }
  return null
}

/** Keywords whose operand holds something (record.ts `Parts`), in catalogue order. */
const WITH_PARTS: readonly KeywordRecord[] = (KEYWORDS as readonly KeywordRecord[]).filter((k) => k.parts !== undefined)

/** Keywords whose truthy operand stands for the whole descriptor. */
const STANDING_ALONE: readonly KeywordRecord[] = (KEYWORDS as readonly KeywordRecord[]).filter((k) => k.standsAlone === true)

/** The keyword that stands for the whole of `descriptor` (its operand truthy), if one does. */
export function standingAlone(descriptor: Record<string, unknown>): KeywordRecord | undefined {
  for (const record of STANDING_ALONE) if (truthy(descriptor[record.name])) return record
  return undefined
}

/**
 * `visit` as one keyword's `parts` call it, for a driver of what evaluation reaches: its `at`
 * continued from the keyword object's pointer, and a falsy pairing value, which gives no pairings
 * (language.md §2.5), not passed on.
 */
class Under implements Parts {
  constructor(
    private readonly name: string,
    private readonly visit: Parts
  ) {}

  descriptor(value: unknown, at: readonly string[]): void {
    this.visit.descriptor(value, [this.name, ...at])
  }

  alternative(value: unknown, at: readonly string[]): void {
    this.visit.alternative(value, [this.name, ...at])
  }

  pairings(value: unknown, at: readonly string[]): void {
    if (truthy(value)) this.visit.pairings(value, [this.name, ...at])
  }

  ancestry(value: unknown, at: readonly string[]): void {
    this.visit.ancestry(value, [this.name, ...at])
  }

  reference(id: unknown, at: readonly string[]): void {
    this.visit.reference(id, [this.name, ...at])
  }

  pointer(value: unknown, at: readonly string[]): void {
    this.visit.pointer(value, [this.name, ...at])
  }

  initializer(name: string, at: readonly string[]): void {
    this.visit.initializer(name, [this.name, ...at])
  }

  transformer(name: string, at: readonly string[]): void {
    this.visit.transformer(name, [this.name, ...at])
  }

  report(rule: string, message: string, at: readonly string[], found: unknown): void {
    this.visit.report(rule, message, [this.name, ...at], found)
  }

  mappings(): ((id: string) => unknown) | null {
    return this.visit.mappings()
  }

  inheritance(descriptor: Record<string, unknown>, self: string): string | undefined {
    return this.visit.inheritance(descriptor, self)
  }
}

/**
 * Visit the documents a keyword object holds, as evaluation reaches them: keyword by keyword in
 * catalogue order, each `at` continuing the object's pointer. With `alone`, a keyword that stands
 * for the whole descriptor is visited by itself, as evaluation reads it.
 */
export function visitChildren(descriptor: Record<string, unknown>, visit: Parts, alone = false): void {
  const whole = alone ? standingAlone(descriptor) : undefined
  if (whole !== undefined) {
    whole.parts?.(descriptor[whole.name], descriptor, new Under(whole.name, visit))
    return
  }
  for (const record of WITH_PARTS) {
    const operand = descriptor[record.name]
    if (operand !== undefined) record.parts!(operand, descriptor, new Under(record.name, visit))
  }
}

const IGNORE = (): void => {}

/** A `Parts` visit that ignores everything but what it is given: validation's checks and lookups answer nothing. */
export function visiting(some: Partial<Parts>): Parts {
  return {
    descriptor: IGNORE,
    alternative: IGNORE,
    pairings: IGNORE,
    ancestry: IGNORE,
    reference: IGNORE,
    pointer: IGNORE,
    initializer: IGNORE,
    transformer: IGNORE,
    report: IGNORE,
    mappings: () => null,
    inheritance: () => undefined,
    ...some,
  }
}

/**
 * The pairing value a keyword object maps through, or undefined when it maps through none: its
 * structure keywords decide which (`mapping`, else `each`).
 */
export function pairingValueOf(descriptor: Record<string, unknown>): unknown {
  let found: unknown
  visitChildren(
    descriptor,
    visiting({
      pairings(value) {
        found ??= value
      },
    })
  )
  return found
}

/** The keywords that stand at the top of a mapping document, in catalogue order (record.ts `documentMember`). */
export const DOCUMENT_MEMBERS: readonly KeywordRecord[] = (KEYWORDS as readonly KeywordRecord[]).filter((record) => record.documentMember !== undefined)

/** The names of those that stand beside `mappings` in a compound document too. */
export const COMPOUND_MEMBERS: ReadonlySet<string> = new Set(DOCUMENT_MEMBERS.filter((record) => record.documentMember === 'compound').map((record) => record.name))

export type { KeywordRecord, OperandIssue, Parts, Stage, Tier } from './record.js'
