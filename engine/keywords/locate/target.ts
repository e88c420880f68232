// `target` (locate, engine.md §8.3): a snapshot of the current target.
import { snapshot } from './snapshot.js'
import { keyword } from '../record.js'
import { pointerContents, pointerOperand, scopeRead } from './scope.js'

export default keyword<string, 'target', 'locate'>({
  name: 'target',
  stage: 'locate',
  tier: 'core',
  pointer: true,
  operand: pointerOperand('target'),
  contents: pointerContents,
  compile: scopeRead('target', (context) => context.target, snapshot),
})
