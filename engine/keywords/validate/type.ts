// `type` (validate, language.md §10.3): one of the seven JSON types.
import { TYPE_NAMES, typeCheck } from '../../codegen/inline.js'
import { narrowType } from '../../output-types.js'
import { keyword, validatorOperand } from '../record.js'

export default keyword<'type', 'validate'>({
  name: 'type',
  stage: 'validate',
  tier: 'core',
  schema: { description: 'Validator: the value is of this JSON type.', enum: [...TYPE_NAMES] },
  outputType: (value, operand) => (typeof operand === 'string' && TYPE_NAMES.includes(operand) ? narrowType(value, operand) : value),
  operand: validatorOperand('type', (v) => typeof v === 'string' && TYPE_NAMES.includes(v), `one of ${TYPE_NAMES.join(', ')}`),
  inline: 'type',
  compile(descriptor, _cx, provenance) {
    const check = typeCheck('type', descriptor.type, provenance)
    if (check === undefined) return null
    const { test, failure } = check
    return (value, run) => {
      if (value !== undefined && !test(value)) run.errors.push(failure(value))
    }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    type?: string
  }
}
