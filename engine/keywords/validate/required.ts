// `required` (validate, language.md §10.3): the value must be defined.
import { requiredFailure } from '../../codegen/inline.js'
import { truthy } from '../../values.js'
import { keyword } from '../record.js'
import { refuse } from '../grammar.js'

export default keyword<'required', 'validate'>({
  name: 'required',
  stage: 'validate',
  tier: 'core',
  schema: { description: 'Validator: when true, the value must be defined.', type: 'boolean', ...refuse('KW-validate-1', 'required must be true or false') },
  inline: 'required',
  // In a valid evaluation the value was defined when validated; finalize keeps it defined.
  outputType: (value, operand) => (truthy(operand) ? { ...value, undefined: false } : value),
  compile(descriptor, _cx, provenance) {
    if (!truthy(descriptor.required)) return null
    const failure = requiredFailure('required', descriptor.required, provenance)
    return (value, run) => {
      if (value === undefined) run.errors.push(failure(value))
    }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    required?: boolean
  }
}
