// `first` (locate, language.md §8.3): the first element whose value is defined.
import type { Descriptor } from '../../descriptor.js'
import { firstDefined } from '../../procedures.js'
import { keyword, READ_DESCRIPTOR_SCHEMA } from '../record.js'
import { combinator, listParts, oneOfElements } from './scope.js'
import { refuse } from '../grammar.js'

export default keyword<'first', 'locate'>({
  name: 'first',
  stage: 'locate',
  tier: 'core',
  schema: { description: 'The value of the first descriptor in the list whose value is defined.', type: 'array', items: READ_DESCRIPTOR_SCHEMA, ...refuse('KW-combinator-1', 'first must be an array of descriptors') },
  observesPaths: true,
  parts: listParts,
  inline: 'first-defined',
  outputType: oneOfElements,
  compile: combinator('first', firstDefined),
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    first?: Descriptor[]
  }
}
