// Structured concurrency for the work one pairing spawns (language.md §13): the elements of a
// structural right side over an array, of a variant list, of `first`/`last`/`all`. Their order is
// free, but their lifetime is not: no element is left running, and no rejection left unheard, once
// the fan-out has answered. A failure of one element ends the whole evaluation (§12.4), so it
// stops the run, which cancels the siblings still in flight, and the fan-out answers only when
// every element it started has settled.
import type { Maybe } from './context.js'
import type { Run } from './run.js'

/**
 * Start `count` elements in order and collect their values by index: synchronously when none is
 * asynchronous (a document without plugins never allocates a promise here), else a promise that
 * settles once all of them have. An element that throws synchronously stops the starting: with
 * nothing in flight the error is thrown as it is, otherwise the elements already started are
 * waited for first.
 */
export function fanOut<T>(run: Run, count: number, start: (index: number) => Maybe<T>): Maybe<T[]> {
  const values: Array<Maybe<T>> = []
  let pending = false
  for (let i = 0; i < count; i++) {
    let value: Maybe<T>
    try {
      value = start(i)
    } catch (error) {
      if (!pending) throw error
      run.stop(error)
      return gather(run, values)
    }
    if (value instanceof Promise) pending = true
    values.push(value)
  }
  return pending ? gather(run, values) : (values as T[])
}

/**
 * Every element observed and waited for. On failure the answer is the reason the run stopped,
 * not whichever rejection arrived here first: in nested fan-outs the failure that stopped the run
 * may still be on its way up (its own fan-out waiting for its siblings) when the cancellations it
 * caused reach this one.
 */
function gather<T>(run: Run, values: Array<Maybe<T>>): Promise<T[]> {
  return new Promise<T[]>((resolve, reject) => {
    let waiting = 1
    const settled = (): void => {
      if (--waiting > 0) return
      const halt = run.halted
      if (halt !== null) reject(halt.reason)
      else resolve(values as T[])
    }
    const fail = (error: unknown): void => {
      run.stop(error)
      settled()
    }
    for (let i = 0; i < values.length; i++) {
      const value = values[i]
      if (value instanceof Promise) {
        waiting++
        value.then((result: T) => {
          values[i] = result
          settled()
        }, fail)
      }
    }
    settled()
  })
}
