// Evaluation budgets: how much work, output, fan-out and time one evaluation may take. A mapping is
// data, but data can describe exponential work (a mapping that names another twice, twenty levels
// deep) or output far larger than its input; nothing but a budget tells such a document from a
// legitimate one while it runs. Synchronous evaluation cannot be interrupted by a timer, so the
// clock is read cooperatively on the step counter; plugin awaits race the same deadline.

/** Per-evaluation limits. Every field is optional; a missing one takes its default. */
export interface Limits {
  /** Work steps: pairings run, pipeline stages run, elements scanned or copied. */
  steps?: number
  /** Values written into the output (each scalar, object and array counts once). */
  outputValues?: number
  /** An estimate of the output's serialized size, in bytes (UTF-16 code units of text). */
  outputBytes?: number
  /**
   * Bytes of text and structure the keywords build while the evaluation runs (`as`, `template`,
   * `regexp_i`, `concat`, `switch` keys, `stdout`), counted as they are built, written or not.
   */
  builtBytes?: number
  /** Nesting of the output, and of any value the engine serializes (`as: json`, `stdout`), checked before it is printed. */
  outputDepth?: number
  /** Mapping levels entered: each `each` element, each `mapping` or mapping-reference expansion. */
  fanOut?: number
  /** Nested evaluation contexts (a self-referencing mapping recursing through its input). */
  depth?: number
  /** Wall-clock milliseconds, checked on the step counter and raced by plugin awaits. */
  timeMs?: number
  /** Plugin calls. */
  pluginCalls?: number
  /** The longest string a `pattern` is run on. */
  patternInput?: number
}

export type Budget = keyof Limits

/** The deepest nesting of evaluation contexts the engine allows at all (the host stack's bound). */
export const MAX_EVALUATION_DEPTH = 500

/**
 * The deepest value the engine lets itself print at all. JSON.stringify recurses on the host stack:
 * a few thousand levels overflow it, and the route that prints the output sits on a stack of its own.
 */
export const MAX_OUTPUT_DEPTH = 2_000

/** The engine's defaults: far above any legitimate bundled or benchmark mapping, well below harm. */
export const DEFAULT_LIMITS: Readonly<Required<Limits>> = Object.freeze({
  steps: 20_000_000,
  outputValues: 5_000_000,
  outputBytes: 128 * 1024 * 1024,
  builtBytes: 128 * 1024 * 1024,
  outputDepth: 1_000,
  fanOut: 2_000_000,
  depth: MAX_EVALUATION_DEPTH,
  timeMs: 10_000,
  pluginCalls: 1_000,
  patternInput: 100_000,
})

export const BUDGETS = Object.keys(DEFAULT_LIMITS) as readonly Budget[]

/** Complete a partial limits object over a base (defaults first), refusing nonsense values. */
export function resolveLimits(limits: Limits | undefined, base: Readonly<Required<Limits>> = DEFAULT_LIMITS): Readonly<Required<Limits>> {
  if (limits === undefined || limits === null) return base
  if (typeof limits !== 'object') throw new TypeError('limits must be an object')
  const out = { ...base }
  for (const key of Object.keys(limits)) {
    if (!Object.hasOwn(DEFAULT_LIMITS, key)) throw new TypeError(`limits.${key} is not a budget (budgets: ${BUDGETS.join(', ')})`)
    const value = (limits as Record<string, unknown>)[key]
    if (value === undefined) continue
    if (typeof value !== 'number' || !(value >= 0) || (value !== Infinity && !Number.isInteger(value))) {
      throw new TypeError(`limits.${key} must be a non-negative integer or Infinity`)
    }
    out[key as Budget] = value
  }
  if (out.depth > MAX_EVALUATION_DEPTH) throw new TypeError(`limits.depth cannot exceed ${MAX_EVALUATION_DEPTH}`)
  if (out.outputDepth > MAX_OUTPUT_DEPTH) throw new TypeError(`limits.outputDepth cannot exceed ${MAX_OUTPUT_DEPTH}`)
  return Object.freeze(out)
}

