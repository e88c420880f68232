// `output` (locate, engine.md §8.3): a snapshot of the whole output under construction.
import { snapshot } from './snapshot.js'
import { keyword } from '../record.js'
import { pointerContents, pointerOperand, scopeRead } from './scope.js'

export default keyword<string, 'output', 'locate'>({
  name: 'output',
  stage: 'locate',
  tier: 'core',
  pointer: true,
  operand: pointerOperand('output'),
  contents: pointerContents,
  compile: scopeRead('output', (context) => context.run.output, snapshot),
})
