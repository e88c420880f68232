// Caller-authored work in worker threads (README "Isolation"): a pool of workers, each with its
// own engine over the same mappings and extensions, runs an evaluation under hard limits the
// event loop cannot give it: a wall clock after which the worker is terminated, and a heap after
// which V8 stops it. Whatever a document makes a library do (the regex engine, JSON.stringify,
// string building), the main thread keeps serving; a worker that dies is replaced.
import { Piscina } from 'piscina'
import type { MappingEntry } from '../sources/mappings.js'
import type { IsolationConfig } from '../config/resolve.js'
import { Unavailable } from '../service/errors.js'
import { HELPER_ENDED, HelperTaskError, helperProcess } from './helper-process.js'
import type { StockSettings } from '../extensions/stock.js'
import type { RequestConfig } from '../extensions/request/index.js'
import type { EngineSettings, MapOutcome, MapRequest, Report } from '../service/evaluation.js'

/** How a worker builds its extension surface: the stock one (from the environment it read), or a module's default export. */
export type ExtensionsSpec = { readonly module: string } | { readonly stock: StockSettings } | { readonly requests: Readonly<Record<string, RequestConfig>> }

/** Everything a worker needs to build its engine: plain data (it crosses into the thread). */
export interface IsolationWorkerData {
  readonly entries: readonly MappingEntry[]
  readonly extensions: ExtensionsSpec
  readonly settings: EngineSettings
}

/** What the pool adds for its workers: the start times of its tasks, in memory they share (see `IsolationPool`). */
export interface PoolWorkerData extends IsolationWorkerData {
  readonly started: SharedArrayBuffer
}

/**
 * A task: an evaluation (POST /map), or a submitted document's validation and examples (POST
 * /validate). A document may cross as its JSON text (`documentText`, then `document` is null),
 * parsed in the worker; with `printed`, the report comes back as its JSON text (`reportText`):
 * a string crosses as a copy, where a report's objects are cloned on the main thread.
 */
export type Task =
  | { readonly kind: 'map'; readonly request: MapRequest; readonly identity: unknown; readonly stdout: boolean }
  | {
    readonly kind: 'validate'
    readonly document: object | null
    readonly documentText?: string
    readonly printed?: boolean
    readonly mayEvaluate: boolean
    readonly identity: unknown
    readonly stdout: boolean
  }

/**
 * A task as it crosses: the worker that begins it writes the time into slot `slot` of the shared
 * start times, in place of `ticket`, which starts its clock (`markStarted`).
 */
export type IsolatedTask = Task & { readonly slot: number; readonly ticket: bigint }

/**
 * The worker side of the start times: write when this task began (process.hrtime, one clock for
 * every thread of the process) into its slot, unless the slot holds another task's ticket by now
 * (this one was given up while it was being handed over).
 */
export function markStarted(times: BigInt64Array, task: IsolatedTask): void {
  Atomics.compareExchange(times, task.slot, task.ticket, process.hrtime.bigint())
}

/** An error as the error handler would shape it, made in the worker. */
export interface ShapedFailure {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly extra: Record<string, unknown>
  /** The budget a BudgetExceeded tripped, for the metrics. */
  readonly budget?: string
}

/** What the worker tells the main thread besides the answer itself, for the log and the metrics. */
export interface TaskFacts {
  /** Lines the `stdout` keyword printed (only when the task asked for them). */
  readonly stdout: readonly string[]
  /** Plugin calls made, by plugin name. */
  readonly pluginCalls: Readonly<Record<string, number>>
  /** The statuses of upstream answers (undefined: no answer). */
  readonly upstream: ReadonlyArray<number | undefined>
  /** The explicit document's validation: from the cache or not, and its report when refused. */
  readonly prepared?: { readonly cached: boolean; readonly refused: boolean; readonly report: unknown }
}

export type TaskAnswer =
  | ({ readonly ok: true; readonly outcome: MapOutcome } & TaskFacts)
  | ({ readonly ok: true; readonly report: Report } & TaskFacts)
  | ({ readonly ok: true; readonly reportText: string; readonly valid: boolean } & TaskFacts)
  | ({ readonly ok: false; readonly failure: ShapedFailure } & TaskFacts)

/**
 * A failure an isolated task answered with: carries the status, code, message and body fields the
 * error handler sends; `facts` what the worker saw before it failed.
 */
