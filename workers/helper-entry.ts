// The helper process (workers/helper-process.ts): every thread lowered to the lowest priority
// first, then the pools the parent sends with their first task, made here as the service would make them in its own
// process (an IsolationPool, the parse threads), and the tasks it sends run in them. The process
// ends when the parent closes the channel (or ends itself).
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { lowerPriority } from '../engine/slices.js'
import type { CrossedError, HelperReply, HelperRequest, PoolSpec } from './helper-process.js'

/**
 * util-linux's chrt, where there is one (Linux; Debian's images, the slim ones included, carry it):
 * what puts the helper process's threads under the SCHED_IDLE policy (`lowerProcessPriority`).
 */
const CHRT = process.platform === 'linux' ? ['/usr/bin/chrt', '/bin/chrt'].find((path) => existsSync(path)) : undefined

/**
 * Lower every thread of this process to the lowest priority, before anything else is loaded. On
 * Linux each thread that runs already (V8's, libuv's) is lowered one by one, then, where chrt is
 * installed and the system allows it, put under the SCHED_IDLE policy, which the scheduler
 * preempts the moment a thread of the normal policy wakes: at nice 19 alone a helper thread kept a
 * core for up to its time slice (some ms) after the event loop woke, and bench:soak measured the
 * main thread waiting, runnable, 1.4–3.3 s of a 20 s phase. Threads made later inherit both.
 * Elsewhere the process as a whole is lowered.
 */
function lowerProcessPriority(): void {
  if (process.platform !== 'linux') {
    lowerPriority(0)
    return
  }
  let threads: string[]
  try {
    threads = readdirSync('/proc/self/task')
  } catch {
    threads = [String(process.pid)]
  }
  for (const thread of threads) lowerPriority(Number(thread))
  if (CHRT === undefined) return
  try {
    execFileSync(CHRT, ['--all-tasks', '--idle', '--pid', '0', String(process.pid)], { stdio: 'ignore', timeout: 5000 })
  } catch {
    // Refused (a seccomp profile, say) or failed: nice 19 stays.
  }
}

lowerProcessPriority()

const { IsolationPool } = await import('./isolation.js')
const { parsePoolOptions } = await import('../extensions/request/parse-thread.js')
const { Piscina } = await import('piscina')
const { Outbox } = await import('./helper-process.js')

/** A pool as this side drives it: the same three calls whatever it is. */
interface Pool {
  run(task: unknown, timeMs: number, signal: AbortSignal): Promise<unknown>
  retire(): void
  destroy(): Promise<void>
}

const pools = new Map<number, Pool>()
const running = new Map<number, AbortController>()

/** The replies of a turn, sent as one message (helper-process.ts `Outbox`). */
const replies = new Outbox<HelperReply>((batch) => {
  // A parent gone: nothing to answer (the channel's close ends this process).
  if (process.connected) process.send!(batch)
})

function send(reply: HelperReply): void {
  replies.send(reply)
}

function open(pool: number, spec: PoolSpec): Pool {
  if (spec.kind === 'isolation') {
    const isolation = new IsolationPool(spec.config as never, spec.data as never, (warn) => send({ pool, warn }))
    return {
      run: (task, timeMs, signal) => isolation.run(task as never, timeMs, signal),
      retire: () => isolation.retire(),
      destroy: () => isolation.destroy(),
    }
  }
  const parse = new Piscina(parsePoolOptions())
  // A thread that dies outside a task must not end the process (an 'error' nobody hears would).
  parse.on('error', () => {})
  return {
    run: (task, _timeMs, signal) => parse.run(task as never, { signal }),
    retire: () => {
      parse.close().catch(() => {})
    },
    destroy: () => parse.destroy(),
  }
}

/** A failure as plain data: what the parent needs to make it again. */
function crossed(error: unknown): CrossedError {
  const { name, message, code, statusCode, responseCode, extra, budget } = (error ?? {}) as Record<string, unknown>
  return {
    name: typeof name === 'string' ? name : 'Error',
    message: typeof message === 'string' ? message : String(error),
    ...(typeof code === 'string' ? { code } : {}),
    ...(typeof statusCode === 'number' && typeof responseCode === 'string'
      ? { declared: { status: statusCode, code: responseCode, extra: (extra ?? {}) as Record<string, unknown>, ...(typeof budget === 'string' ? { budget } : {}) } }
      : {}),
  }
}

async function run(request: Extract<HelperRequest, { op: 'run' }>): Promise<void> {
  const pool = pools.get(request.pool)
  if (pool === undefined) {
    send({ id: request.id, error: { name: 'Error', message: 'the pool is closed' } })
    return
  }
  const controller = new AbortController()
  running.set(request.id, controller)
  try {
    send({ id: request.id, answer: await pool.run(request.task, request.timeMs, controller.signal) })
  } catch (error) {
    send({ id: request.id, error: crossed(error) })
  } finally {
    running.delete(request.id)
  }
}

process.on('message', (requests: HelperRequest[]) => {
  for (const request of requests) handle(request)
})

function handle(request: HelperRequest): void {
  switch (request.op) {
    case 'open':
      try {
        pools.set(request.pool, open(request.pool, request.spec))
      } catch (error) {
        // A pool that cannot be made fails each of its tasks, not this process (and with it every other pool).
        const failed = Promise.reject(error instanceof Error ? error : new Error(String(error)))
        failed.catch(() => {})
        pools.set(request.pool, { run: () => failed, retire: () => {}, destroy: async () => {} })
      }
      return
    case 'run':
      void run(request)
      return
    case 'abort':
      running.get(request.id)?.abort(new Error('the caller gave the task up'))
      return
    case 'retire':
      pools.get(request.pool)?.retire()
      pools.delete(request.pool)
      return
    case 'destroy': {
      const pool = pools.get(request.pool)
      pools.delete(request.pool)
      void (pool?.destroy() ?? Promise.resolve()).catch(() => {}).then(() => send({ id: request.id, answer: null }))
    }
  }
}

// The parent gone (closed the channel, or ended): so does this process, its threads with it.
process.on('disconnect', () => process.exit(0))
