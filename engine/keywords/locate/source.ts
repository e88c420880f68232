// `source` (locate, language.md §8.3): read from the current source; its path extends the context's.
import { pointerKeyword } from './scope.js'

export default pointerKeyword('source', 'Read from the current source at this JSON Pointer.', (read) => (context) => read(context.source))
