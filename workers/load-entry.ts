// The first module of the thread that loads a MAPPINGS set (workers/load.ts): the thread gives way
// to the main thread (engine/slices.ts `lowerHelperPriority`) before it loads the parsers it reads
// the set with. The worker side (load-worker.ts) is imported from here, after the priority is
// lowered: a module's imports are loaded before its own first line runs.
import { lowerHelperPriority } from '../engine/slices.js'

lowerHelperPriority()

await import('./load-worker.js')
