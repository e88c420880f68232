// `as` (finalize, language.md §8.8): the value coerced, the very last step (undefined stays undefined, GET-4).
import type { Run } from '../../context.js'
import { mapAlts, scalar, type Alt, type ScalarType } from '../../output-types.js'
import { toText } from '../../values.js'
import { issue, keyword, ok } from '../record.js'

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

// Text built here counts against the run's builtBytes budget before it is built: an array's join
// (a number's or boolean's text is a few characters, within the step that makes it), and JSON text,
// whose value is bounded by outputDepth before JSON.stringify recurses into it.
const COERCIONS: Record<string, (value: unknown, run: Run) => unknown> = {
  string: (value, run) => toText(value, run),
  // Decision 1 (KW-as-1): a result JSON cannot represent becomes null, with no error.
  number: (value, run) => {
    const n = toNumber(value, run)
    return Number.isFinite(n) ? n : null
  },
  boolean: (value) => !!value,
  json: (value, run) => run.stringify(value),
}

/** What each coercion gives, by type: a value already of that type is kept (number: null when not finite). */
const COERCED: Record<string, { keeps: readonly ScalarType[]; gives: readonly ScalarType[] }> = {
  string: { keeps: ['string'], gives: ['string'] },
  number: { keeps: ['number', 'integer'], gives: ['number', 'null'] },
  boolean: { keeps: ['boolean'], gives: ['boolean'] },
  json: { keeps: [], gives: ['string'] },
}

/** Output-schema inference: the coerced type (undefined stays undefined). */
function coercedType(as: string) {
  const { keeps, gives } = COERCED[as]!
  const kept = (type: string): boolean => (keeps as readonly string[]).includes(type)
  return (alt: Alt): Alt[] => {
    if (alt.kind === 'scalar' && kept(alt.type)) return [alt]
    if (alt.kind === 'const' && (kept(typeof alt.value) || (typeof alt.value === 'number' && kept('number')))) return [alt]
    return gives.map(scalar)
  }
}

export default keyword<'as', 'finalize'>({
  name: 'as',
  stage: 'finalize',
  tier: 'core',
  schema: { description: 'Coerce the value, the very last step: string, number (null when not representable), boolean, or json (its JSON text).', enum: ['string', 'number', 'boolean', 'json'] },
  operand: (value) => (typeof value === 'string' && Object.hasOwn(COERCIONS, value) ? ok : issue('KW-pipeline-1', 'as must be string, number, boolean, or json')),
  code(descriptor, gen) {
    const as = descriptor.as as string
    const coerce = gen.constant(COERCIONS[as])
    // The commonest operands inline: a string kept as it is, a number or a numeric string converted,
    // a number's or boolean's text made as toText makes it (the host's, a few characters).
    if (as === 'string') {
      return (
        "if (typeof v === 'number' || typeof v === 'boolean') v = String(v);\n" +
        `else if (v !== undefined && typeof v !== 'string') v = ${coerce}(v, run);\n`
      )
    }
    if (as === 'number') {
      return (
        "if (typeof v === 'string') v = Number(v);\n" +
        "if (typeof v === 'number') { if (!Number.isFinite(v)) v = null; }\n" +
        `else if (v !== undefined) v = ${coerce}(v, run);\n`
      )
    }
    return `if (v !== undefined) v = ${coerce}(v, run);\n`
  },
  outputType: (value, operand) => (typeof operand === 'string' && Object.hasOwn(COERCED, operand) ? mapAlts(value, coercedType(operand)) : value),
  compile(descriptor) {
    const as = descriptor.as
    if (typeof as !== 'string' || !Object.hasOwn(COERCIONS, as)) return null
    const coerce = COERCIONS[as]!
    return { awaits: false, run: (value, context) => (value === undefined ? value : coerce(value, context.run)) }
  },
})
