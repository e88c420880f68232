// `type` (validate, language.md §10.3): one of the seven JSON types.
import { TYPE_NAMES, typeCheck } from '../../codegen/inline.js'
import { narrowType } from '../../output-types.js'
import { keyword } from '../record.js'
import { refuse } from '../grammar.js'

export default keyword<'type', 'validate'>({
  name: 'type',
  stage: 'validate',
  tier: 'core',
  schema: { description: 'Validator: the value is of this JSON type.', enum: [...TYPE_NAMES], ...refuse('KW-validate-1', `type must be one of ${TYPE_NAMES.join(', ')}`) },
  outputType: (value, operand) => (typeof operand === 'string' && TYPE_NAMES.includes(operand) ? narrowType(value, operand) : value),
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
