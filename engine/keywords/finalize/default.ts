// `default` (finalize, language.md §8.8): the value when it is undefined (objects copied per use).
import { constant, union } from '../../output-types.js'
import { constantOf } from '../../codegen/inline.js'
import { keyword } from '../record.js'

export default keyword<'default', 'finalize'>({
  name: 'default',
  stage: 'finalize',
  tier: 'core',
  schema: { description: 'The value when it is undefined (any JSON value).' },
  inline: 'default',
  outputType: (value, operand) => (operand === undefined ? value : { alts: union(value.alts, constant(operand).alts), undefined: false }),
  compile(descriptor) {
    if (!Object.hasOwn(descriptor, 'default') || descriptor.default === undefined) return null
    const fallback = constantOf(descriptor.default)
    return { awaits: false, run: (value) => (value !== undefined ? value : fallback()) }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    default?: unknown
  }
}
