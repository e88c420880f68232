// Work that may stop between its steps (issue 30): registering and validating a mapping set whose
// one member holds a hundred thousand pairings took seconds of one synchronous turn. The walks that
// grow with a document (copying it, flattening its ancestry, placing and compiling its pairing
// maps, validating it, bounding its expansion) are written once, as generators that yield between
// small steps (a pairing, a member of a container). The synchronous API runs them through to the
// end (`complete`); a hot reload or a start-up runs them in slices with turns of the event loop
// between (`inSlices`, engine/slices.ts `Slice`). Both run the same code, so both give the same
// result: the slices change when the work runs, never what it does.
import { Slice } from './slices.js'

/** A walk that yields between steps and returns its result at the end. */
export type Steps<T> = Generator<void, T, undefined>

/**
 * What a sliced run asks of its scheduler: `Slice` of engine/slices.ts, or anything that says when
 * a slice has run its time and waits for the next.
 */
export interface Slicing {
  due(): boolean
  next(): Promise<void>
}

/** Run `steps` through to the end, in this turn. */
export function complete<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
  }
}

/** Run `steps` through to the end in slices: whenever `slice` has run its time, the event loop gets a turn. */
export async function inSlices<T>(steps: Steps<T>, slice: Slicing = new Slice()): Promise<T> {
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
    if (slice.due()) await slice.next()
  }
}

/**
 * How many cheap steps (a string pairing checked, a scalar copied) a walk takes between yields:
 * a yield and the clock read behind `due()` cost about what one such step does.
 */
export const STEPS_PER_YIELD = 64
