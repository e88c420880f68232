// Heavy worker-thread work in a process of its own (README "Isolation", options.helperProcess). A worker
// thread can be given a low priority, but the threads V8 collects and compiles with are one pool
// per process, at the main thread's priority: measured, a registered 1 MiB echo cost its isolation
// worker 140 ms of CPU at nice 19 and V8's threads 70 ms more at nice 0, beside 20 ms of the main
// thread's own (docs/reliability.md). In a child process at the lowest priority, every thread that
// works for the pools gives way to the service's main thread; a native crash in a parser ends the
// child, not the service. The child is started on the first task and stopped when idle.
//
// The parent holds what each pool is (`open`) and sends it to a child with the pool's first task
// there: a child that ended is started again, and makes the pools again as their tasks come.
// Tasks and answers cross the IPC channel with V8's serializer (what postMessage uses too); a
// failure crosses as plain data (`CrossedError`).
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { ParseAnswer, ParseRunner, ParseTask } from '../extensions/request/parse-thread.js'

/** What a pool in the helper process is: made there from plain data (helper-entry.ts). */
export type PoolSpec = { readonly kind: 'isolation'; readonly config: unknown; readonly data: unknown } | { readonly kind: 'parse' }

/** What the parent sends. */
export type HelperRequest =
  | { readonly op: 'open'; readonly pool: number; readonly spec: PoolSpec }
  | { readonly op: 'run'; readonly pool: number; readonly id: number; readonly task: unknown; readonly timeMs: number }
  | { readonly op: 'abort'; readonly id: number }
  | { readonly op: 'retire'; readonly pool: number }
  | { readonly op: 'destroy'; readonly pool: number; readonly id: number }

/** A failure as it crosses: its name, message and code, and the answer it declares (service/errors.ts), when it does. */
export interface CrossedError {
  readonly name: string
  readonly message: string
  readonly code?: string
  readonly declared?: { readonly status: number; readonly code: string; readonly extra: Record<string, unknown>; readonly budget?: string }
}

/** What the child sends: a task's answer or failure, or a pool's warning. */
export type HelperReply =
  | { readonly id: number; readonly answer: unknown }
  | { readonly id: number; readonly error: CrossedError }
  | { readonly pool: number; readonly warn: string }

/** A task's failure in the helper process, made again on this side (`crossed` as it came). */
export class HelperTaskError extends Error {
  override readonly name: string
  readonly code: string | undefined

  constructor(readonly crossed: CrossedError) {
    super(crossed.message)
    this.name = crossed.name
    this.code = crossed.code
  }
}

/** The code of the failure every task in flight gets when the helper process ends (or its channel closes). */
export const HELPER_ENDED = 'ERR_HELPER_PROCESS_ENDED'

/** Helper processes in a row that may end before their first answer; then the helper is down for DOWN_MS. */
const FAILED_STARTS = 3

/** How long the helper process is not started again after FAILED_STARTS in a row (its work runs in this process meanwhile). */
const DOWN_MS = 60_000

/** How long the helper process is kept once no task is in flight (its threads stop sooner). */
const IDLE_MS = 90_000

const ENTRY = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './helper-entry.ts' : './helper-entry.js', import.meta.url))

interface Pending {
  /** The process it was sent to: only its end fails the task. */
  readonly child: ChildProcess
  readonly resolve: (answer: unknown) => void
  readonly reject: (error: Error) => void
}

interface OpenPool {
  readonly spec: PoolSpec
  readonly warn: (message: string) => void
}

/** The node flags the child is started with: the parent's, less a debugger's (the parent holds its port). */
function childFlags(): string[] {
  return process.execArgv.filter((flag) => !/^--(inspect|debug)/.test(flag))
}

/**
 * The messages one side sends in a turn of the event loop, sent as one: each IPC message costs a
 * serializer, a write and a read of its own, and a burst (the tasks of an `each` over upstream
 * pages, their answers) crosses in one of each.
 */
export class Outbox<T> {
  #queued: T[] = []

  constructor(private readonly deliver: (batch: T[]) => void) {}

