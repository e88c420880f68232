// A keyword's operand grammar, read from its schema fragment (record.ts `schema`): the fragment is
// the one place the grammar is written. Editors read it as JSON Schema; validation reads the same
// fragment here, with the finding each failure draws written on the (sub)schema that fails: a
// `REFUSE` annotation, keyed by a symbol so that it never shows in the published schema
// (JSON.stringify and Ajv see string keys only).
//
// The reading, in the manner of a JSON Schema validator with error messages on the schema:
// - A (sub)schema's assertions (`type`, `enum`, bounds, lengths, counts, `anyOf`, `not`, then a
//   `SCREEN`) are tried in that order; the first that fails refuses the value there.
// - Its applicators (`required`, `properties` / `additionalProperties`, `items`) look at every
//   part: each part that fails is reported where it stands (`at`, with the part as `descriptor`)
//   when the subschema that failed has a refusal of its own, otherwise the enclosing (sub)schema
//   refuses once.
// - `anyOf` whose branches all fail is reported by the first branch that got past its `type`,
//   when that branch reported; otherwise it refuses there.
// - A refusal's rule is inherited from the nearest enclosing refusal that names one; its message
//   may be given per failing keyword (`by`) and names the value (`{value}`) or the key (`{key}`)
//   it is about.
// - `$ref` is not followed: what it names (a pointer, a descriptor, pairings) is validation's look
//   inside the operand (record.ts `parts`), with messages of its own. A fragment that needs a
//   type checked here says so beside the `$ref`.
// A fragment keyword this reading does not know throws at its first use: a grammar is never
// silently wider than the fragment says.
import type { OperandIssue } from './record.js'

/** The finding an operand that fails a (sub)schema draws there. */
export const REFUSE: unique symbol = Symbol('operand refusal')
/**
 * A check in code after a (sub)schema's own assertions pass, for a grammar JSON Schema cannot say
 * (the pattern screen): the finding, or undefined when the value passes.
 */
export const SCREEN: unique symbol = Symbol('operand screen')

export interface Refusal {
  /** The rule id; inherited from the enclosing refusal when absent. */
  readonly rule?: string
  readonly message: string
  /** A finding of its own for a failing keyword of this (sub)schema: a message, or a rule and message. */
  readonly by?: Readonly<Record<string, string | { readonly rule: string; readonly message: string }>>
}

export type Screen = (value: unknown) => { readonly rule: string; readonly message: string } | undefined

/** A refusal written on a fragment: `...refuse('KW-x-1', 'x must be …')`. */
export function refuse(rule: string | undefined, message: string, by?: Refusal['by']): { readonly [REFUSE]: Refusal } {
  return { [REFUSE]: { ...(rule === undefined ? {} : { rule }), message, ...(by === undefined ? {} : { by }) } }
}

type Fragment = Readonly<Record<string | symbol, unknown>>

/** Keywords the reading ignores: annotations, and what validation's look inside the operand checks. */
const ANNOTATIONS = new Set(['description', '$ref', 'title', 'examples', 'default', 'deprecated'])
const KNOWN = new Set([
  ...ANNOTATIONS,
  'type', 'enum', 'minimum', 'exclusiveMinimum', 'maximum', 'minLength', 'minItems', 'minProperties', 'maxProperties',
  'anyOf', 'not', 'required', 'properties', 'additionalProperties', 'items',
])

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string'
    case 'boolean':
      return typeof value === 'boolean'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    case 'integer':
      return Number.isInteger(value)
    case 'object':
      return isObject(value)
    case 'array':
      return Array.isArray(value)
    case 'null':
      return value === null
    default:
      throw new Error(`a schema fragment names the type ${type}, which the operand grammar does not know`)
  }
}

function typeMatches(fragment: Fragment, value: unknown): boolean {
  const type = fragment.type
  if (type === undefined) return true
  return Array.isArray(type) ? type.some((name: string) => hasType(value, name)) : hasType(value, type as string)
}

/** Whether `text` has at least `count` code points (JSON Schema's length), counted no further than needed. */
function hasCodePoints(text: string, count: number): boolean {
  if (text.length < count) return false
  if (text.length >= 2 * count) return true
  let points = 0
  for (let i = 0; i < text.length && points < count; i++) {
    const unit = text.charCodeAt(i)
    // A high surrogate followed by a low one is one code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i++
    }
    points++
  }
  return points >= count
}

/** Fragments whose keywords were found known (checked once each, not at every operand). */
const READ = new WeakSet<object>()

/** The first of a fragment's own assertions (not its applicators) the value fails, or undefined. */
function failedAssertion(fragment: Fragment, value: unknown): string | undefined {
  if (!typeMatches(fragment, value)) return 'type'
  if (fragment.enum !== undefined && !(fragment.enum as unknown[]).includes(value)) return 'enum'
  if (typeof value === 'number') {
    if (fragment.minimum !== undefined && value < (fragment.minimum as number)) return 'minimum'
    if (fragment.exclusiveMinimum !== undefined && value <= (fragment.exclusiveMinimum as number)) return 'exclusiveMinimum'
    if (fragment.maximum !== undefined && value > (fragment.maximum as number)) return 'maximum'
  }
  if (typeof value === 'string' && fragment.minLength !== undefined && !hasCodePoints(value, fragment.minLength as number)) return 'minLength'
  if (Array.isArray(value) && fragment.minItems !== undefined && value.length < (fragment.minItems as number)) return 'minItems'
  if (isObject(value)) {
    const count = Object.keys(value).length
    if (fragment.minProperties !== undefined && count < (fragment.minProperties as number)) return 'minProperties'
    if (fragment.maxProperties !== undefined && count > (fragment.maxProperties as number)) return 'maxProperties'
  }
  return undefined
}

