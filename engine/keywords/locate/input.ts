// `input` (locate, language.md §8.3): read from the whole input of the invocation.
import { pointerKeyword } from './scope.js'

export default pointerKeyword('input', 'Read from the whole input of the invocation at this JSON Pointer.', (read) => (context) => read(context.run.input))