  send(message: T): void {
    if (this.#queued.length === 0) setImmediate(this.#flush)
    this.#queued.push(message)
  }

  readonly #flush = (): void => {
    const batch = this.#queued
    this.#queued = []
    this.deliver(batch)
  }
}

/** The helper process as this side talks to it. */
interface Connection {
  readonly child: ChildProcess
  readonly outbox: Outbox<HelperRequest>
  /** Whether it has answered anything: one that ends before it does failed to start. */
  answered: boolean
  /** The pools made in it: a pool is sent there with its first task, not before (a served set's mappings cross only when it has heavy work). */
  readonly opened: Set<number>
}

class HelperProcess {
  #connection: Connection | undefined
  readonly #pools = new Map<number, OpenPool>()
  readonly #pending = new Map<number, Pending>()
  #ids = 0
  #idle: NodeJS.Timeout | undefined
  /** Helper processes in a row that ended before their first answer. */
  #failedStarts = 0
  /** Until when (performance.now()) no helper process is started. */
  #downUntil = -Infinity

  /**
   * Whether heavy work may go to the helper process: false for DOWN_MS after FAILED_STARTS of them
   * in a row ended before their first answer (a broken NODE_OPTIONS, a sandbox that forbids the
   * fork, a crash at start), so that every heavy request does not start another. The callers run
   * the work in threads of this process meanwhile.
   */
  get available(): boolean {
    return performance.now() >= this.#downUntil
  }

  /** Register a pool; it is made in the helper process with its first task there. */
  open(spec: PoolSpec, warn: (message: string) => void): number {
    const pool = ++this.#ids
    this.#pools.set(pool, { spec, warn })
    return pool
  }