export class IsolatedFailure extends Error {
  override readonly name = 'IsolatedFailure'
  readonly code: string
  /** Its answer, as the worker shaped it (service/errors.ts `shapeError` reads it like any declared answer). */
  readonly responseCode: string
  readonly statusCode: number
  readonly extra: Record<string, unknown>
  readonly budget: string | undefined

  constructor(failure: ShapedFailure) {
    super(failure.message)
    this.code = failure.code
    this.responseCode = failure.code
    this.statusCode = failure.status
    this.extra = failure.extra
    this.budget = failure.budget
  }

  get responseFields(): Record<string, unknown> {
    return this.extra
  }
}

/** A hard limit enforced from outside the worker: 422 BudgetExceeded, as a cooperative budget is. */
function hardLimit(budget: 'timeMs' | 'memory', limit: number, used: number, unit: string): IsolatedFailure {
  return new IsolatedFailure({
    status: 422,
    code: 'BudgetExceeded',
    message: `evaluation exceeded its ${budget} budget: ${used} of at most ${limit} ${unit} (the worker running it was stopped)`,
    extra: { budget, limit, used, pointer: '' },
    budget,
  })
}

/** How often the tasks in flight are held against their clocks: the hard limits' precision. */
const SWEEP_MS = 20

const NS_PER_MS = 1_000_000n

const WORKER = new URL(import.meta.url.endsWith('.ts') ? './isolation-entry.ts' : './isolation-entry.js', import.meta.url).href

/**
 * A task's cancellation in the form piscina also takes (an emitter of one `abort`): aborted by the
 * client leaving, by the queue's wait or by the hard limit. Lighter than an AbortController, whose
 * signal is an EventTarget with weak listeners, a cost every isolated request paid several times.
 */
class Cancel {
  aborted = false
  reason: unknown = undefined
  #listener: (() => void) | undefined

  once(_event: 'abort', listener: () => void): void {
    this.#listener = listener
  }

  off(_event: 'abort', listener: () => void): void {
    if (this.#listener === listener) this.#listener = undefined
  }

  removeListener(event: 'abort', listener: () => void): void {
    this.off(event, listener)
  }

  abort(reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const listener = this.#listener
    this.#listener = undefined
    listener?.()
  }
}

/** A task in flight: where its start time will appear, its clocks, and why the pool stopped it, once it did. */
interface InFlight {
  readonly slot: number
  readonly submitted: bigint
  readonly limitNs: bigint
  readonly cancel: Cancel
  stopped?: { readonly by: 'queue' } | { readonly by: 'time'; readonly usedMs: number }
}

/**
 * A task whose request carried this many bytes or more (its body, or the text that crosses) is
 * heavy: with the helper process on, it runs there (`SplitIsolation`).
 */
export const HEAVY_TASK_BYTES = 64 * 1024

/**
 * Whether a task is heavy (HEAVY_TASK_BYTES or more): the request's body, or either text that
 * crosses in its place. Fixed parameters rather than a list: it runs once per isolated request.
 */
export function isHeavy(bodyBytes: number | undefined, text: string | undefined, otherText?: string): boolean {
  return (bodyBytes ?? 0) >= HEAVY_TASK_BYTES || (text?.length ?? 0) >= HEAVY_TASK_BYTES || (otherText?.length ?? 0) >= HEAVY_TASK_BYTES
}

/** Where isolated tasks run: a pool of threads in this process (IsolationPool), in the helper process (HelperIsolation), or both (SplitIsolation). */
export interface Isolation {
  readonly config: IsolationConfig
  /** The timeMs budget of explicit documents (the hard limit's base). */
  readonly explicitTimeMs: number
  /** `heavy`: the request carried HEAVY_TASK_BYTES or more. */
  run(task: Task, timeMs: number, signal?: AbortSignal, heavy?: boolean): Promise<TaskAnswer>
  retire(): void
  destroy(): Promise<void>
}

/** The isolation a served set gets: heavy tasks in the helper process unless the options keep every thread here. */
export function startIsolation(config: IsolationConfig, data: IsolationWorkerData, warn: (message: string) => void): Isolation {
  return config.helperProcess ? new SplitIsolation(config, data, warn) : new IsolationPool(config, data, warn)
}

/**
 * Two pools of the same threads: heavy tasks in the helper process, the rest in threads of this
 * process. The helper process's point is the collecting and compiling V8 does for a worker's
 * heap, which there gives way to the event loop: that grows with what a task allocates, and a
 * task's size is the best sign of it before it runs. A light task would pay the hop for little:
 * through the helper process, bench:http's explicit citation document answered 7,400–7,600 req/s
 * against 11,200 in a thread of this process. Each pool starts its threads on first use.
 */
class SplitIsolation implements Isolation {
  readonly explicitTimeMs: number
  readonly #here: IsolationPool
  readonly #helper: HelperIsolation

