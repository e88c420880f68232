// `input` (locate, engine.md §8.3): read from the whole input of the invocation.
import { pointerKeyword } from './scope.js'

export default pointerKeyword('input', (read) => (context) => read(context.run.input))