  /** Run `task` in `pool`; `signal` aborts it. Rejects with HelperTaskError for what failed there. */
  async run(pool: number, task: unknown, timeMs: number, signal?: AbortSignal | null): Promise<unknown> {
    const open = this.#pools.get(pool)
    if (open === undefined) throw new HelperTaskError({ name: 'Error', message: 'the pool is closed' })
    signal?.throwIfAborted()
    const { child, outbox, opened } = this.#started()
    if (!opened.has(pool)) {
      opened.add(pool)
      outbox.send({ op: 'open', pool, spec: open.spec })
    }
    const id = ++this.#ids
    return await new Promise<unknown>((resolve, reject) => {
      const abort = (): void => {
        outbox.send({ op: 'abort', id })
      }
      signal?.addEventListener('abort', abort, { once: true })
      const settle = (): void => {
        signal?.removeEventListener('abort', abort)
        this.#pending.delete(id)
        this.#quiet()
      }
      this.#pending.set(id, {
        child,
        resolve: (answer) => {
          settle()
          resolve(answer)
        },
        reject: (error) => {
          settle()
          reject(signal?.aborted === true ? (signal.reason as Error) : error)
        },
      })
      this.#busy()
      outbox.send({ op: 'run', pool, id, task, timeMs })
    })
  }

  /** The pool's tasks finish, then its threads stop; it is not made again. */
  retire(pool: number): void {
    if (!this.#pools.delete(pool)) return
    if (this.#connection?.opened.delete(pool) === true) this.#connection.outbox.send({ op: 'retire', pool })
    this.#quiet()
  }

  /** Stop the pool's threads now (its tasks in flight fail). */
  async destroy(pool: number): Promise<void> {
    if (!this.#pools.delete(pool)) return
    const connection = this.#connection
    if (connection?.opened.delete(pool) === true) {
      const id = ++this.#ids
      await new Promise<unknown>((resolve) => {
        this.#pending.set(id, { child: connection.child, resolve, reject: resolve })
        this.#busy()
        connection.outbox.send({ op: 'destroy', pool, id })
      }).finally(() => this.#pending.delete(id))
    }
    this.#quiet()
  }

  #started(): Connection {
    if (this.#connection !== undefined) return this.#connection
    const child = fork(ENTRY, [], { execArgv: childFlags(), serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const outbox = new Outbox<HelperRequest>((batch) => {
      child.send(batch, (error) => {
        // The channel closed under it: the process ended, or is ending, before it took the tasks.
        // It is over for every task it holds, and the next task starts a new one (a start that
        // never answered is counted once, whichever of this and its 'exit' comes first).
        if (error !== null && error !== undefined) ended(`its channel closed: ${error.message}`)
      })
    })
    const connection: Connection = { child, outbox, answered: false, opened: new Set() }
    this.#connection = connection
    // The child keeps this process alive only while a task is in flight (#busy, #quiet).
    child.unref()
    child.channel?.unref()
    child.on('message', (replies: HelperReply[]) => {
      connection.answered = true
      this.#failedStarts = 0
      for (const reply of replies) {
        if ('warn' in reply) {
          this.#pools.get(reply.pool)?.warn(reply.warn)
          continue
        }
        const pending = this.#pending.get(reply.id)
        if (pending === undefined) continue
        if ('error' in reply) pending.reject(new HelperTaskError(reply.error))
        else pending.resolve(reply.answer)
      }
    })
    let over = false
    const ended = (how: string): void => {
      if (over) return
      over = true
      if (this.#connection === connection) this.#connection = undefined
      if (!connection.answered && ++this.#failedStarts >= FAILED_STARTS) {
        this.#failedStarts = 0
        this.#downUntil = performance.now() + DOWN_MS
        const said = `the helper process ended before its first answer ${FAILED_STARTS} times in a row (last: ${how}); heavy work runs in this process's threads for the next ${DOWN_MS / 1000} s`
        for (const warn of new Set([...this.#pools.values()].map((pool) => pool.warn))) warn(said)
      }
      const failure = new HelperTaskError({ name: 'Error', message: `the helper process ended (${how})`, code: HELPER_ENDED })
      for (const pending of [...this.#pending.values()]) if (pending.child === child) pending.reject(failure)
    }
    // A process that could not be started (EAGAIN, say) reports only an 'error', never an 'exit';
    // any other 'error' (a send that failed is answered by its callback) must not end this process.
    child.on('error', (error) => {
      if (child.pid === undefined) ended(`not started: ${error.message}`)
    })
    child.on('exit', (code, signal) => ended(signal ?? `exit code ${code}`))
    return connection
  }

  #busy(): void {
    clearTimeout(this.#idle)
    this.#idle = undefined
    if (this.#pending.size !== 1) return
    this.#connection?.child.ref()
    this.#connection?.child.channel?.ref()
  }

  /** No task in flight: the channel no longer holds the process; with no pool open the child stops now, else once idle. */
  #quiet(): void {
    if (this.#pending.size > 0) return
    const child = this.#connection?.child
    if (child === undefined) return
    child.unref()
    child.channel?.unref()
    clearTimeout(this.#idle)
    if (this.#pools.size === 0) {
      this.#stop(child)
      return
    }
    this.#idle = setTimeout(() => {
      if (this.#pending.size === 0 && this.#connection?.child === child) this.#stop(child)
    }, IDLE_MS).unref()
  }

  #stop(child: ChildProcess): void {
    this.#connection = undefined
    // The child ends when its channel closes (helper-entry.ts); its threads with it.
    if (child.connected) child.disconnect()
  }
}

let helper: HelperProcess | undefined

/** The process's one helper process (started on its first task). */
export function helperProcess(): HelperProcess {
  helper ??= new HelperProcess()
  return helper
}

export type { HelperProcess }

/** The pool's number in the helper process, once a parse opened it. */
let parsePool: number | undefined

/** The request plugin's parse threads in the helper process (extensions/request/parse-thread.ts `parseElsewhere`). */
export const helperParsing: ParseRunner = {
  get available(): boolean {
    return helperProcess().available
  },
  async run(task: ParseTask, signal: AbortSignal): Promise<ParseAnswer> {
    const helper = helperProcess()
    parsePool ??= helper.open({ kind: 'parse' }, () => {})
    return (await helper.run(parsePool, task, 0, signal)) as ParseAnswer
  },
  async close(): Promise<void> {
    const open = parsePool
    parsePool = undefined
    if (open !== undefined) await helperProcess().destroy(open)
  },
}
