// Runs bench/load.ts (autocannon) in a process of its own, so the load generator never shares an
// event loop with the server it measures; used by bench:http and bench:soak.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The project's TypeScript loader (test/loader): tsx's does not reach worker threads. */
export const LOADER = new URL('../test/loader/register.mjs', import.meta.url).href

/** What one load run measured (bench/load.ts prints it). */
export interface Measured {
  requests: number
  latencyP50: number
  latencyP99: number
  errors: number
  non2xx: number
  total: number
}

export interface Scenario {
  /** On 127.0.0.1 only (the load generator refuses anything else). */
  readonly url: string
  readonly body: string
  readonly connections: number
  readonly duration: number
}

/** POST `scenario.body` to `scenario.url` for `duration` seconds from a separate process. */
export function runLoad(scenario: Scenario): Promise<Measured> {
  const script = fileURLToPath(new URL('./load.ts', import.meta.url))
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', LOADER, script, JSON.stringify(scenario)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as Measured) : reject(new Error(`load generator exited ${code}`))))
  })
}
