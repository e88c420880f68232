// What a document will cost, seen before it runs: the static expansion bound, and whether it prints.
// The static expansion bound of a document: how many mapping levels one evaluation enters before
// any input decides anything (every `each` counted as a single element, every `switch` as its
// largest case, every variant and combinator element as evaluated). A mapping that names another
// twice, twenty levels deep, expands to two million levels on any input at all; this bound shows
// it before a single step runs. References that recurse depend on the input, so a document that
// reaches a reference cycle has no static bound.
// Which documents a descriptor holds, and how they count, its keywords say (record.ts `Children`):
// every descriptor they read counts, of alternatives only the largest, and a pairing value or
// ancestry makes the descriptor a level of its own.
import { MAX_EVALUATION_DEPTH } from '../budget.js'
import { documentForm, entryOf, idOf, membersOf, pairingValueForm } from '../document.js'
import { escapeToken } from '../pointer.js'
import { stage, visitChildren, visiting } from '../keywords/index.js'
import { walkDocument } from '../keywords/walk.js'
import { complete, STEPS_PER_YIELD, type Steps } from '../steps.js'
import { isObject, keysOf, truthy } from '../values.js'

/** Past this the count stops growing: it is already beyond every budget. */
const SATURATED = Number.MAX_SAFE_INTEGER

const add = (a: number, b: number): number => Math.min(SATURATED, a + b)

class Unbounded extends Error {}

/**
 * How many keyword objects the bound follows into one another at once (through names and nested
 * descriptors alike). A chain of names nested past it is stopped by the depth budget at run time
 * anyway; counting it here would only run the walk out of stack.
 */
const MAX_STATIC_NESTING = 512

/**
 * The static number of mapping levels one evaluation of `document` enters, or undefined when it
 * depends on the input (a reference cycle). `lookup` resolves a mapping id to its document.
 */
export function staticExpansion(document: unknown, lookup: (id: string) => unknown): number | undefined {
  return complete(expanding(document, lookup))
}

/** What a keyword object's keywords hold, by how it counts (record.ts `Parts`). */
type Held = 'descriptor' | 'alternative' | 'pairings' | 'ancestry' | 'reference'

