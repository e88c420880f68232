// `maximum` (validate, language.md §10.3): a number at most the operand.
import { bound } from '../../output-types.js'
import { keyword } from '../record.js'
import { numericCheck } from './fail.js'
import { refuse } from '../grammar.js'

export default keyword<'maximum', 'validate'>({
  name: 'maximum',
  stage: 'validate',
  tier: 'core',
  schema: { description: 'Validator: a number value is at most this.', type: 'number', ...refuse('KW-validate-1', 'maximum must be a number') },
  outputType: (value, operand) => bound(value, operand, 'maximum', Math.min),
  compile: (descriptor, _cx, provenance) =>
    numericCheck('maximum', descriptor.maximum, (v, max) => v <= max, `cannot be greater than ${String(descriptor.maximum)}`, provenance),
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    maximum?: number
  }
}
