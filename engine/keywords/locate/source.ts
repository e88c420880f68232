// `source` (locate, language.md §8.3): read from the current source; its path extends the context's.
import { resolvePath } from '../../pointer.js'
import { pointerKeyword } from './scope.js'

export default pointerKeyword(
  'source',
  'Read from the current source at this JSON Pointer.',
  (read) => (context) => read(context.source),
  {
    shifts: 'source',
    // Explain mode: the read stands where the source does, continued by the operand.
    readsAt: (operand, sourceAt) => resolvePath(sourceAt, operand),
  },
  'read-source'
)

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    source?: string
  }
}
