// `source` (locate, engine.md §8.3): read from the current source; its path extends the context's.
import { keyword } from '../record.js'
import { pointerContents, pointerOperand, scopeRead } from './scope.js'

export default keyword<string, 'source', 'locate'>({
  name: 'source',
  stage: 'locate',
  tier: 'core',
  pointer: true,
  operand: pointerOperand('source'),
  contents: pointerContents,
  compile: scopeRead('source', (context) => context.source),
})