/** `pass`; `reported`: failed, its findings added; `silent`: failed with no finding of its own (the enclosing one refuses). */
type Outcome = 'pass' | 'reported' | 'silent'

class Reading {
  readonly found: OperandIssue[] = []

  check(fragment: Fragment, value: unknown, at: readonly string[], inherited: string | undefined): Outcome {
    if (!READ.has(fragment)) {
      for (const key of Object.keys(fragment)) {
        if (!KNOWN.has(key)) throw new Error(`a schema fragment uses ${key}, which the operand grammar does not read`)
      }
      READ.add(fragment)
    }
    const refusal = fragment[REFUSE] as Refusal | undefined
    const rule = refusal?.rule ?? inherited
    const failed = failedAssertion(fragment, value)
    if (failed !== undefined) return this.refuse(refusal, rule, failed, value, at, undefined)
    if (fragment.anyOf !== undefined) {
      const outcome = this.anyOf(fragment.anyOf as Fragment[], value, at, rule)
      if (outcome === 'reported') return outcome
      if (outcome === 'silent') return this.refuse(refusal, rule, 'anyOf', value, at, undefined)
    }
    if (fragment.not !== undefined && new Reading().check(fragment.not as Fragment, value, at, rule) === 'pass') return this.refuse(refusal, rule, 'not', value, at, undefined)
    const screened = (fragment[SCREEN] as Screen | undefined)?.(value)
    if (screened !== undefined) return this.report(screened.rule, screened.message, value, at)
    let outcome = 'pass' as Outcome
    const part = (result: Outcome): void => {
      if (result === 'silent') outcome = 'silent'
      else if (result === 'reported' && outcome === 'pass') outcome = 'reported'
    }
    if (isObject(value)) {
      for (const name of (fragment.required as string[] | undefined) ?? []) {
        if (!Object.hasOwn(value, name)) part(refusal?.by?.required === undefined ? 'silent' : this.refuse(refusal, rule, 'required', value, at, name))
      }
      const properties = fragment.properties as Readonly<Record<string, Fragment>> | undefined
      const others = fragment.additionalProperties as Fragment | boolean | undefined
      if (properties !== undefined || others !== undefined) {
        for (const key of Object.keys(value)) {
          const member = properties !== undefined && Object.hasOwn(properties, key) ? properties[key]! : others
          if (member === undefined || member === true) continue
          if (member === false) part(refusal?.by?.additionalProperties === undefined ? 'silent' : this.refuse(refusal, rule, 'additionalProperties', value[key], [...at, key], key))
          else part(this.check(member, value[key], [...at, key], rule))
        }
      }
    }
    if (Array.isArray(value) && fragment.items !== undefined) {
      const items = fragment.items as Fragment
      value.forEach((element: unknown, i) => part(this.check(items, element, [...at, String(i)], rule)))
    }
    return outcome === 'silent' ? this.refuse(refusal, rule, undefined, value, at, undefined) : outcome
  }

  /** Every branch failed: the first that got past its `type` speaks, when it reported. */
  private anyOf(branches: readonly Fragment[], value: unknown, at: readonly string[], rule: string | undefined): Outcome {
    let speaker: Reading | undefined
    for (const branch of branches) {
      const trial = new Reading()
      const outcome = trial.check(branch, value, at, rule)
      if (outcome === 'pass') return 'pass'
      if (speaker === undefined && typeMatches(branch, value)) speaker = outcome === 'reported' ? trial : new Reading()
    }
    if (speaker === undefined || speaker.found.length === 0) return 'silent'
    for (const finding of speaker.found) this.found.push(finding)
    return 'reported'
  }

  private refuse(refusal: Refusal | undefined, rule: string | undefined, keyword: string | undefined, value: unknown, at: readonly string[], key: string | undefined): Outcome {
    if (refusal === undefined) return 'silent'
    const own = keyword === undefined ? undefined : refusal.by?.[keyword]
    const message = own === undefined ? refusal.message : typeof own === 'string' ? own : own.message
    const ruleOf = own !== undefined && typeof own !== 'string' ? own.rule : rule
    if (ruleOf === undefined) throw new Error(`an operand refusal (${message}) has no rule`)
    return this.report(ruleOf, fill(message, value, key), value, at)
  }

  private report(rule: string, message: string, value: unknown, at: readonly string[]): Outcome {
    this.found.push(at.length === 0 ? { rule, message } : { rule, message, at, descriptor: value })
    return 'reported'
  }
}

function fill(message: string, value: unknown, key: string | undefined): string {
  return message.replace(/\{(value|key)\}/g, (_, name: string) => (name === 'key' ? (key ?? '') : String(value)))
}

/** The issues an operand value has under a keyword's schema fragment (none when it is well-formed). */
export function operandIssues(fragment: Fragment, value: unknown): OperandIssue[] {
  const reading = new Reading()
  reading.check(fragment, value, [], undefined)
  return reading.found
}

/** A fragment as it is published (engine/schema.ts): the grammar's annotations left out, at every depth. */
export function published<T>(fragment: T): T {
  if (Array.isArray(fragment)) return fragment.map((element: unknown) => published(element)) as T
  if (fragment === null || typeof fragment !== 'object') return fragment
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(fragment)) copy[key] = published((fragment as Record<string, unknown>)[key])
  return copy as T
}