const UNITS: Readonly<Record<Budget, string>> = {
  steps: 'work steps',
  outputValues: 'output values',
  outputBytes: 'bytes of output',
  builtBytes: 'bytes built',
  outputDepth: 'levels of nesting',
  fanOut: 'mapping levels',
  depth: 'nested contexts',
  timeMs: 'milliseconds',
  pluginCalls: 'plugin calls',
  patternInput: 'characters of pattern input',
}

/**
 * An evaluation stopped because it passed one of its budgets. `pointer` names the innermost pairing
 * that was running, as a JSON Pointer into the document named by `mapping` (a registered `$id`) or,
 * without `mapping`, into the document that was evaluated.
 */
export class BudgetExceeded extends Error {
  override readonly name = 'BudgetExceeded'
  readonly code = 'BudgetExceeded'
  pointer: string | undefined = undefined
  mapping: string | undefined = undefined

  constructor(
    readonly budget: Budget,
    readonly limit: number,
    readonly used: number
  ) {
    super(`evaluation exceeded its ${budget} budget: ${used} of at most ${limit} ${UNITS[budget]}`)
  }

  /** The first (innermost) pairing to see the error is where it happened. */
  locate(pointer: string, mapping: string | undefined): void {
    if (this.pointer !== undefined) return
    this.pointer = pointer
    this.mapping = mapping
    this.message += ` (at ${mapping === undefined ? '' : `${mapping}#`}${pointer === '' ? '/' : pointer})`
  }

  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { code: this.code, budget: this.budget, limit: this.limit, used: this.used, pointer: this.pointer ?? '' }
    if (this.mapping !== undefined) out.mapping = this.mapping
    return out
  }
}

/** Serialized size of a scalar, estimated without building its text. */
function scalarBytes(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2
    case 'number':
      return 8
    case 'boolean':
      return 5
    default:
      return 4
  }
}

/** What `measure` found: values and estimated bytes of a container, and how deep it nests (the container itself is 1). */
export interface Size {
  values: number
  bytes: number
  depth: number
}

/**
 * Sizes already known, by container: what an extension counted as it built a value (the request
 * plugin's assembly of a large upstream body, extensions/request/pack.ts) spares `measure` a walk
 * of the whole value on the evaluation's thread. A noted container must not change afterwards: the
 * engine never writes into a value that came from outside it (it copies first, Run.markForeign).
 */
const knownSizes = new WeakMap<object, Size>()

/** Whether any size was ever noted: until then `measure` looks nothing up. */
let anyNoted = false

/**
 * Note the size of a container, counted by `measure`'s rules (a container built bottom-up may
 * measure each of its members and note it: `measure` of the whole then reads the members' sizes).
 * The value must not change afterwards.
 */
export function noteSize(value: object, size: Size): void {
  knownSizes.set(value, { values: size.values, bytes: size.bytes, depth: size.depth })
  anyNoted = true
}

/**
 * Values, estimated bytes and nesting of a container, walked iteratively; the walk stops as soon as
 * a count passes its allowance, so measuring never costs more than the budget it guards. A
 * container whose size was noted (`noteSize`), at the top or nested, is counted whole without a walk.
 */
