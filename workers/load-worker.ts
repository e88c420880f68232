// The worker side of workers/load.ts: read and parse a MAPPINGS set in a thread of its own, and
// send the parsed documents back in parts, the next when the main thread asks for it.
import { parentPort, workerData } from 'node:worker_threads'
import { loadMappings } from '../sources/mappings.js'
import { NEXT_PART, parts, type LoadRequest, type LoadMessage } from './load.js'

const request = workerData as LoadRequest
const warnings: string[] = []
const port = parentPort!
const send = (message: LoadMessage): void => port.postMessage(message)
try {
  const entries = await loadMappings(request.path, { warn: (message) => warnings.push(message), timeoutMs: request.timeoutMs, maxBytes: request.maxBytes })
  const pending = parts(entries)
  const sendNext = (): void => {
    const next = pending.next()
    if (next.done !== true) {
      send({ part: next.value })
      return
    }
    // The last part is placed: nothing more to wait for, the thread ends.
    port.off('message', asked)
    send({ end: true, warnings })
  }
  const asked = (message: unknown): void => {
    if (message === NEXT_PART) sendNext()
  }
  port.on('message', asked)
  sendNext()
} catch (error) {
  send({ error: error instanceof Error ? error.message : String(error), warnings })
}
