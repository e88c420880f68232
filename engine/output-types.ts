// The values output-schema inference (engine/output-schema.ts) reasons with: what a descriptor can
// produce in an evaluation whose envelope ends valid, as a union of alternatives plus whether it may
// be undefined (nothing written). Only the output of a valid evaluation is described: there every
// pairing ran and every validator passed (language.md §7.4, §10.1), so a validator narrows the value
// it saw and `required` makes it defined. Everything here must stay sound: an alternative may admit
// more than the engine can produce, never less; `any` is the answer whenever unsure.
// Keywords contribute through `outputType` on their records (keywords/record.ts), with these helpers.

/** The scalar types a value is narrowed to (`integer` is a number with an integral value). */
export type ScalarType = 'null' | 'boolean' | 'number' | 'integer' | 'string'

/** The bounds a number alternative may carry (validators that passed). */
export interface NumericBounds {
  readonly minimum?: number
  readonly maximum?: number
}

export type NumericBound = keyof NumericBounds

export type Alt =
  | { readonly kind: 'any' }
  | { readonly kind: 'const'; readonly value: unknown }
  | ({ readonly kind: 'scalar'; readonly type: ScalarType; readonly maxLength?: number } & NumericBounds)
  /** An array whose members are among `items` (none: the empty array). */
  | { readonly kind: 'array'; readonly items: readonly Alt[] }
  /** An object with at least these properties typed (others may be present: never closed). */
  | { readonly kind: 'object'; readonly properties: ReadonlyMap<string, Property> }
  /** The object a registered mapping's pairings map into, where it recurses ($defs). */
  | { readonly kind: 'ref'; readonly id: string }

export interface Property {
  readonly alts: readonly Alt[]
  /** Written in every valid evaluation. */
  readonly required: boolean
}

export interface Inferred {
  readonly alts: readonly Alt[]
  /** The value may be undefined (a pairing then writes nothing). */
  readonly undefined: boolean
}

/** What a keyword's `outputType` may ask of the inference driving it. */
export interface Inference {
  /** READ (language.md §7.6) of a descriptor in the current context: a combinator element, a switch case. */
  read(descriptor: unknown): Inferred
  /** Pairings that write into the current level's target while the value is computed (`template`, decision 5). */
  writesInto(pairingValue: unknown): void
}

export const ANY: Alt = Object.freeze({ kind: 'any' })
export const ANY_ARRAY: Alt = Object.freeze({ kind: 'array', items: [ANY] })
export const ANY_OBJECT: Alt = Object.freeze({ kind: 'object', properties: new Map() })
/** Nothing is known: any value, or undefined. */
export const UNKNOWN: Inferred = Object.freeze({ alts: [ANY], undefined: true })

export const scalar = (type: ScalarType): Alt => ({ kind: 'scalar', type })

export const constant = (value: unknown): Inferred => ({ alts: [{ kind: 'const', value }], undefined: false })

/** The JSON type of a JSON value. */
export function jsonTypeOf(value: unknown): 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object' {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  const type = typeof value
  return type === 'boolean' || type === 'number' || type === 'string' ? type : 'object'
}

const keyOf = (alt: Alt): string | undefined => {
  if (alt.kind === 'const') return `c${JSON.stringify(alt.value)}`
  if (alt.kind === 'scalar') return `s${JSON.stringify(alt)}`
  if (alt.kind === 'ref') return `r${alt.id}`
  return undefined
}

/** The alternatives of all the lists (`any` absorbs the rest; repeated scalars and constants once). */
export function union(...lists: ReadonlyArray<readonly Alt[]>): Alt[] {
  return unionOf(lists)
}

/** `union` of a list of lists, however long (an argument list would hold them all on the stack). */
export function unionOf(lists: ReadonlyArray<readonly Alt[]>): Alt[] {
  const out: Alt[] = []
  const seen = new Set<unknown>()
  for (const list of lists) {
    for (const alt of list) {
      if (alt.kind === 'any') return [ANY]
      const key = keyOf(alt) ?? alt
      if (seen.has(key)) continue
      seen.add(key)
      out.push(alt)
    }
  }
  return out
}

/** Each alternative replaced by those `f` gives for it; definedness kept. */
export function mapAlts(value: Inferred, f: (alt: Alt) => readonly Alt[]): Inferred {
  return { alts: unionOf(value.alts.map(f)), undefined: value.undefined }
}

/** Whether an alternative admits values of this JSON type (`integer`: a number). */
function admits(alt: Alt, type: string): boolean {
  switch (alt.kind) {
    case 'any':
      return true
    case 'const':
      return type === 'integer' ? Number.isInteger(alt.value) : jsonTypeOf(alt.value) === type
    case 'scalar':
      return alt.type === type || (type === 'number' && alt.type === 'integer') || (type === 'integer' && alt.type === 'number')
    case 'array':
      return type === 'array'
    default:
      return type === 'object'
  }
}

/** The value after the `type` validator passed (language.md §10.3): of that type, or undefined. */
export function narrowType(value: Inferred, type: string): Inferred {
  return mapAlts(value, (alt) => {
    if (!admits(alt, type)) return []
    if (alt.kind === 'any') return [type === 'array' ? ANY_ARRAY : type === 'object' ? ANY_OBJECT : scalar(type as ScalarType)]
    if (alt.kind === 'scalar' && type === 'integer') return [{ ...alt, type: 'integer' }]
    return [alt]
  })
}

/** The value after `enum` passed: one of the members (strict equality: a JSON value equal to one), or undefined. */
export function narrowEnum(value: Inferred, members: readonly unknown[]): Inferred {
  const kept = members.filter((member) => value.alts.some((alt) => (alt.kind === 'const' ? JSON.stringify(alt.value) === JSON.stringify(member) : admits(alt, jsonTypeOf(member)))))
  return { alts: union(kept.map((member) => ({ kind: 'const', value: member }))), undefined: value.undefined }
}

/**
 * A numeric bound a passed validator puts on the number alternatives: `field` of the scalar, kept
 * at the `tighter` of the bound it had and `operand` (Math.max for a lower bound, Math.min for an upper).
 */
export function bound(value: Inferred, operand: unknown, field: NumericBound, tighter: (a: number, b: number) => number): Inferred {
  if (typeof operand !== 'number' || !Number.isFinite(operand)) return value
  return mapAlts(value, (alt) => {
    if (alt.kind === 'scalar' && (alt.type === 'number' || alt.type === 'integer')) {
      const current = alt[field]
      return [{ ...alt, [field]: current === undefined ? operand : tighter(current, operand) }]
    }
    return [alt]
  })
}
