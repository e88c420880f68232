// Throughput measurement: operations per second of a function, as the median of several timed
// rounds after a warm-up. The contenders of one workload are measured round-robin (round 1 of
// each, then round 2 of each, …), so drift in the machine's load falls on all of them alike.

/** One operation; a returned promise is awaited before the next one starts. */
export type Operation = () => unknown

export interface Timing {
  /** Minimum duration of one timed round, in seconds. */
  readonly seconds: number
  /** Warm-up before the first round, in seconds. */
  readonly warmup: number
  readonly rounds: number
}

/** The last result of every operation is kept here, so no call can be optimized away. */
export let sink: unknown

const gc = (globalThis as { gc?: () => void }).gc

/** Time between clock reads within a round: short enough not to overshoot, long enough to be cheap. */
const CHECK_MS = 5

/** Run `operation` for at least `seconds`; its rate in operations per second. */
export async function round(operation: Operation, seconds: number): Promise<number> {
  const budget = seconds * 1000
  let ops = 0
  let batch = 1
  const start = performance.now()
  let elapsed = 0
  while (elapsed < budget) {
    for (let i = 0; i < batch; i++) {
      const result = operation()
      sink = result instanceof Promise ? await result : result
    }
    ops += batch
    elapsed = performance.now() - start
    // Read the clock about every CHECK_MS, whatever one operation costs.
    const perOp = elapsed / ops
    batch = Math.max(1, Math.min(Math.floor(CHECK_MS / Math.max(perOp, 1e-6)), 1_000_000))
  }
  return ops / (elapsed / 1000)
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** Median operations per second of each named operation, measured round-robin. */
export async function compare<K extends string>(
  operations: Readonly<Record<K, Operation>>,
  timing: Timing
): Promise<Record<K, number>> {
  const names = Object.keys(operations) as K[]
  for (const name of names) {
    gc?.()
    await round(operations[name], timing.warmup)
  }
  const rates = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>
  for (let r = 0; r < timing.rounds; r++) {
    for (const name of names) {
      gc?.()
      rates[name].push(await round(operations[name], timing.seconds))
    }
  }
  return Object.fromEntries(names.map((name) => [name, median(rates[name])])) as Record<K, number>
}
