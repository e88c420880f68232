// Work on the main thread that grows with a caller's input runs in slices, with turns of the event
// loop between them (docs/reliability.md). This module is the one scheduler of those slices, for
// every kind of such work: a stream's lines, a long body's scan, a large output's print, a large
// upstream body's assembly, upstream calls starting. Two rules:
//
// 1. A slice runs at most SLICE_MS (or what its caller asks), then the loop gets a turn.
// 2. While other requests keep arriving (BUSY_ARRIVALS or more within the last BUSY_WINDOW_MS:
//    the server reports each arrival, `noteArrival`), sliced work as a whole takes
//    at most SHARE of the loop's time: after a slice it waits, with a timer, long enough for the
//    rest of the loop to have the other part, and stops waiting early once fewer arrive than
//    that. With nothing else
//    waiting it runs back to back: a stream alone goes at full speed, a stream beside a steady
//    load of interactive requests at a twentieth. (Time is not the signal: the kernel's socket work
//    runs outside any slice.) A slice is charged with everything its piece does on the thread,
//    writing its output included; only its waits are not its.
//
// Fairness is per process, not per piece of work: sixty streams share one twentieth, they do not
// each take one.
//
// The same rule holds between threads: work moved off the main thread (isolated evaluations,
// upstream bodies parsed in threads, mapping sets loaded in one) must not take the CPU back from
// it. On a machine whose cores are all busy, the kernel shares them evenly among runnable threads,
// so a few threads parsing hostile bodies would leave the main thread, and with it every other
// caller and /health, a fraction of a core. Helper threads therefore lower their own scheduling
// priority (`lowerHelperPriority`): they run as fast as ever on an idle core and give way to the
// main thread on a busy one.
import { getPriority, setPriority } from 'node:os'
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises'

/** Time (ms) a slice may run before the event loop gets a turn. */
export const SLICE_MS = 8

/**
 * The part of the loop's time sliced work takes while other work is waiting. Its real cost to the
 * others is about twice its share: what it leaves behind (garbage to collect, sockets to serve) is
 * paid in their turns. Measured in bench:soak with eight streams of a million lines beside the
 * legitimate load: a tenth cost that load 21% of its throughput, a twentieth 7%.
 */
export const SHARE = 0.05

/**
 * Others are waiting when at least this many requests arrived within the last BUSY_WINDOW_MS (4 in
 * 20 ms): a trickle (/health polled every 10 ms) is not a load.
 */
const BUSY_ARRIVALS = 4

/**
 * The stretch (ms) arrivals are counted over. Long enough to outlast a client's own pauses (a load
 * generator collecting its garbage): judged by whether any request came within 2 ms, bench:soak's
 * streams found a quiet stretch in a saturating load 30 to 60 times a second and took 6–10% of the
 * loop instead of SHARE; judged by no request within 20 ms, a /health poll every 10 ms held twelve
 * upstream bodies being assembled at their share until their evaluation ran out of time.
 */
const BUSY_WINDOW_MS = 20

/** While waiting for the rest of the share, the rate is judged again every this many ms. */
const WAIT_STEP_MS = 2

/** Requests the server has received, process-wide (`noteArrival`). */
let arrivals = 0
/** While others keep arriving: the earliest time the next slice may start. */
let nextSliceAt = -Infinity
/**
 * When the last BUSY_ARRIVALS requests arrived, a ring: the oldest of them at `oldestArrival`. (A
 * count of arrivals against the time it was last read, which this replaced, averaged over however
 * long ago that was: a burst seconds before a quiet spell counted as a load now.)
 */
const lastArrivals = new Float64Array(BUSY_ARRIVALS).fill(-Infinity)
let oldestArrival = 0

/** Whether BUSY_ARRIVALS requests or more arrived within the last BUSY_WINDOW_MS. */
function busy(): boolean {
  return performance.now() - lastArrivals[oldestArrival]! <= BUSY_WINDOW_MS
}

/** The server received a request (its 'request' event): the signal that others want the loop. */
export function noteArrival(): void {
  arrivals++
  lastArrivals[oldestArrival] = performance.now()
  oldestArrival = (oldestArrival + 1) % BUSY_ARRIVALS
}

/**
 * One piece of sliced work: `due()` says when its slice has run its time, `next()` ends the slice
 * and resolves when the next one may start.
 */
export class Slice {
  /** When the slice (or its latest stretch since a wait) began. */
  #start = performance.now()
  /** Time the slice ran before its latest wait. */
  #ran = 0