  constructor(
    readonly config: IsolationConfig,
    data: IsolationWorkerData,
    warn: (message: string) => void
  ) {
    this.#here = new IsolationPool(config, data, warn)
    this.#helper = new HelperIsolation(config, data, warn)
    this.explicitTimeMs = this.#here.explicitTimeMs
  }

  run(task: Task, timeMs: number, signal?: AbortSignal, heavy = false): Promise<TaskAnswer> {
    return (heavy && helperProcess().available ? this.#helper : this.#here).run(task, timeMs, signal)
  }

  retire(): void {
    this.#here.retire()
    this.#helper.retire()
  }

  async destroy(): Promise<void> {
    await Promise.all([this.#here.destroy(), this.#helper.destroy()])
  }
}

/**
 * An IsolationPool in the helper process (workers/helper-process.ts): the same pool, clocks and
 * limits, made there; a failure it answers is made again here as the error it was.
 */
class HelperIsolation implements Isolation {
  readonly explicitTimeMs: number
  readonly #pool: number

  constructor(
    readonly config: IsolationConfig,
    data: IsolationWorkerData,
    warn: (message: string) => void
  ) {
    this.explicitTimeMs = data.settings.limits.explicit.timeMs
    this.#pool = helperProcess().open({ kind: 'isolation', config: { ...config, helperProcess: false }, data }, warn)
  }

  async run(task: Task, timeMs: number, signal?: AbortSignal): Promise<TaskAnswer> {
    try {
      return (await helperProcess().run(this.#pool, task, timeMs, signal)) as TaskAnswer
    } catch (error) {
      if (!(error instanceof HelperTaskError)) throw error
      const { declared } = error.crossed
      if (declared !== undefined) throw new IsolatedFailure({ status: declared.status, code: declared.code, message: error.message, extra: declared.extra, budget: declared.budget })
      if (error.code === HELPER_ENDED) throw new Unavailable(`the worker threads' process ended while it ran the evaluation: ${error.message}`)
      throw error
    }
  }

  retire(): void {
    helperProcess().retire(this.#pool)
  }

  destroy(): Promise<void> {
    return helperProcess().destroy(this.#pool)
  }
}

export class IsolationPool implements Isolation {
  readonly #pool: Piscina<IsolatedTask, TaskAnswer>
  readonly #timeMs: number
  /**
   * One slot per task in flight, in memory the workers share: a negative ticket while the task
   * waits, the time a worker began it after. One timer reads them all (`#sweep`); a task needs no
   * channel, signal or timer of its own to have its clock started or stopped.
   */
  readonly #times: BigInt64Array
  readonly #free: number[]
  readonly #inFlight = new Set<InFlight>()
  readonly #queueNs: bigint
  #tickets = 0n
  #sweeper: NodeJS.Timeout | undefined

  constructor(
    readonly config: IsolationConfig,
    data: IsolationWorkerData,
    warn: (message: string) => void
  ) {
    this.#timeMs = data.settings.limits.explicit.timeMs
    this.#queueNs = BigInt(config.queueMs) * NS_PER_MS
    // Every task running or waiting has a slot: more than that are refused (options.isolation.queue).
    const slots = config.threads + config.queue
    const started = new SharedArrayBuffer(slots * BigInt64Array.BYTES_PER_ELEMENT)
    this.#times = new BigInt64Array(started)
    this.#free = Array.from({ length: slots }, (_, slot) => slots - 1 - slot)
    this.#pool = new Piscina({
      filename: WORKER,
      // Started on demand and kept warm while used: a service that never isolates pays no thread.
      minThreads: 0,
      maxThreads: config.threads,
      idleTimeout: 60_000,
      workerData: { ...data, started } satisfies PoolWorkerData,
      // The main thread's stack size (V8's default, about 1 MiB) rather than a worker's 4 MiB: what
      // nests too deep to evaluate or print inline does so here too.
      resourceLimits: { maxOldGenerationSizeMb: config.memoryMb, maxYoungGenerationSizeMb: Math.min(32, Math.max(4, Math.floor(config.memoryMb / 8))), stackSizeMb: 1 },
      // A worker's stdout and stderr are the process's: an extension's console output stays visible.
      env: process.env as Record<string, string>,
    })
    // A worker that dies outside a task (its heap limit reached while it starts, say) is the
    // deployment's to see; an 'error' event nobody listened to would end the process.
    this.#pool.on('error', (error: unknown) => warn(`an isolation worker thread failed: ${(error as Error).message}`))
  }

  /**
   * Run a task; `signal` aborts it (the client left). Its clock starts when a worker begins it (a
   * worker that is starting, or a queue, does not count against the evaluation); past `timeMs`
   * plus the grace, the worker is terminated. A task waits for a worker at most `queueMs`, behind
   * at most `queue` others. Rejects with IsolatedFailure for a failure the worker shaped or a hard
   * limit, with Unavailable when no worker took it in time or the queue is full, and with the cause
   * for a client abort.
   */
  async run(task: Task, timeMs: number, signal?: AbortSignal): Promise<TaskAnswer> {
    const slot = this.#free.pop()
    if (slot === undefined) throw new Unavailable('every worker thread is busy and the queue is full')
    const ticket = --this.#tickets
    Atomics.store(this.#times, slot, ticket)
    const cancel = new Cancel()
    const flight: InFlight = { slot, submitted: process.hrtime.bigint(), limitNs: BigInt(timeMs + this.config.graceMs) * NS_PER_MS, cancel }
    const left = (): void => cancel.abort(signal!.reason)
    if (signal?.aborted === true) left()
    else signal?.addEventListener('abort', left, { once: true })
    this.#inFlight.add(flight)
    this.#sweeper ??= setInterval(this.#sweep, SWEEP_MS).unref()
    try {
      return await this.#pool.run({ ...task, slot, ticket }, { signal: cancel })
    } catch (error) {
      const stopped = flight.stopped
      if (stopped?.by === 'time') throw hardLimit('timeMs', timeMs, stopped.usedMs, 'milliseconds')
      if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw hardLimit('memory', this.config.memoryMb, this.config.memoryMb, 'MiB of heap')
      }
      if (stopped?.by === 'queue') throw new Unavailable(`no worker thread took the evaluation within ${this.config.queueMs} ms`)
      throw error
    } finally {
      signal?.removeEventListener('abort', left)
      this.#inFlight.delete(flight)
      // A ticket no task holds: a worker still handing over the stopped task writes nothing here.
      Atomics.store(this.#times, slot, 0n)
      this.#free.push(slot)
      if (this.#inFlight.size === 0) {
        clearInterval(this.#sweeper)
        this.#sweeper = undefined
        if (this.#retired) this.#stop()
      }
    }
  }

  /** Stop each task past its clock: waiting longer than the queue allows, or running past timeMs plus the grace. */
  readonly #sweep = (): void => {
    const now = process.hrtime.bigint()
    for (const flight of this.#inFlight) {
      if (flight.stopped !== undefined) continue
      const began = Atomics.load(this.#times, flight.slot)
      if (began > 0n) {
        if (now - began <= flight.limitNs) continue
        flight.stopped = { by: 'time', usedMs: Number((now - began) / NS_PER_MS) }
      } else {
        if (now - flight.submitted <= this.#queueNs) continue
        flight.stopped = { by: 'queue' }
      }
      flight.cancel.abort(new Error(flight.stopped.by === 'time' ? 'the evaluation ran past its hard time limit' : 'no worker thread took the evaluation in time'))
    }
  }

  /** The timeMs budget of explicit documents (the hard limit's base). */
  get explicitTimeMs(): number {
    return this.#timeMs
  }

  /** Whether the set these threads serve was replaced: they stop once no task is in flight. */
  #retired = false

  /**
   * Let every task given to the pool finish, then stop the threads; settles nothing anyone awaits,
   * so never rejects. Waited for here, task by task, not by the pool's own close: that waits only
   * for tasks a thread has taken, and ends one still queued for a thread that is starting.
   */
  retire(): void {
    this.#retired = true
    if (this.#inFlight.size === 0) this.#stop()
  }

  #stop(): void {
    this.#pool
      .close()
      .catch(() => this.#pool.destroy())
      .catch(() => {})
  }

  /** Stop the threads now. */
  destroy(): Promise<void> {
    return this.#pool.destroy()
  }
}
