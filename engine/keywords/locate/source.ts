// `source` (locate, engine.md §8.3): read from the current source; its path extends the context's.
import { truthy } from '../../values.js'
import { keyword } from '../record.js'
import { pointerContents, pointerOperand } from './scope.js'

export default keyword<string, 'source', 'locate'>({
  name: 'source',
  stage: 'locate',
  tier: 'core',
  pointer: true,
  operand: pointerOperand('source'),
  contents: pointerContents,
  compile(descriptor, cx) {
    if (!truthy(descriptor.source)) return null
    // A closure of its own per scope: a shared one would make every read a polymorphic call.
    const read = cx.reader(descriptor.source)
    return { locate: (context) => read(context.source), sync: true }
  },
})
