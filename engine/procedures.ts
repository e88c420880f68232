// The evaluation procedures of language.md §7: MAP over a level, the value dispatch of structural
// right sides, NEST and READ. They run synchronously until something returns a promise, and only
// then continue asynchronously, so a document that reaches no plugin never allocates one.
import { BudgetExceeded } from './budget.js'
import { Context, type Maybe, type Pairing, type Pairings, type Plan, type Print, type Put, type Slot } from './context.js'
import { fanOut } from './fan-out.js'
import { escapeToken, type Writer } from './pointer.js'

/** MAP (§7.1) of a plan in its parent context: SHIFT, then the level. */
export function mapPlan(plan: Plan, parent: Context): Maybe<object | null> {
  const context = new Context(parent.run, parent.source, parent.target, parent, -1, plan.sourcePath, plan.targetPath)
  return runLevel(plan, plan.pairings === null ? null : plan.pairings(context), context)
}

/** Steps 3–6 of MAP in an already shifted context: the level's own GET gives the pairings' scope. */
export function runLevel(plan: Plan, pairings: Pairings | null, context: Context): Maybe<object | null> {
  const scope = plan.get(context)
  if (scope instanceof Promise) return scope.then((settled) => runPairings(pairings, context, settled, plan.print))
  return runPairings(pairings, context, scope, plan.print)
}

/** A level without pairings (a name that resolves to none, a descriptor with neither mapping nor each). */
export const EMPTY_PAIRINGS: Pairings = Object.freeze({ list: Object.freeze([]), level: undefined, free: undefined, made: undefined, weight: 0, keyBytes: 0, reach: 0 })

/** A budget error passing through a pairing is placed there, unless an inner pairing placed it first. */
export function placed(error: unknown, pairing: Pairing): unknown {
  if (error instanceof BudgetExceeded && error.pointer === undefined) {
    const place = pairing.place
    error.locate(place === undefined ? '' : `${place.pointer}/${escapeToken(pairing.pointer)}`, place?.mapping)
  }
  return error
}

/**
 * Run a level's pairings in order against `scope`; null as soon as the shared error list is
 * non-empty. `print`: the level's diagnostics, run once its target is complete.
 */
export function runPairings(pairings: Pairings | null, context: Context, scope: unknown, print: Print | undefined): Maybe<object | null> {
  const run = context.run
  if (pairings === null) run.enterLevel(EMPTY_PAIRINGS)
  else {
    const list = pairings.list
    run.enterLevel(pairings)
    const free = pairings.free
    if (free !== undefined && !run.registry.shadowsPointers && !Array.isArray(context.target)) {
      // The generated level needs no Context: only the depth the one `withSource` makes is counted.
      let depth = context.depth
      let source = context.source
      if (scope !== undefined && scope !== source) {
        source = scope
        if (++depth > run.deepest) run.reached(depth)
      }
      if (free(run, source, context.target, depth) === null) return null
      if (print !== undefined) print(context)
      return context.target
    }
    const pairingContext = scope === undefined || scope === context.source ? context : context.withSource(scope)
    const level = pairings.level
    if (level !== undefined) {
      const stopped = level(context, pairingContext, print)
      if (stopped !== undefined) return stopped
      if (print !== undefined) print(context)
      return context.target
    }
    const errors = run.errors
    let i = 0
    try {
      for (; i < list.length; i++) {
        const pending = list[i]!.run(pairingContext)
        if (pending !== undefined) return finishAsync(pairings, context, pairingContext, i, pending, print)
        if (errors.length > 0) return null
      }
    } catch (error) {
      throw placed(error, list[i]!)
    }
  }
  if (print !== undefined) print(context)
  return context.target
}

/** The rest of a level once pairing `index` returned a promise: each later pairing in turn. */
export async function finishAsync(
  pairings: Pairings,
  context: Context,
  pairingContext: Context,
  index: number,
  pending: Promise<void>,
  print: Print | undefined
): Promise<object | null> {
  const list = pairings.list
  const run = context.run
  const errors = run.errors
  try {
    await pending
  } catch (error) {
    throw placed(error, list[index]!)
  }
  if (errors.length > 0) return null
  for (let i = index + 1; i < list.length; i++) {
    const pairing = list[i]!
    try {
      const next = pairing.run(pairingContext)
      if (next !== undefined) await next
    } catch (error) {
      throw placed(error, pairing)
    }
    if (errors.length > 0) return null
  }
  if (print !== undefined) print(context)
  return context.target
}

/**
 * The value dispatch of §7.2 for structural and switching right sides: the value to write (a fresh
 * object or array when there are pairings), or a promise of it. An array's elements fan out (§13).
 */
export function dispatch(value: unknown, pairings: Pairings | null, context: Context): Maybe<unknown> {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    if (pairings === null) return value.slice()
    const elements = value
    return fanOut(context.run, elements.length, (i) => nest(pairings, context, elements[i], i))
  }
  if (pairings === null) return value
  return nest(pairings, context, value, -1)
}

