// `target` (locate, engine.md §8.3): a snapshot of the current target.
import { truthy } from '../../values.js'
import { keyword } from '../record.js'
import { pointerContents, pointerOperand } from './scope.js'
import { snapshot } from './snapshot.js'

export default keyword<string, 'target', 'locate'>({
  name: 'target',
  stage: 'locate',
  tier: 'core',
  pointer: true,
  operand: pointerOperand('target'),
  contents: pointerContents,
  compile(descriptor, cx) {
    if (!truthy(descriptor.target)) return null
    // A closure of its own per scope: a shared one would make every read a polymorphic call.
    const read = cx.reader(descriptor.target)
    return { locate: (context) => snapshot(read(context.target), context), sync: true }
  },
})
