// `enum` (validate, language.md §10.3): one of the listed values (strict equality).
import { narrowEnum } from '../../output-types.js'
import { keyword } from '../record.js'
import { fail } from './fail.js'
import { refuse } from '../grammar.js'

export default keyword<'enum', 'validate'>({
  name: 'enum',
  stage: 'validate',
  tier: 'core',
  schema: { description: 'Validator: the value is one of these (strict equality).', type: 'array', ...refuse('KW-validate-1', 'enum must be an array') },
  outputType: (value, operand) => (Array.isArray(operand) ? narrowEnum(value, operand) : value),
  compile(descriptor, _cx, provenance) {
    if (!Array.isArray(descriptor.enum)) return null
    const allowed = descriptor.enum
    const message = `must be one of ${JSON.stringify(allowed)}`
    return (value, run) => {
      if (value !== undefined && !allowed.includes(value)) fail(run, provenance, [['value', value], ['enum', allowed]], message)
    }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    enum?: unknown[]
  }
}
