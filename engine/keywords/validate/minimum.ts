// `minimum` (validate, language.md §10.3): a number at least the operand.
import { bound } from '../../output-types.js'
import { isNumber, keyword, validatorOperand } from '../record.js'
import { numericCheck } from './fail.js'

export default keyword<'minimum', 'validate'>({
  name: 'minimum',
  stage: 'validate',
  tier: 'core',
  schema: { description: 'Validator: a number value is at least this.', type: 'number' },
  operand: validatorOperand('minimum', isNumber, 'a number'),
  outputType: (value, operand) => bound(value, 'minimum', operand),
  compile: (descriptor, _cx, provenance) =>
    numericCheck('minimum', descriptor.minimum, (v, min) => v >= min, `cannot be less than ${String(descriptor.minimum)}`, provenance),
})
