// Caller-authored work in worker threads (README "Isolation"): a pool of workers, each with its
// own engine over the same mappings and extensions, runs an evaluation under hard limits the
// event loop cannot give it: a wall clock after which the worker is terminated, and a heap after
// which V8 stops it. Whatever a document makes a library do (the regex engine, JSON.stringify,
// string building), the main thread keeps serving; a worker that dies is replaced.
import { MessageChannel, type MessagePort } from 'node:worker_threads'
import { Piscina } from 'piscina'
import type { MappingEntry } from '../config/mappings.js'
import type { IsolationConfig } from '../config/resolve.js'
import { Unavailable } from '../errors.js'
import type { StockSettings } from '../extensions/stock.js'
import type { EngineSettings, MapOutcome, MapRequest, Report } from './evaluation.js'

/** How a worker builds its extension surface: the stock one (from the environment it read), or a module's default export. */
export type ExtensionsSpec = { readonly module: string } | { readonly stock: StockSettings }

/** Everything a worker needs to build its engine: plain data (it crosses into the thread). */
export interface IsolationWorkerData {
  readonly entries: readonly MappingEntry[]
  readonly extensions: ExtensionsSpec
  readonly settings: EngineSettings
}

/** A task: an evaluation (POST /map), or a submitted document's validation and examples (POST /validate). */
export type Task =
  | { readonly kind: 'map'; readonly request: MapRequest; readonly identity: unknown; readonly stdout: boolean }
  | { readonly kind: 'validate'; readonly document: object; readonly mayEvaluate: boolean; readonly identity: unknown; readonly stdout: boolean }

/** A task as it crosses: `started` is told when a worker begins it, which starts its clock. */
export type IsolatedTask = Task & { readonly started: MessagePort }

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
  | ({ readonly ok: false; readonly failure: ShapedFailure } & TaskFacts)

/**
 * A failure an isolated task answered with: carries the status, code, message and body fields the
 * error handler sends; `facts` what the worker saw before it failed.
 */
export class IsolatedFailure extends Error {
  override readonly name = 'IsolatedFailure'
  readonly code: string
  readonly statusCode: number
  readonly extra: Record<string, unknown>
  readonly budget: string | undefined

  constructor(failure: ShapedFailure) {
    super(failure.message)
    this.code = failure.code
    this.statusCode = failure.status
    this.extra = failure.extra
    this.budget = failure.budget
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

/** How long a task may wait for a worker to begin it (a queue, a thread starting) before 503. */
const QUEUE_MS = 10_000

const WORKER = new URL(import.meta.url.endsWith('.ts') ? './isolation-worker.ts' : './isolation-worker.js', import.meta.url).href

export class IsolationPool {
  readonly #pool: Piscina<IsolatedTask, TaskAnswer>
  readonly #timeMs: number

  constructor(
    readonly config: IsolationConfig,
    data: IsolationWorkerData,
    warn: (message: string) => void
  ) {
    this.#timeMs = data.settings.limits.explicit.timeMs
    this.#pool = new Piscina({
      filename: WORKER,
      // Started on demand and kept warm while used: a service that never isolates pays no thread.
      minThreads: 0,
      maxThreads: config.threads,
      idleTimeout: 60_000,
      workerData: data,
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
   * plus the grace, the worker is terminated. Rejects with IsolatedFailure for a failure the
   * worker shaped or a hard limit, with Unavailable when no worker took it in time, and with the
   * cause for a client abort.
   */
  async run(task: Task, timeMs: number, signal?: AbortSignal): Promise<TaskAnswer> {
    const clock = new AbortController()
    const waiting = AbortSignal.timeout(QUEUE_MS)
    const { port1, port2 } = new MessageChannel()
    let began = 0
    let timer: NodeJS.Timeout | undefined
    port1.once('message', () => {
      began = performance.now()
      timer = setTimeout(() => clock.abort(), timeMs + this.config.graceMs)
      port1.close()
    })
    const signals = [clock.signal, waiting, ...(signal === undefined ? [] : [signal])]
    try {
      return await this.#pool.run({ ...task, started: port2 }, { signal: AbortSignal.any(signals), transferList: [port2] })
    } catch (error) {
      if (clock.signal.aborted) throw hardLimit('timeMs', timeMs, Math.round(performance.now() - began), 'milliseconds')
      if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw hardLimit('memory', this.config.memoryMb, this.config.memoryMb, 'MiB of heap')
      }
      if (waiting.aborted && began === 0) throw new Unavailable(`no worker thread took the evaluation within ${QUEUE_MS / 1000} s`)
      if (error instanceof Error && error.message === 'Task queue is at limit') throw new Unavailable('every worker thread is busy and the queue is full')
      throw error
    } finally {
      clearTimeout(timer)
      port1.close()
    }
  }

  /** The timeMs budget of explicit documents (the hard limit's base). */
  get explicitTimeMs(): number {
    return this.#timeMs
  }

  /** Let running tasks finish, then stop the threads; settles nothing anyone awaits, so never rejects. */
  retire(): void {
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
