// The inline forms of keywords: each is one `{ run, emit }` pair, the only implementation of what it
// does. `run` is the plain function the keyword's compiled step calls (the closure path, explain
// mode, every level that is not generated); `emit` writes the same behaviour into a generated
// level (level.ts) where `npm run bench` showed that a call per step costs. A keyword record names
// its form (`inline: 'coerce'`); it carries no source of its own. test/engine-inline.test.ts runs
// each pair against itself, generated against compiled, over inputs fast-check makes.
//
// The source an `emit` writes sees the locals of code.ts CodeGen (`v`, `source`, `run`, `errors`),
// and is written with `_` only: an operand's text enters it as a literal, an operand's object as
// a constant.
import type { Run } from '../run.js'
import { errorObject, type Provenance } from '../diagnostics.js'
import { hasDotDotSegment } from '../pointer.js'
import type { ErrorObject } from '../types.js'
import { isObject, supplier, toText, truthy } from '../values.js'
import { _, join, nil, SOURCE, type Code, type CodeGen } from './code.js'

/**
 * What an inline form writes for a keyword's operand (`name`: the keyword's), or undefined when
 * that operand has no inline form (its step is called).
 */
export type Emit = (operand: unknown, gen: CodeGen, provenance: Provenance, name: string) => Code | undefined

// ---- locate: a pointer read from a scope --------------------------------------------------------

/** `source`, `input`: the operand read from a scope (its run is the compiled reader, pointer.ts). */
const readFrom = (scope: Code): Emit => (operand, gen) => gen.read(operand, scope)

// ---- locate: the first (or last) defined of a list ------------------------------------------------

/** `last`: the last defined value of those its elements read (`first`'s is procedures.ts firstDefined, which variant lists share). */
export function lastDefined(values: readonly unknown[]): unknown {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== undefined) return values[i]
  return undefined
}

/**
 * For elements that are all pointer strings: reads are pure, so reading on only until one is
 * defined gives the value reading them all does. Any other element (a name, a keyword object, an
 * invalid string) keeps the compiled form. The generated level runs this only while no registered
 * id could shadow a pointer string (a dereferencing position looks names up).
 */
const definedOf = (order: 'forward' | 'backward'): Emit => (operand, gen) => {
  if (!Array.isArray(operand)) return undefined
  const reads: Code[] = []
  for (const element of operand) {
    if (typeof element !== 'string' || !element.startsWith('/') || hasDotDotSegment(element)) return undefined
    const read = gen.read(element, SOURCE)
    if (read === undefined) return undefined
    reads.push(read)
  }
  if (order === 'backward') reads.reverse()
  if (reads.length === 0) return _`v = undefined;\n`
  return reads.reduceRight<Code>((rest, read) => (rest === nil ? read : _`${read}if (v === undefined) {\n${rest}}\n`), nil)
}

// ---- shape and finalize: constants --------------------------------------------------------------

/** `constant`, `default`: a fresh copy of the operand per use (a scalar is itself). */
export const constantOf = supplier

const constantEmit: Emit = (operand, gen) => _`v = ${gen.value(operand)};\n`
const defaultEmit: Emit = (operand, gen) => _`if (v === undefined) v = ${gen.value(operand)};\n`

// ---- finalize: coercion -------------------------------------------------------------------------

/** ECMAScript Number() for any JSON value, never calling anything the value carries (an array's text counted as built). */
function toNumber(value: unknown, run: Run): number {
  switch (typeof value) {
    case 'number':
      return value
    case 'string':
      return Number(value)
    case 'boolean':
      return value ? 1 : 0
    default:
      if (value === null) return 0
      return Array.isArray(value) ? Number(toText(value, run)) : Number.NaN
  }
}

/** A coercion of a defined value. */
export type Coercion = (value: unknown, run: Run) => unknown

