// `last` (locate, language.md §8.3): the last element whose value is defined.
import type { Descriptor } from '../../descriptor.js'
import { keyword, READ_DESCRIPTOR_SCHEMA } from '../record.js'
import { lastDefined } from '../../codegen/inline.js'
import { combinator, listChildren, listContents, listOperand, oneOfElements } from './scope.js'

export default keyword<'last', 'locate'>({
  name: 'last',
  stage: 'locate',
  tier: 'core',
  schema: { description: 'The value of the last descriptor in the list whose value is defined.', type: 'array', items: READ_DESCRIPTOR_SCHEMA },
  observesPaths: true,
  operand: listOperand('last'),
  contents: listContents,
  children: listChildren,
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