/** `staticExpansion` step by step (engine/steps.ts): it yields between pairings. */
export function * expanding(document: unknown, lookup: (id: string) => unknown): Steps<number | undefined> {
  const memo = new Map<string, number>()
  const open = new Set<string>()
  let nesting = 0
  let steps = 0

  function * named(id: string, asPairings: boolean): Steps<number> {
    const found = lookup(id)
    if (!isObject(found)) return 0
    const key = `${asPairings ? 'p' : 'd'}${id}`
    const known = memo.get(key)
    if (known !== undefined) return known
    // A cycle recurses as long as the input does; a chain longer than evaluation may nest is
    // stopped by the depth budget at run time. Neither has a static bound.
    if (open.has(key) || open.size >= MAX_EVALUATION_DEPTH) throw new Unbounded()
    open.add(key)
    const levels = asPairings ? yield * pairingsOf(found) : yield * descriptor(found)
    open.delete(key)
    memo.set(key, levels)
    return levels
  }

  /**
   * The levels a keyword object enters through the documents its keywords hold. As a pairing value
   * (`asPairings`) it gives only pairings: its pairing value and ancestry, nothing it reads, no level
   * of its own; a keyword standing for the whole descriptor names what it stands for.
   */
  function * through(value: Record<string, unknown>, asPairings: boolean): Steps<number> {
    if (nesting >= MAX_STATIC_NESTING) throw new Unbounded()
    nesting++
    try {
      let levels = 0
      let largest = 0
      let level = false
      // Named first, in their order, then counted (a generator cannot yield from inside the callbacks).
      const children: Array<[Held, unknown]> = (held = [])
      visitChildren(value, holding, true)
      if (children.length === 0) return 0
      for (const [kind, child] of children) {
        switch (kind) {
          case 'descriptor':
            if (!asPairings) levels = add(levels, read(child) ?? (isObject(child) ? yield * through(child, false) : yield * descriptor(child)))
            break
          case 'alternative':
            if (!asPairings) largest = Math.max(largest, read(child) ?? (isObject(child) ? yield * through(child, false) : yield * descriptor(child)))
            break
          case 'pairings':
            level = true
            levels = add(levels, yield * pairingsOf(child))
            break
          case 'ancestry':
            level = true
            levels = add(levels, yield * inherited(child))
            break
          case 'reference':
            levels = add(levels, typeof child === 'string' ? yield * named(child, asPairings) : 0)
        }
      }
      return add(add(levels, largest), level && !asPairings ? 1 : 0)
    } finally {
      nesting--
    }
  }

  /** What the keywords of the keyword object being counted hold (`through`). */
  let held: Array<[Held, unknown]> = []
  const holding = visiting({
    descriptor: (child) => held.push(['descriptor', child]),
    alternative: (child) => held.push(['alternative', child]),
    pairings: (child) => held.push(['pairings', child]),
    ancestry: (ids) => held.push(['ancestry', ids]),
    reference: (id) => held.push(['reference', id]),
  })

  /**
   * The levels a descriptor enters, when they are known without a walk (a pointer, a relative
   * reference, no descriptor at all); undefined when `descriptor` must walk it.
   */
  const read = (value: unknown): number | undefined => {
    if (typeof value === 'string') return value.startsWith('/') || value.includes('../') ? 0 : undefined
    return value !== null && typeof value === 'object' ? undefined : 0
  }

  /** The levels a pairing value enters below its own level. */
  function * pairingsOf(value: unknown): Steps<number> {
    if (typeof value === 'string') return yield * named(value, true)
    if (!isObject(value)) return 0
    if (pairingValueForm(value) !== 'pairings') return yield * through(value, true)
    let levels = 0
    for (const key of keysOf(value)) {
      const right = value[key]
      // A pointer (the common right side) enters no level: no walk is made for it.
      levels = add(levels, read(right) ?? (isObject(right) ? yield * through(right, false) : yield * descriptor(right)))
      if (++steps % STEPS_PER_YIELD === 0) yield
    }
    return levels
  }

  /** `$extend` ancestors contribute their pairings (an upper bound: overridden ones count too). */
  function * inherited(extend: unknown): Steps<number> {
    const ids = typeof extend === 'string' ? [extend] : Array.isArray(extend) ? extend : []
    let levels = 0
    for (const id of ids) if (typeof id === 'string') levels = add(levels, yield * named(id, true))
    return levels
  }

  /** The levels a descriptor in a value position enters. */
  function * descriptor(value: unknown): Steps<number> {
    if (typeof value === 'string') return value.startsWith('/') || value.includes('../') ? 0 : yield * named(value, false)
    if (Array.isArray(value)) {
      let levels = 0
      for (const element of value) levels = add(levels, read(element) ?? (yield * descriptor(element)))
      return levels
    }
    return isObject(value) ? yield * through(value, false) : 0
  }

  try {
    const members = membersOf(document)
    if (members !== undefined) {
      const entry = entryOf(members)
      const id = idOf(entry)
      return id !== undefined ? yield * named(id, false) : yield * descriptor(entry)
    }
    if (documentForm(document) === 'pairings') return add(1, yield * pairingsOf(document))
    return yield * descriptor(document)
  } catch (error) {
    if (error instanceof Unbounded) return undefined
    throw error
  }
}

/**
 * The pointer of the first truthy diagnostic keyword (`stdout`) of a document's keyword objects, or
 * undefined. Operands that are data hold no keyword objects, so a `stdout` key inside them is inert.
 */
export function stdoutAt(document: object): string | undefined {
  let found: string | undefined
  walkDocument(document, '', {
    keywordObject(value, pointer) {
      const printing = stage('diagnostic').find((record) => Object.hasOwn(value, record.name) && truthy(value[record.name]))
      if (printing !== undefined) found = `${pointer}/${escapeToken(printing.name)}`
      return found !== undefined
    },
  })
  return found
}
