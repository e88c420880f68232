// `as` (finalize, language.md §8.8): the value coerced, the very last step (undefined stays undefined, GET-4).
import { coercion, COERCION_NAMES } from '../../codegen/inline.js'
import { mapAlts, scalar, type Alt, type ScalarType } from '../../output-types.js'
import { keyword } from '../record.js'
import { refuse } from '../grammar.js'

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
  schema: { description: 'Coerce the value, the very last step: string, number (null when not representable), boolean, or json (its JSON text).', enum: [...COERCION_NAMES], ...refuse('KW-pipeline-1', 'as must be string, number, boolean, or json') },
  inline: 'coerce',
  outputType: (value, operand) => (typeof operand === 'string' && Object.hasOwn(COERCED, operand) ? mapAlts(value, coercedType(operand)) : value),
  compile(descriptor) {
    const coerce = coercion(descriptor.as)
    if (coerce === undefined) return null
    return { awaits: false, run: (value, context) => (value === undefined ? value : coerce(value, context.run)) }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    as?: 'string' | 'number' | 'boolean' | 'json'
  }
}
