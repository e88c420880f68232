// `output` (locate, engine.md §8.3): a snapshot of the whole output under construction.
import { truthy } from '../../values.js'
import { keyword } from '../record.js'
import { pointerContents, pointerOperand } from './scope.js'
import { snapshot } from './snapshot.js'

export default keyword<string, 'output', 'locate'>({
  name: 'output',
  stage: 'locate',
  tier: 'core',
  pointer: true,
  operand: pointerOperand('output'),
  contents: pointerContents,
  compile(descriptor, cx) {
    if (!truthy(descriptor.output)) return null
    // A closure of its own per scope: a shared one would make every read a polymorphic call.
    const read = cx.reader(descriptor.output)
    return { locate: (context) => snapshot(read(context.run.output), context), sync: true }
  },
})
