// `input` (locate, language.md §8.3): read from the whole input of the invocation.
import { resolvePath } from '../../pointer.js'
import { pointerKeyword } from './scope.js'

export default pointerKeyword(
  'input',
  'Read from the whole input of the invocation at this JSON Pointer.',
  (read) => (context) => read(context.run.input),
  // Explain mode: the read stands at the operand, from the input's root.
  { readsAt: (operand) => resolvePath(operand) },
  'read-input'
)

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    input?: string
  }
}