export function measure(value: object, valuesAllowed: number, bytesAllowed: number, depthAllowed = Infinity): Size {
  const known = anyNoted ? knownSizes.get(value) : undefined
  if (known !== undefined) return { values: known.values, bytes: known.bytes, depth: known.depth }
  let values = 0
  let bytes = 0
  let deepest = 0
  const work: object[] = [value]
  const depths: number[] = [1]
  while (work.length > 0 && values <= valuesAllowed && bytes <= bytesAllowed) {
    const container = work.pop()!
    const depth = depths.pop()!
    const noted = anyNoted && depth > 1 ? knownSizes.get(container) : undefined
    if (noted !== undefined) {
      values += noted.values
      bytes += noted.bytes
      if (depth - 1 + noted.depth > deepest) {
        deepest = depth - 1 + noted.depth
        if (deepest > depthAllowed) break
      }
      continue
    }
    if (depth > deepest) {
      deepest = depth
      if (depth > depthAllowed) break
    }
    values++
    bytes += 2
    if (Array.isArray(container)) {
      for (let i = 0; i < container.length; i++) {
        const member: unknown = container[i]
        bytes += 1
        if (member !== null && typeof member === 'object') {
          work.push(member)
          depths.push(depth + 1)
        } else {
          values++
          bytes += scalarBytes(member)
        }
      }
    } else {
      for (const key of Object.keys(container)) {
        const member: unknown = (container as Record<string, unknown>)[key]
        if (member === undefined) continue
        bytes += key.length + 4
        if (member !== null && typeof member === 'object') {
          work.push(member)
          depths.push(depth + 1)
        } else {
          values++
          bytes += scalarBytes(member)
        }
      }
    }
    if (values > valuesAllowed || bytes > bytesAllowed) break
  }
  return { values, bytes, depth: deepest }
}

/**
 * Outputs estimated above this many bytes are printed a slice at a time (service/print.ts): one
 * JSON.stringify of them would hold the thread for more than a few milliseconds.
 */
export const LARGE_OUTPUT_BYTES = 256 * 1024

/** The estimated printed bytes of large envelopes (`noteLargeOutput`): only those are ever here. */
const largeOutputs = new WeakMap<object, number>()

/** An envelope whose evaluation counted `bytes` of output (more than LARGE_OUTPUT_BYTES). */
export function noteLargeOutput(envelope: object, bytes: number): void {
  largeOutputs.set(envelope, bytes)
}

/** The output bytes an evaluation counted for this envelope when they passed LARGE_OUTPUT_BYTES; else undefined. */
export function largeOutputBytes(envelope: object): number | undefined {
  return largeOutputs.get(envelope)
}

/**
 * One budget that several evaluations draw on in turn (the examples of one `/validate` request):
 * each starts from what the ones before it used, and the clock runs from its creation. Budgets of
 * a single value (`depth`, `patternInput`, `outputDepth`) stay per evaluation.
 */
export class SharedBudget {
  readonly limits: Readonly<Required<Limits>>
  steps = 0
  values = 0
  bytes = 0
  built = 0
  levels = 0
  pluginCalls = 0
  readonly started: number
  readonly deadline: number
  /** The trip that spent it: every later evaluation drawing on it fails at its first step. */
  tripped: BudgetExceeded | null = null

  constructor(limits?: Limits) {
    this.limits = resolveLimits(limits)
    this.started = performance.now()
    this.deadline = this.started + this.limits.timeMs
  }
}

/**
 * A rough weight of a value, counted only until it passes `limit` (then some total above it):
 * `perValue` for each value, a string's length, `perElement` for each array element, and a key's
 * length plus 4 for each object member. How large a run of members is before it is serialized
 * (the request plugin's batches, the sliced printer's runs), never a budget.
 */
export function weighUpTo(value: unknown, limit: number, perValue: number, perElement: number): number {
  let total = 0
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const next = stack.pop()
    total += perValue
    if (typeof next === 'string') {
      total += next.length
    } else if (next !== null && typeof next === 'object') {
      if (Array.isArray(next)) {
        for (let i = 0; i < next.length && total <= limit; i++) {
          total += perElement
          stack.push(next[i])
        }
      } else {
        for (const key of Object.keys(next)) {
          total += key.length + 4
          stack.push((next as Record<string, unknown>)[key])
          if (total > limit) break
        }
      }
    }
    if (total > limit) return total
  }
  return total
}
