// Runs bench/load.ts (autocannon) in a process of its own, so the load generator never shares an
// event loop with the server it measures; used by bench:http and bench:soak.
import { execFileSync, spawn } from 'node:child_process'
import { availableParallelism, getPriority, setPriority } from 'node:os'
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
  /** CPU time (ms) the load generator's process used, start-up included. */
  cpuMs: number
  /**
   * Time (ms) the load generator's main thread, which sends every request, waited for a CPU while
   * it was runnable during the load (Linux's schedstat; absent elsewhere): a starved client is the
   * bench machine's limit, not the service's.
   */
  waitMs?: number
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
  /** The CPUs (a taskset list, `1`) the load generator may run on (`cpuSplit`). */
  readonly cpus?: string
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

/**
 * The soak's split of the machine (bench:soak): the service it measures alone on CPU 0, everything
 * else (the load generator, the attacks, the upstreams, the probes, the other service) on the
 * rest, as a service and its callers are on separate machines. Undefined where the split cannot
 * be made: one CPU, or no `taskset` (util-linux; Linux only).
 */
export function cpuSplit(): { readonly service: string; readonly clients: string } | undefined {
  const cpus = availableParallelism()
  if (cpus < 2 || process.platform !== 'linux') return undefined
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' })
  } catch {
    return undefined
  }
  return { service: '0', clients: `1-${cpus - 1}` }
}

/** Hold every thread of process `pid` (and the threads it starts later) to `cpus`. */
export function pin(pid: number, cpus: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' })
}

/** `command` with `args`, started on `cpus` when given (through taskset, which keeps the process id). */
export function onCpus(cpus: string | undefined, command: string, args: readonly string[]): [string, string[]] {
  return cpus === undefined ? [command, [...args]] : ['taskset', ['-c', cpus, command, ...args]]
}

/** POST `scenario.body` to `scenario.url` for `duration` seconds from a separate process. */
export function runLoad(scenario: Scenario): Promise<Measured> {
  const script = fileURLToPath(new URL('./load.ts', import.meta.url))
  return new Promise((resolve, reject) => {
    const [command, args] = onCpus(scenario.cpus, process.execPath, ['--import', LOADER, script, JSON.stringify(scenario)])
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as Measured) : reject(new Error(`load generator exited ${code}`))))
  })
}
