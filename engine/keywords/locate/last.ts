// `last` (locate, language.md §8.3): the last element whose value is defined.
import type { Descriptor } from '../../descriptor.js'
import { keyword, READ_DESCRIPTOR_SCHEMA } from '../record.js'
import { lastDefined } from '../../codegen/inline.js'
import { combinator, listParts, oneOfElements } from './scope.js'
import { refuse } from '../grammar.js'

export default keyword<'last', 'locate'>({
  name: 'last',
  stage: 'locate',
  tier: 'core',
  schema: { description: 'The value of the last descriptor in the list whose value is defined.', type: 'array', items: READ_DESCRIPTOR_SCHEMA, ...refuse('KW-combinator-1', 'last must be an array of descriptors') },
  observesPaths: true,
  parts: listParts,
  inline: 'last-defined',
  outputType: oneOfElements,
  compile: combinator('last', lastDefined),
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    last?: Descriptor[]
  }
}
