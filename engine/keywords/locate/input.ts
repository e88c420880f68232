// `input` (locate, engine.md §8.3): read from the whole input of the invocation.
import { keyword } from '../record.js'
import { pointerContents, pointerOperand, scopeRead } from './scope.js'

export default keyword<string, 'input', 'locate'>({
  name: 'input',
  stage: 'locate',
  tier: 'core',
  pointer: true,
  operand: pointerOperand('input'),
  contents: pointerContents,
  compile: scopeRead('input', (context) => context.run.input),
})
