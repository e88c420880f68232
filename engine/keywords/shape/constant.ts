// `constant` (shape, language.md §8.6): the value is replaced by the operand.
import { constant } from '../../output-types.js'
import { constantOf } from '../../codegen/inline.js'
import { keyword } from '../record.js'

export default keyword<'constant', 'shape'>({
  name: 'constant',
  stage: 'shape',
  tier: 'core',
  schema: { description: 'The value is replaced by this constant (any JSON value).' },
  inline: 'constant',
  outputType: (value, operand) => (operand === undefined ? value : constant(operand)),
  compile(descriptor) {
    if (!Object.hasOwn(descriptor, 'constant') || descriptor.constant === undefined) return null
    return { awaits: false, run: constantOf(descriptor.constant) }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    constant?: unknown
  }
}
