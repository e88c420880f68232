// The bytes of upstream bodies one thread holds at once (request-plugin.md §2 `maxBytesInFlight`).
// `maxResponseBytes` bounds one body; without a bound on all of them, twelve 10 MB bodies read at
// once (an `each` over twelve calls, or twelve callers) held a gigabyte between their bytes, the
// parse and the value. A call takes its body's bytes from the budget as they arrive (the declared
// length at once, when there is one) and gives them back once its envelope is built. A call that
// finds the budget spent waits in line, first come first served: one that holds nothing yet (a
// declared length asked for whole) as long as its deadline allows; one that already holds part of
// its body (an undeclared length growing) at most HOLDING_WAIT_MS, so calls that each hold part
// of the budget cannot wait for one another for ever. A wait that ends without room fails with
// InFlightLimitError, 503: the service is busy, not the request wrong, and a retry later can
// succeed. Plugin instances with the same limit share one budget, so the bound holds per thread
// whatever the number of instances.

/** How long a call that already holds bytes waits for more before it fails. */
export const HOLDING_WAIT_MS = 1000

/** Bytes are taken in steps of at least this much, so a body in small chunks does not take them one by one. */
const STEP = 64 * 1024

/**
 * The budget was spent for longer than a call could wait: nothing more of its body is read. It
 * declares its answer (http.md §3): 503 `UpstreamBusy`, since the request may succeed later.
 */
export class InFlightLimitError extends Error {
  override readonly name = 'InFlightLimitError'
  readonly code = 'E_IN_FLIGHT_LIMIT'
  readonly statusCode = 503
  readonly responseCode = 'UpstreamBusy'

  constructor(
    readonly maxBytesInFlight: number,
    cause?: unknown
  ) {
    super(`Upstream bodies in flight would exceed ${maxBytesInFlight} bytes (maxBytesInFlight); retry later`, cause === undefined ? undefined : { cause })
  }
}

interface Waiter {
  readonly bytes: number
  readonly grant: () => void
}

/** One budget: the bytes held, and the calls waiting for room, in order. */
export class ByteBudget {
  private held = 0
  private readonly waiting: Waiter[] = []

  constructor(readonly limit: number) {}

  /** The bytes held now (tests, metrics). */
  get inFlight(): number {
    return this.held
  }

  /** Take `bytes` now if they fit and nobody waits before; false otherwise. */
  tryTake(bytes: number): boolean {
    if (this.waiting.length > 0 || this.held + bytes > this.limit) return false
    this.held += bytes
    return true
  }

  /**
   * Take `bytes`, waiting in line until `signal` aborts (the call's deadline) or, given `waitMs`,
   * that long at most; either end fails with InFlightLimitError (the abort reason as its cause).
   */
  async take(bytes: number, signal: AbortSignal, waitMs?: number): Promise<void> {
    if (this.tryTake(bytes)) return
    signal.throwIfAborted()
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        bytes,
        grant: () => {
          settle()
          resolve()
        },
      }
      const giveUp = (reason: unknown): void => {
        const at = this.waiting.indexOf(waiter)
        if (at !== -1) this.waiting.splice(at, 1)
        settle()
        reject(reason)
        // The calls behind this one may fit now.
        this.wake()
      }
      const timer = waitMs === undefined ? undefined : setTimeout(() => giveUp(new InFlightLimitError(this.limit)), waitMs)
      const onAbort = (): void => giveUp(new InFlightLimitError(this.limit, signal.reason))
      const settle = (): void => {
        if (timer !== undefined) clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(waiter)
    })
  }

  /** Give bytes back, and let waiting calls in while they fit, in order. */
  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes)
    this.wake()
  }

  private wake(): void {
    while (this.waiting.length > 0 && this.held + this.waiting[0]!.bytes <= this.limit) {
      const next = this.waiting.shift()!
      this.held += next.bytes
      next.grant()
    }
  }
}

const budgets = new Map<number, ByteBudget>()

/** The budget of this thread for a limit, shared by every plugin instance built with it. */
export function budgetFor(limit: number): ByteBudget {
  let budget = budgets.get(limit)
  if (budget === undefined) {
    budget = new ByteBudget(limit)
    budgets.set(limit, budget)
  }
  return budget
}

/** What one call holds of a budget: grown as its body arrives, given back once at the end. */
export class Lease {
  private held = 0

  constructor(
    private readonly budget: ByteBudget,
    private readonly signal: AbortSignal
  ) {}

  /** Make sure the call holds at least `total` bytes; synchronous (undefined) when they fit at once. */
  cover(total: number): Promise<void> | undefined {
    if (total <= this.held) return undefined
    // A step beyond what is needed, but never past the limit (a body of exactly the limit fits).
    const need = total - this.held
    const step = Math.min(Math.max(need, STEP), this.budget.limit - this.held)
    const bytes = Math.max(need, step)
    if (this.budget.tryTake(bytes)) {
      this.held += bytes
      return undefined
    }
    return this.budget.take(bytes, this.signal, this.held > 0 ? HOLDING_WAIT_MS : undefined).then(() => {
      this.held += bytes
    })
  }

  /** Give everything back (idempotent). */
  release(): void {
    const bytes = this.held
    this.held = 0
    if (bytes > 0) this.budget.give(bytes)
  }
}
