// What `$extend` means (language.md §5.3): a registered mapping's ancestry flattened, each ancestor's
// pairings merged under its own, once per mapping whichever member asks. The keyword's record is
// extend.ts beside this; the registry (engine/registry.ts) flattens every registration batch
// through here, and validation checks an ancestry the same way (REG-3).
import { idOf } from '../../document-id.js'
import { DocumentError } from '../../errors.js'
import { complete, STEPS_PER_YIELD, type Steps } from '../../steps.js'
import { isObject, keysOf, rememberKeys, truthy } from '../../values.js'

/**
 * Most pairings flattening may write for one batch (every `$extend` member's merged pairings,
 * summed). A chain whose members each add a pairing flattens to a number of pairings that grows
 * with the square of its length; past this the ancestry is refused (REG-3) instead of built.
 */
export const MAX_FLATTENED_PAIRINGS = 100_000

/** The names of an `$extend` cycle's path a message shows: all of a short one, else the first and last half. */
const CYCLE_NAMES_SHOWN = 16

/**
 * A path of mapping names, kept as its first and last `CYCLE_NAMES_SHOWN` names and its length:
 * all a message shows, so a path costs the same however long it is.
 */
interface Path {
  readonly head: readonly string[]
  readonly tail: readonly string[]
  readonly length: number
}

/** The path of `length` names whose name at `m` is `at(m)`, summarized (`at` is asked only near the ends). */
function summarize(length: number, at: (m: number) => string): Path {
  const head: string[] = []
  const tail: string[] = []
  for (let m = 0; m < Math.min(length, CYCLE_NAMES_SHOWN); m++) head.push(at(m))
  for (let m = Math.max(0, length - CYCLE_NAMES_SHOWN); m < length; m++) tail.push(at(m))
  return { head, tail, length }
}

/** `names[from..]` followed by `path`, summarized. */
function prefixed(names: readonly string[], from: number, path: Path): Path {
  const own = names.length - from
  return summarize(own + path.length, (m) => {
    if (m < own) return names[from + m]!
    const k = m - own
    return k < path.head.length ? path.head[k]! : path.tail[k - (path.length - path.tail.length)]!
  })
}

function cycleMessage(path: Path): string {
  if (path.length <= CYCLE_NAMES_SHOWN) return `$extend cycle: ${path.head.join(' → ')}`
  const half = CYCLE_NAMES_SHOWN / 2
  return `$extend cycle: ${path.head.slice(0, half).join(' → ')} → … (${path.length - CYCLE_NAMES_SHOWN} more) → ${path.tail.slice(-half).join(' → ')}`
}

/** Why an ancestry does not flatten: a message, or the cycle path from the mapping that failed. */
type Failure = { readonly message: string; readonly cycle?: undefined } | { readonly message?: undefined; readonly cycle: Path }

const failureMessage = (failure: Failure): string => failure.message ?? cycleMessage(failure.cycle!)

/** One mapping being flattened: its ancestors' ids, the next to resolve, and those resolved. */
interface Frame {
  readonly node: Record<string, unknown>
  readonly self: string
  readonly ids: readonly string[]
  next: number
  readonly ancestors: Record<string, unknown>[]
}

const selfOf = (descriptor: Record<string, unknown>): string => (typeof descriptor.$id === 'string' ? descriptor.$id : '(anonymous mapping)')

const isAncestorId = (id: unknown): boolean => typeof id === 'string' && id !== ''

/**
 * FLATTEN (§5.3, decisions 7 and 8) for any number of mappings resolved against one `lookup`:
 * every mapping is flattened once, whether it succeeds or fails, so a batch costs what its members
 * and the pairings written hold, whatever the shape of its ancestry (long chains included: the walk
 * keeps its own stack). Unknown ancestors, cycles, empty lists, ancestors without pairings and an
 * ancestry that writes more than `limit` pairings fail with a `DocumentError`.
 */
export class Ancestry {
  private readonly done = new Map<object, Record<string, unknown>>()
  private readonly failed = new Map<object, Failure>()
  private written = 0

  constructor(
    private readonly lookup: (id: string) => unknown,
    private readonly limit = MAX_FLATTENED_PAIRINGS
  ) {}

  /** Why `descriptor` does not flatten (named `self` in messages), or undefined when it does. */
  problem(descriptor: Record<string, unknown>, self = selfOf(descriptor)): string | undefined {
    const failure = complete(this.resolving(descriptor, self))
    return failure === undefined ? undefined : failureMessage(failure)
  }

