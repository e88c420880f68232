// The worker side of workers/load.ts: read and parse a MAPPINGS set in a thread of its own.
import { parentPort, workerData } from 'node:worker_threads'
import { loadMappings } from '../sources/mappings.js'
import type { LoadRequest, LoadAnswer } from './load.js'
import { lowerHelperPriority } from '../engine/slices.js'

// Loading a mapping set gives way to the main thread on a busy machine (engine/slices.ts).
lowerHelperPriority()

const request = workerData as LoadRequest
const warnings: string[] = []
let answer: LoadAnswer
try {
  const entries = await loadMappings(request.path, { warn: (message) => warnings.push(message), timeoutMs: request.timeoutMs, maxBytes: request.maxBytes })
  answer = { entries, warnings }
} catch (error) {
  answer = { error: error instanceof Error ? error.message : String(error), warnings }
}
parentPort!.postMessage(answer)