// Text built here counts against the run's builtBytes budget before it is built: an array's join
// (a number's or boolean's text is a few characters, within the step that makes it), and JSON text,
// whose value is bounded by outputDepth before JSON.stringify recurses into it.
const COERCIONS: Readonly<Record<string, Coercion>> = {
  string: (value, run) => toText(value, run),
  // Decision 1 (KW-as-1): a result JSON cannot represent becomes null, with no error.
  number: (value, run) => {
    const n = toNumber(value, run)
    return Number.isFinite(n) ? n : null
  },
  boolean: (value) => !!value,
  json: (value, run) => run.stringify(value),
}

/** The coercions `as` names. */
export const COERCION_NAMES: readonly string[] = Object.keys(COERCIONS)

/** `as`: the coercion an operand names, or undefined for one it does not. */
export function coercion(to: unknown): Coercion | undefined {
  return typeof to === 'string' && Object.hasOwn(COERCIONS, to) ? COERCIONS[to] : undefined
}

const coerceEmit: Emit = (operand, gen) => {
  const coerce = coercion(operand)
  if (coerce === undefined) return undefined
  const call = gen.constant(coerce)
  // The commonest operands inline: a string kept as it is, a number or a numeric string converted,
  // a number's or boolean's text made as toText makes it (the host's, a few characters).
  if (operand === 'string') {
    return _`if (typeof v === 'number' || typeof v === 'boolean') v = String(v);
else if (v !== undefined && typeof v !== 'string') v = ${call}(v, run);
`
  }
  if (operand === 'number') {
    return _`if (typeof v === 'string') v = Number(v);
if (typeof v === 'number') { if (!Number.isFinite(v)) v = null; }
else if (v !== undefined) v = ${call}(v, run);
`
  }
  return _`if (v !== undefined) v = ${call}(v, run);\n`
}

// ---- shape: find --------------------------------------------------------------------------------

/** `find`'s operand as evaluation reads it: the keys and values a member must have, and the pointer narrowing it. */
export function findSpec(operand: unknown): { eq: Record<string, unknown>; pointer: unknown } {
  const spec = isObject(operand) ? operand : {}
  return { eq: isObject(spec.eq) ? spec.eq : {}, pointer: spec.pointer }
}

/**
 * `find`: the first member of an array value (or the object value itself) that has `eq`'s keys with
 * values identical to `eq`'s, narrowed by `narrow`; the members looked at are counted as steps.
 * The operands are document values (JSON), so a plain property read can never equal one through
 * an inherited member: no own-property test is needed.
 */
export function finder(operand: unknown, narrow: ((value: unknown) => unknown) | null): (value: unknown, run: Run) => unknown {
  const { eq } = findSpec(operand)
  const keys = Object.keys(eq)
  const expected = keys.map((key) => eq[key])
  const matches = (member: unknown): boolean => {
    if (member === null || typeof member !== 'object') return false
    for (let i = 0; i < keys.length; i++) {
      if ((member as Record<string, unknown>)[keys[i]!] !== expected[i]) return false
    }
    return true
  }
  const found = (member: unknown): unknown => (narrow === null ? member : narrow(member))
  return (value, run) => {
    if (value === null || typeof value !== 'object') return value
    if (!Array.isArray(value)) return matches(value) ? found(value) : undefined
    for (let i = 0; i < value.length; i++) {
      if (matches(value[i])) {
        run.tick(i)
        return found(value[i])
      }
    }
    run.tick(value.length)
    return undefined
  }
}

const findEmit: Emit = (operand, gen) => {
  const { eq, pointer } = findSpec(operand)
  const list = gen.local()
  const index = gen.local()
  // An object operand is compared as the compiled form compares it: by identity, never equal to an input's member.
  const expected = (value: unknown): Code => (value !== null && typeof value === 'object' ? gen.constant(value) : gen.value(value))
  const matches = (member: Code): Code =>
    join([_`${member} !== null`, _`typeof ${member} === 'object'`, ...Object.keys(eq).map((key) => _`${member}[${key}] === ${expected(eq[key])}`)], _` && `)
  let narrow: Code = nil
  if (truthy(pointer)) {
    const read = gen.read(pointer)
    if (read === undefined) return undefined
    narrow = read
  }
  const member = _`${list}[${index}]`
  return _`if (v !== null && typeof v === 'object') {
  if (Array.isArray(v)) {
    ${list} = v;
    v = undefined;
    for (${index} = 0; ${index} < ${list}.length; ${index}++) if (${matches(member)}) break;
    run.tick(${index});
    if (${index} < ${list}.length) {
      v = ${member};
${narrow}    }
  } else if (${matches(_`v`)}) {
${narrow}  } else v = undefined;
}
`
}

