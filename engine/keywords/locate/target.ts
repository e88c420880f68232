// `target` (locate, language.md §8.3): a snapshot of the current target.
import { pointerKeyword } from './scope.js'
import { snapshot } from './snapshot.js'

export default pointerKeyword('target', 'Read a snapshot of the current target at this JSON Pointer.', (read) => (context) => snapshot(read(context.target), context), {
  shifts: 'target',
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    target?: string
  }
}