/** NEST (§7.5): map one object or array element into a fresh target. */
export function nest(pairings: Pairings, context: Context, element: unknown, index: number): Maybe<object | null> {
  const source = element === undefined ? context.source : element
  const run = context.run
  const free = pairings.free
  if (free !== undefined && !run.registry.shadowsPointers) {
    // As below, with the nested context's depth counted and no Context made.
    const depth = context.depth + 1
    if (depth > run.deepest) run.reached(depth)
    run.enterLevel(pairings)
    return pairings.made!(run, source, null, depth)
  }
  const nested = new Context(context.run, source, {}, context, index, index >= 0 ? '/' : undefined, undefined)
  return runPairings(pairings, nested, source, undefined)
}

/**
 * READ (§7.6): a structural descriptor is mapped (once, never fanned out) into a fresh target with
 * the optional source override; any other descriptor is evaluated in the caller's own context.
 */
export function read(slot: Slot, context: Context, override: unknown): Maybe<unknown> {
  const plan = slot(context)
  if (plan.structural) {
    const source = override === undefined ? context.source : override
    const shifted = new Context(context.run, source, {}, context, -1, plan.sourcePath, plan.targetPath)
    return runLevel(plan, plan.pairings!(shifted), shifted)
  }
  return plan.get(context)
}

/** READ every element (a fan-out, §13); a promise of the list when any element is asynchronous. */
export function readEach(slots: readonly Slot[], context: Context): Maybe<unknown[]> {
  return fanOut(context.run, slots.length, (i) => read(slots[i]!, context, undefined))
}

/** The first value of a list that is not undefined (variant lists, `first`). */
export function firstDefined(values: readonly unknown[]): unknown {
  for (const value of values) if (value !== undefined) return value
  return undefined
}

// SET for one pairing (§7.1 steps 4–5): the right side's value written at the left pointer. The
// compiler picks which of these a pairing runs; they are its whole run-time behaviour.

export type { Put } from './context.js'

/**
 * The write of one pairing: straight into the level's target object for one plain token, else
 * through the compiled writer. The level counted the pairing's value and key when it was entered
 * (Run.enterLevel); a write adds a string's text, or measures a container written by reference.
 */
export function putter(left: string, write: Writer, ownKey: string | undefined): Put {
  const throughWriter: Put = (context, value, fresh) => {
    if (value === undefined) return
    const run = context.run
    run.wrote(value, fresh)
    const refused = write(context.target, value, run)
    if (refused !== undefined) run.errors.push({ target: left, message: refused })
  }
  if (ownKey === undefined) return throughWriter
  const key = ownKey
  return (context, value, fresh) => {
    if (value === undefined) return
    const target = context.target
    if (Array.isArray(target)) return throughWriter(context, value, fresh)
    context.run.wrote(value, fresh)
    ;(target as Record<string, unknown>)[key] = value
  }
}

/** Put a value read or computed for the pairing (settled first when it is a promise). */
export function putValue(value: unknown, context: Context, put: Put): Promise<void> | undefined {
  if (value instanceof Promise) return value.then((settled) => put(context, settled, false))
  put(context, value, false)
  return undefined
}

/** A variant list: every element is READ; the earliest defined result is put. */
export function putFirstDefined(
  slots: readonly Slot[],
  context: Context,
  put: Put,
  /** Explain mode: told which element's value is put (its index, or null when none is defined). */
  chose?: (index: number | null) => void
): Promise<void> | undefined {
  const choose = (values: readonly unknown[]): void => {
    if (chose !== undefined) {
      const index = values.findIndex((value) => value !== undefined)
      chose(index < 0 ? null : index)
    }
    put(context, firstDefined(values), false)
  }
  const values = readEach(slots, context)
  if (values instanceof Promise) return values.then(choose)
  choose(values)
  return undefined
}

/** A right side's plan evaluated in the pairing's context and put: mapped when structural or dispatching. */
export function putPlan(plan: Plan, context: Context, put: Put): Promise<void> | undefined {
  if (plan.structural || plan.dispatches) {
    const shifted = new Context(context.run, context.source, context.target, context, -1, plan.sourcePath, plan.targetPath)
    const pairings = plan.pairings === null ? null : plan.pairings(shifted)
    const value = plan.get(shifted)
    if (value instanceof Promise) return value.then((settled) => putDispatched(shifted, settled, pairings, put))
    return putDispatched(shifted, value, pairings, put)
  }
  const scoped =
    plan.observesPaths && (plan.sourcePath !== undefined || plan.targetPath !== undefined)
      ? new Context(context.run, context.source, context.target, context, -1, plan.sourcePath, plan.targetPath)
      : context
  return putValue(plan.get(scoped), context, put)
}

function putDispatched(context: Context, value: unknown, pairings: Pairings | null, put: Put): Promise<void> | undefined {
  const out = dispatch(value, pairings, context)
  if (out instanceof Promise) return out.then((settled) => put(context, settled, pairings !== null))
  put(context, out, pairings !== null)
  return undefined
}
