// `as` (finalize, language.md §8.8): the value coerced, the very last step (undefined stays undefined, GET-4).
import { toText } from '../../values.js'
import { issue, keyword, ok } from '../record.js'

/** ECMAScript Number() for any JSON value, never calling anything the value carries. */
function toNumber(value: unknown): number {
  switch (typeof value) {
    case 'number':
      return value
    case 'string':
      return Number(value)
    case 'boolean':
      return value ? 1 : 0
    default:
      if (value === null) return 0
      return Array.isArray(value) ? Number(toText(value)) : Number.NaN
  }
}

const COERCIONS: Record<string, (value: unknown) => unknown> = {
  string: (value) => toText(value),
  // Decision 1 (KW-as-1): a result JSON cannot represent becomes null, with no error.
  number: (value) => {
    const n = toNumber(value)
    return Number.isFinite(n) ? n : null
  },
  boolean: (value) => !!value,
  json: (value) => JSON.stringify(value),
}

export default keyword<'string' | 'number' | 'boolean' | 'json', 'as', 'finalize'>({
  name: 'as',
  stage: 'finalize',
  tier: 'core',
  schema: { description: 'Coerce the value, the very last step: string, number (null when not representable), boolean, or json (its JSON text).', enum: ['string', 'number', 'boolean', 'json'] },
  operand: (value) => (typeof value === 'string' && Object.hasOwn(COERCIONS, value) ? ok : issue('KW-pipeline-1', 'as must be string, number, boolean, or json')),
  compile(descriptor) {
    const as = descriptor.as
    if (typeof as !== 'string' || !Object.hasOwn(COERCIONS, as)) return null
    const coerce = COERCIONS[as]!
    return { awaits: false, run: (value) => (value === undefined ? value : coerce(value)) }
  },
})
