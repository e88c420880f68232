// `$ref` (registry, language.md §5): the descriptor is the registered mapping it names. It stands for
// the whole descriptor (the keys beside it are never read): `standsAlone` has validation, the
// expansion bound and every dereferencing position of the compiler take it before any other keyword.
import { truthy } from '../../values.js'
import { keyword } from '../record.js'
import { refuse } from '../grammar.js'

export default keyword<'$ref', 'registry'>({
  name: '$ref',
  stage: 'registry',
  tier: 'core',
  schema: { description: 'The registered mapping this descriptor stands for (a mapping id); the keys beside a $ref are never read.', type: 'string', ...refuse('REG-5', '$ref must be a mapping id string') },
  standsAlone: true,
  parts(value, _descriptor, visit) {
    if (truthy(value)) visit.reference(value, [])
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    $ref?: string
  }
}
