// `source` (locate, engine.md §8.3): read from the current source; its path extends the context's.
import { pointerKeyword } from './scope.js'

export default pointerKeyword('source', (read) => (context) => read(context.source))
