// A MAPPINGS set read and parsed off the event loop (hot reload): a thread of its own reads the
// files and parses them (YAML parsing of megabytes takes seconds), and only the parsed documents
// come back. The service goes on answering meanwhile (README "Hot reload").
import { Worker } from 'node:worker_threads'
import type { MappingEntry } from '../sources/mappings.js'
import { SourceError } from '../sources/files.js'

export interface LoadRequest {
  readonly path: string
  readonly timeoutMs: number
  readonly maxBytes: number
}

export type LoadAnswer = { readonly entries: MappingEntry[]; readonly warnings: string[] } | { readonly error: string; readonly warnings: string[] }

const WORKER = new URL(import.meta.url.endsWith('.ts') ? './load-worker.ts' : './load-worker.js', import.meta.url)

/** `loadMappings(path)` in a worker thread; its failures are SourceErrors, its warnings passed on. */
export function loadOffThread(request: LoadRequest, warn: (message: string) => void): Promise<MappingEntry[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: request })
    let answered = false
    // A set that takes longer than the load timeout to read and parse (a YAML map of a hundred
    // thousand keys takes minutes) is refused, and its thread stopped.
    const timer = setTimeout(() => {
      answered = true
      reject(new SourceError(`${request.path} did not finish loading within ${request.timeoutMs} ms (options.server.loadTimeout)`))
      void worker.terminate()
    }, request.timeoutMs)
    worker.once('exit', () => clearTimeout(timer))
    worker.once('message', (answer: LoadAnswer) => {
      if (answered) return
      answered = true
      for (const warning of answer.warnings) warn(warning)
      if ('error' in answer) reject(new SourceError(answer.error))
      else resolve(answer.entries)
    })
    worker.once('error', (error) => {
      if (answered) return
      answered = true
      reject(new SourceError(`${request.path} could not be loaded: ${error.message}`))
    })
    worker.once('exit', (code) => {
      if (!answered) reject(new SourceError(`${request.path} could not be loaded: the loading thread exited with code ${code}`))
    })
  })
}
