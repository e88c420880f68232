// Runs bench/load.ts (autocannon) in a process of its own, so the load generator never shares an
// event loop with the server it measures; used by bench:http and bench:soak.
import { spawn } from 'node:child_process'
import { getPriority, setPriority } from 'node:os'
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
  /**
   * Stop after this many requests instead of after `duration` (the smoke test's mode: a quick,
   * fixed amount of work); requests/s is then the total over the time it took.
   */
  readonly amount?: number
  /**
   * The load generator's scheduling priority (a nice value; negative needs the right to raise it).
   * The soak gives its clients priority over the services: on one machine they stand for callers
   * on others, and a starved client would count its own lack of CPU as the service's.
   */
  readonly priority?: number
}

/** The nice value the soak's clients ask for (bench:soak). */
export const CLIENT_PRIORITY = -10

/** Whether this system lets the benchmark raise its clients to CLIENT_PRIORITY (tried on this thread, then undone). */
export function canRaisePriority(): boolean {
  const own = getPriority()
  if (!raisePriority(CLIENT_PRIORITY)) return false
  setPriority(own)
  return true
}

/**
 * Raise the calling thread to `priority` (on Linux a nice value is per thread); false when the
 * system refuses (no right to raise it), and the caller says so in its output.
 */
export function raisePriority(priority: number): boolean {
  try {
    setPriority(priority)
    return true
  } catch {
    return false
  }
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
