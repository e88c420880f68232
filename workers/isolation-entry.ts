// The first module of an isolation thread (workers/isolation.ts): the thread gives way to the main
// thread (engine/slices.ts `lowerHelperPriority`) before it loads the engine, which takes it 80 to
// 170 ms of CPU. A module's imports are loaded before its own first line runs, so the worker side
// (isolation-worker.ts) is imported from here, after the priority is lowered.
import { lowerHelperPriority } from '../engine/slices.js'

lowerHelperPriority()

export default (await import('./isolation-worker.js')).default
