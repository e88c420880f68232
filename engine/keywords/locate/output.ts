// `output` (locate, language.md §8.3): a snapshot of the whole output under construction.
import { pointerKeyword } from './scope.js'
import { snapshot } from './snapshot.js'

export default pointerKeyword('output', 'Read a snapshot of the whole output under construction at this JSON Pointer.', (read) => (context) => snapshot(read(context.run.output), context))

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    output?: string
  }
}