// ---- validate: required and type ----------------------------------------------------------------

/** A validator's error object for the value it rejects. */
export function failure(provenance: Provenance, fields: (value: unknown) => Array<[string, unknown]>, message: string): (value: unknown) => ErrorObject {
  return (value) => errorObject(provenance, fields(value), message)
}

/** `required` (`name`): its error object (the value was undefined). */
export const requiredFailure = (name: string, operand: unknown, provenance: Provenance): ((value: unknown) => ErrorObject) =>
  failure(provenance, () => [[name, operand]], 'required value')

const requiredEmit: Emit = (operand, gen, provenance, name) => _`if (v === undefined) errors.push(${gen.constant(requiredFailure(name, operand, provenance))}(v));\n`

/** The seven JSON types `type` names: each one's test, message, and test as source over `v`. */
const TYPE_TESTS: Readonly<Record<string, readonly [test: (value: unknown) => boolean, message: string, code: Code]>> = {
  array: [(v) => Array.isArray(v), 'must be an array', _`Array.isArray(v)`],
  boolean: [(v) => typeof v === 'boolean', 'must be true or false', _`typeof v === 'boolean'`],
  integer: [(v) => typeof v === 'number' && Number.isInteger(v), 'must be an integer', _`typeof v === 'number' && Number.isInteger(v)`],
  null: [(v) => v === null, 'must be null', _`v === null`],
  number: [(v) => typeof v === 'number', 'must be a number', _`typeof v === 'number'`],
  object: [(v) => isObject(v), 'must be an object', _`v !== null && typeof v === 'object' && !Array.isArray(v)`],
  string: [(v) => typeof v === 'string', 'must be a string', _`typeof v === 'string'`],
}

/** The type names, sorted. */
export const TYPE_NAMES: readonly string[] = Object.keys(TYPE_TESTS).sort()

/** `type` (`name`): a defined value's test and the error object of a value that fails it, or undefined for an operand that names no type. */
export function typeCheck(name: string, operand: unknown, provenance: Provenance): { test: (value: unknown) => boolean; failure: (value: unknown) => ErrorObject } | undefined {
  if (typeof operand !== 'string' || !Object.hasOwn(TYPE_TESTS, operand)) return undefined
  const [test, message] = TYPE_TESTS[operand]!
  return { test, failure: failure(provenance, (value) => [['value', value], [name, operand]], message) }
}

const typeEmit: Emit = (operand, gen, provenance, name) => {
  const check = typeCheck(name, operand, provenance)
  if (check === undefined) return undefined
  return _`if (v !== undefined && !(${TYPE_TESTS[operand as string]![2]})) errors.push(${gen.constant(check.failure)}(v));\n`
}

// ---- the forms, by the name a keyword record gives ----------------------------------------------

const EMITS = {
  'read-source': readFrom(SOURCE),
  'read-input': readFrom(_`run.input`),
  'first-defined': definedOf('forward'),
  'last-defined': definedOf('backward'),
  constant: constantEmit,
  default: defaultEmit,
  coerce: coerceEmit,
  find: findEmit,
  required: requiredEmit,
  type: typeEmit,
} as const satisfies Record<string, Emit>

/** The name of an inline form, as a keyword record's `inline` gives it. */
export type InlineForm = keyof typeof EMITS

/** The source a form writes for keyword `name`'s operand (undefined: none for this operand). */
export function emitInline(form: InlineForm, name: string, operand: unknown, gen: CodeGen, provenance: Provenance): Code | undefined {
  return EMITS[form](operand, gen, provenance, name)
}
