// `all` (locate, language.md §8.3): the values of every element, undefined ones left out.
import { keyword, READ_DESCRIPTOR_SCHEMA } from '../record.js'
import { combinator, listChildren, listContents, listOperand } from './scope.js'

export default keyword<'all', 'locate'>({
  name: 'all',
  stage: 'locate',
  tier: 'core',
  schema: { description: 'The values of every descriptor in the list, undefined ones left out.', type: 'array', items: READ_DESCRIPTOR_SCHEMA },
  observesPaths: true,
  operand: listOperand('all'),
  contents: listContents,
  children: listChildren,
  compile: combinator('all', (values) => values.filter((value) => value !== undefined)),
})