  constructor(readonly ms: number = SLICE_MS) {}

  /** Main-thread time (ms) the current slice has run: its stretches, not the waits between them. */
  elapsed(): number {
    return this.#ran + performance.now() - this.#start
  }

  /** Whether the current slice has run its time. */
  due(): boolean {
    return this.elapsed() >= this.ms
  }

  /** The work waits for something outside the thread (a read, a write, an answer): the wait is not the slice's time. */
  pause(): void {
    this.#ran += performance.now() - this.#start
  }

  /** The work goes on after a wait (`pause`). */
  resume(): void {
    this.#start = performance.now()
  }

  /** `promise`, awaited as a wait (`pause`, `resume`). */
  async wait<T>(promise: Promise<T>): Promise<T> {
    this.pause()
    try {
      return await promise
    } finally {
      this.resume()
    }
  }

  /** End the slice: give the loop a turn (and, while others wait, the rest of their share); a new slice starts on return. */
  async next(): Promise<void> {
    const end = performance.now()
    const ran = this.#ran + end - this.#start
    const before = arrivals
    await nextTurn()
    // A slice that ended in the loop's poll phase is back within the same turn, before the poll
    // that reads what arrived while it ran: one more turn reads it.
    if (arrivals === before) await nextTurn()
    if (busy()) {
      nextSliceAt = Math.max(nextSliceAt, end) + (ran * (1 - SHARE)) / SHARE
      for (let now = performance.now(); now + 1 <= nextSliceAt; now = performance.now()) {
        await sleep(Math.min(WAIT_STEP_MS, nextSliceAt - now))
        // Timers run before the poll that reads requests: another slice that held the loop
        // meanwhile left them unread, not absent. The turn's poll reads them.
        await nextTurn()
        if (!busy()) {
          // The load is gone: the loop is free again.
          nextSliceAt = -Infinity
          break
        }
      }
    }
    this.#ran = 0
    this.#start = performance.now()
  }
}

/** Upstream calls that may start in one turn of the event loop, process-wide. */
export const STARTS_PER_TURN = 64

let startsThisTurn = 0
let startsReset = false
const waitingStarts: Array<() => void> = []

function nextStartTurn(): void {
  startsThisTurn = 0
  let admitted = 0
  while (waitingStarts.length > 0 && admitted < STARTS_PER_TURN) {
    waitingStarts.shift()!()
    admitted++
  }
  startsThisTurn = admitted
  if (waitingStarts.length > 0) setImmediate(nextStartTurn)
  else startsReset = false
}

/**
 * Admission for something that starts work outside the loop's control (an upstream call): at
 * most STARTS_PER_TURN start in one turn, the rest wait for later turns, in order. An `each` over
 * a thousand items starts its calls over many turns, and a run that stops meanwhile (its budget
 * tripped, its client left) never starts the ones still waiting. Undefined when admitted at once.
 */
export function admitStart(): Promise<void> | undefined {
  if (!startsReset) {
    startsReset = true
    setImmediate(nextStartTurn)
  }
  if (waitingStarts.length === 0 && startsThisTurn < STARTS_PER_TURN) {
    startsThisTurn++
    return undefined
  }
  return new Promise((resolve) => waitingStarts.push(resolve))
}

/**
 * How much lower (in nice steps) helper threads run than the thread that started them: the
 * lowest priority (19, from the usual 0), where a thread gets about 1.5% of a core the main thread
 * also wants (10 steps left it about 10%: the soak saw the main thread wait for its own workers).
 */
export const HELPER_NICE_STEPS = 19

/**
 * Lower the calling thread's scheduling priority by HELPER_NICE_STEPS (called first thing in each
 * worker thread of the service). Linux keeps a nice value per thread, and a new thread inherits
 * its creator's, so the step is relative to however the service itself was started. Lowering
 * needs no privilege; where the system has no per-thread priority the call changes nothing it
 * should not (on other systems it would lower the process: the call is skipped there).
 */
export function lowerHelperPriority(): void {
  if (process.platform === 'linux') lowerPriority(0)
}

/**
 * Lower thread (or, off Linux, process) `id` by HELPER_NICE_STEPS, at most to 19; 0 is the caller.
 * A thread that ended meanwhile, or a sandbox that forbids it, keeps its priority.
 */
export function lowerPriority(id: number): void {
  try {
    setPriority(id, Math.min(19, getPriority(id) + HELPER_NICE_STEPS))
  } catch {
    // Left as it is.
  }
}
