// The first module of a parse thread (parse-thread.ts): the thread gives way to the main thread
// (engine/slices.ts `lowerHelperPriority`) before it loads the parsers, about 70 ms of CPU. A
// thread is started anew after each parse its deadline stops, so on a busy machine its start-up
// is hostile work too. The worker side (parse-worker.ts) is imported from here, after the priority
// is lowered: a module's imports are loaded before its own first line runs.
import { lowerHelperPriority } from '../../engine/slices.js'

lowerHelperPriority()

export default (await import('./parse-worker.js')).default