  /** `descriptor` with its `$extend` resolved (itself when it has none); throws a `DocumentError`. */
  flatten(descriptor: Record<string, unknown>, self = selfOf(descriptor)): Record<string, unknown> {
    return complete(this.flattening(descriptor, self))
  }

  /** `flatten` step by step (engine/steps.ts): it yields between the pairings it merges. */
  * flattening(descriptor: Record<string, unknown>, self = selfOf(descriptor)): Steps<Record<string, unknown>> {
    const failure = yield * this.resolving(descriptor, self)
    if (failure !== undefined) throw new DocumentError(failureMessage(failure))
    return this.done.get(descriptor) ?? descriptor
  }

  /** Flatten `root` and every ancestor it needs, depth first in `$extend` order; its failure, if any. */
  private * resolving(root: Record<string, unknown>, rootSelf: string): Steps<Failure | undefined> {
    if (!truthy(root.$extend) || this.done.has(root)) return undefined
    const known = this.failed.get(root)
    if (known !== undefined) return known
    const stack: Frame[] = []
    // The index on the stack of each mapping name being flattened (a name met again is a cycle).
    const open = new Map<string, number>()
    const push = (node: Record<string, unknown>, self: string): Failure | undefined => {
      const extend = node.$extend
      const ids = typeof extend === 'string' ? [extend] : extend
      const valid = Array.isArray(ids) && ids.length > 0 && ids.every(isAncestorId)
      stack.push({ node, self, ids: valid ? (ids as string[]) : [], next: 0, ancestors: [] })
      if (!open.has(self)) open.set(self, stack.length - 1)
      return valid ? undefined : { message: `$extend of "${self}" must be a mapping id or a non-empty list of mapping ids` }
    }
    let failure = push(root, rootSelf)
    while (failure === undefined) {
      const frame = stack[stack.length - 1]!
      if (frame.next === frame.ids.length) {
        const result = yield * this.combining(frame)
        if (result === undefined) {
          failure = { message: `$extend ancestry of "${frame.self}" flattens to more than ${this.limit} pairings` }
          break
        }
        this.done.set(frame.node, result)
        stack.pop()
        if (open.get(frame.self) === stack.length) open.delete(frame.self)
        if (stack.length === 0) return undefined
        // An extended mapping's merged pairings are an object: it always has pairings.
        stack[stack.length - 1]!.ancestors.push(result)
        continue
      }
      const id = frame.ids[frame.next++]!
      const at = open.get(id)
      if (at !== undefined) {
        failure = this.cycle(stack, at)
        return failure
      }
      const found = this.lookup(id)
      if (!isObject(found)) {
        failure = { message: `Unknown mapping "${id}"` }
        break
      }
      let flat: Record<string, unknown> = found
      if (truthy(found.$extend)) {
        const done = this.done.get(found)
        if (done === undefined) {
          const before = this.failed.get(found)
          if (before !== undefined) {
            // The top goes on from its own name into the path `found` failed with.
            failure = before.cycle === undefined ? before : { cycle: prefixed([frame.self], 0, before.cycle) }
            break
          }
          failure = push(found, selfOf(found))
          continue
        }
        flat = done
      }
      if (!truthy(flat.mapping)) {
        failure = { message: `Mapping "${id}", an ancestor of "${frame.self}", has no pairings` }
        break
      }
      frame.ancestors.push(flat)
    }
    this.fail(stack, failure)
    return this.failed.get(root)
  }

  /**
   * Every mapping on the stack fails with `failure` (the top's): a message as it is; a cycle path
   * continued, for each one below the top, from its own name on.
   */
  private fail(stack: readonly Frame[], failure: Failure): void {
    const below = stack.slice(0, -1).map((frame) => frame.self)
    for (let i = stack.length - 1; i >= 0; i--) {
      const own = failure.cycle === undefined || i === stack.length - 1 ? failure : { cycle: prefixed(below, i, failure.cycle) }
      this.failed.set(stack[i]!.node, own)
    }
  }

  /**
   * The top of the stack names the mapping at `at` again: each mapping on the stack fails with the
   * cycle as seen from it (those below `at` lead into it; those from `at` on go round it once).
   * Returns the root's failure.
   */
  private cycle(stack: readonly Frame[], at: number): Failure {
    const names = stack.map((frame) => frame.self)
    for (let i = stack.length - 1; i >= 0; i--) {
      const tailLength = names.length - i
      const back = Math.max(i, at) - at + 1
      const path = summarize(tailLength + back, (m) => (m < tailLength ? names[i + m]! : names[at + m - tailLength]!))
      this.failed.set(stack[i]!.node, { cycle: path })
    }
    return this.failed.get(stack[0]!.node)!
  }

