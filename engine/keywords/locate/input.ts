// `input` (locate, engine.md §8.3): read from the whole input of the invocation.
import { truthy } from '../../values.js'
import { keyword } from '../record.js'
import { pointerContents, pointerOperand } from './scope.js'

export default keyword<string, 'input', 'locate'>({
  name: 'input',
  stage: 'locate',
  tier: 'core',
  pointer: true,
  operand: pointerOperand('input'),
  contents: pointerContents,
  compile(descriptor, cx) {
    if (!truthy(descriptor.input)) return null
    // A closure of its own per scope: a shared one would make every read a polymorphic call.
    const read = cx.reader(descriptor.input)
    return { locate: (context) => read(context.run.input), sync: true }
  },
})
