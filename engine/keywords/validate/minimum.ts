// `minimum` (validate, language.md §10.3): a number at least the operand.
import { bound } from '../../output-types.js'
import { keyword } from '../record.js'
import { numericCheck } from './fail.js'
import { refuse } from '../grammar.js'

export default keyword<'minimum', 'validate'>({
  name: 'minimum',
  stage: 'validate',
  tier: 'core',
  schema: { description: 'Validator: a number value is at least this.', type: 'number', ...refuse('KW-validate-1', 'minimum must be a number') },
  outputType: (value, operand) => bound(value, operand, 'minimum', Math.max),
  compile: (descriptor, _cx, provenance) =>
    numericCheck('minimum', descriptor.minimum, (v, min) => v >= min, `cannot be less than ${String(descriptor.minimum)}`, provenance),
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    minimum?: number
  }
}