  /** A frame's flattened result, or undefined past the pairings limit. */
  private * combining(frame: Frame): Steps<Record<string, unknown> | undefined> {
    const { ancestors, node } = frame
    let accumulated = ancestors[0]!
    for (let i = 1; i < ancestors.length; i++) {
      const next = yield * this.merging(accumulated, ancestors[i]!)
      if (next === undefined) return undefined
      accumulated = next
    }
    const merged = yield * this.merging(accumulated, node)
    if (merged === undefined) return undefined
    const result: Record<string, unknown> = {}
    if (node.$id !== undefined) result.$id = node.$id
    let description = node.description
    for (let i = ancestors.length - 1; i >= 0 && description === undefined; i--) description = ancestors[i]!.description
    if (description !== undefined) result.description = description
    // Frozen as every registered document's parts are (they are shared by whoever reads the registry).
    result.mapping = Object.freeze(merged.mapping)
    if (merged.keys !== undefined) rememberKeys(result.mapping as object, merged.keys)
    return result
  }

  /**
   * MERGE (§5.3): lower's pairing keys then upper's, each kept at its last position, upper winning.
   * With the merged keys, in their order, when no key is an array index (which objects list first).
   */
  private * merging(lower: Record<string, unknown>, upper: Record<string, unknown>): Steps<{ mapping: Record<string, unknown>; keys?: string[] } | undefined> {
    const lowerMap = isObject(lower.mapping) ? lower.mapping : {}
    const upperMap = isObject(upper.mapping) ? upper.mapping : {}
    const merged: Record<string, unknown> = {}
    const lowerKeys = keysOf(lowerMap)
    const upperKeys = keysOf(upperMap)
    this.written += lowerKeys.length + upperKeys.length
    if (this.written > this.limit) return undefined
    const keys: string[] = []
    let indexed = false
    let steps = 0
    // A key both have stands where upper has it (its last position), with upper's value.
    for (const key of lowerKeys) {
      if (!Object.hasOwn(upperMap, key)) {
        Object.defineProperty(merged, key, { value: lowerMap[key], enumerable: true, writable: true, configurable: true })
        keys.push(key)
        indexed ||= isIndex(key)
      }
      if (++steps % STEPS_PER_YIELD === 0) yield
    }
    for (const key of upperKeys) {
      Object.defineProperty(merged, key, { value: upperMap[key], enumerable: true, writable: true, configurable: true })
      keys.push(key)
      indexed ||= isIndex(key)
      if (++steps % STEPS_PER_YIELD === 0) yield
    }
    return indexed ? { mapping: merged } : { mapping: merged, keys }
  }
}

/** Whether a key is an array index, which an object lists before its other keys whatever the order they were added in. */
const isIndex = (key: string): boolean => /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) < 4294967295

/**
 * FLATTEN one descriptor (§5.3): resolve `$extend` against `lookup`, every ancestor flattened
 * first. Unknown ancestors, cycles, empty lists and ancestors without pairings throw a `DocumentError`.
 */
export function flatten(descriptor: Record<string, unknown>, lookup: (id: string) => unknown): Record<string, unknown> {
  return new Ancestry(lookup).flatten(descriptor)
}

/**
 * Flatten one registration batch: every member is visible to every other, then to `base`. Returns
 * the flattened members by `$id`, in batch order (members without `$id` are not registered).
 */
export function flattenBatch(
  members: readonly Record<string, unknown>[],
  base: (id: string) => unknown
): Map<string, Record<string, unknown>> {
  return complete(flatteningBatch(members, base))
}

/** `flattenBatch` step by step (engine/steps.ts). */
export function * flatteningBatch(
  members: readonly Record<string, unknown>[],
  base: (id: string) => unknown
): Steps<Map<string, Record<string, unknown>>> {
  const raw = new Map<string, Record<string, unknown>>()
  for (const member of members) {
    const id = idOf(member)
    if (id !== undefined) raw.set(id, member)
  }
  const lookup = (id: string): unknown => (raw.has(id) ? raw.get(id) : base(id))
  const ancestry = new Ancestry(lookup)
  const flattened = new Map<string, Record<string, unknown>>()
  for (const [id, member] of raw) flattened.set(id, yield * ancestry.flattening(member))
  return flattened
}
