// `required` (validate, language.md §10.3): the value must be defined.
import { truthy } from '../../values.js'
import { keyword, validatorOperand } from '../record.js'
import { fail, failure } from './fail.js'

export default keyword<'required', 'validate'>({
  name: 'required',
  stage: 'validate',
  tier: 'core',
  schema: { description: 'Validator: when true, the value must be defined.', type: 'boolean' },
  operand: validatorOperand('required', (v) => typeof v === 'boolean', 'true or false'),
  code: (descriptor, gen, provenance) =>
    `if (v === undefined) errors.push(${gen.constant(failure(provenance, () => [['required', descriptor.required]], 'required value'))}(v));\n`,
  // In a valid evaluation the value was defined when validated; finalize keeps it defined.
  outputType: (value, operand) => (truthy(operand) ? { ...value, undefined: false } : value),
  compile(descriptor, _cx, provenance) {
    if (!truthy(descriptor.required)) return null
    const required = descriptor.required
    return (value, run) => {
      if (value === undefined) fail(run, provenance, [['required', required]], 'required value')
    }
  },
})
