// `all` (locate, engine.md §8.3): the values of every element, undefined ones left out.
import { keyword } from '../record.js'
import { combinator, listContents, listOperand } from './scope.js'
import type { Descriptor } from '../../types.js'

export default keyword<Descriptor[], 'all', 'locate'>({
  name: 'all',
  stage: 'locate',
  tier: 'core',
  observesPaths: true,
  operand: listOperand('all'),
  contents: listContents,
  compile: combinator('all', (values) => values.filter((value) => value !== undefined)),
})
