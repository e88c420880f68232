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
import { documentForm } from '../document.js'
import { escapeToken } from '../pointer.js'
import { stage, visitChildren } from '../keywords/index.js'
import type { Children } from '../keywords/record.js'
import { walkDocument } from '../keywords/walk.js'
import { isObject, truthy } from '../values.js'

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
  const memo = new Map<string, number>()
  const open = new Set<string>()
  let nesting = 0

  const named = (id: string, asPairings: boolean): number => {
    const found = lookup(id)
    if (!isObject(found)) return 0
    const key = `${asPairings ? 'p' : 'd'}${id}`
    const known = memo.get(key)
    if (known !== undefined) return known
    // A cycle recurses as long as the input does; a chain longer than evaluation may nest is
    // stopped by the depth budget at run time. Neither has a static bound.
    if (open.has(key) || open.size >= MAX_EVALUATION_DEPTH) throw new Unbounded()
    open.add(key)
    const levels = asPairings ? pairingsOf(found) : descriptor(found)
    open.delete(key)
    memo.set(key, levels)
    return levels
  }

  /**
   * The levels a keyword object enters through the documents its keywords hold. As a pairing value
   * (`asPairings`) it gives only pairings: its pairing value and ancestry, nothing it reads, no level
   * of its own; a keyword standing for the whole descriptor names what it stands for.
   */
  const through = (value: Record<string, unknown>, asPairings: boolean): number => {
    if (nesting >= MAX_STATIC_NESTING) throw new Unbounded()
    nesting++
    try {
      return throughOnce(value, asPairings)
    } finally {
      nesting--
    }
  }

  const throughOnce = (value: Record<string, unknown>, asPairings: boolean): number => {
    let levels = 0
    let largest = 0
    let level = false
    const visit: Children = {
      descriptor(child) {
        if (!asPairings) levels = add(levels, descriptor(child))
      },
      alternative(child) {
        if (!asPairings) largest = Math.max(largest, descriptor(child))
      },
      pairings(child) {
        level = true
        levels = add(levels, pairingsOf(child))
      },
      ancestry(ids) {
        level = true
        levels = add(levels, inherited(ids))
      },
      reference(id) {
        levels = add(levels, typeof id === 'string' ? named(id, asPairings) : 0)
      },
    }
    visitChildren(value, visit, true)
    return add(add(levels, largest), level && !asPairings ? 1 : 0)
  }

  /** The levels a pairing value enters below its own level. */
  const pairingsOf = (value: unknown): number => {
    if (typeof value === 'string') return named(value, true)
    if (!isObject(value)) return 0
    if (documentForm(value) !== 'pairings') return through(value, true)
    let levels = 0
    for (const right of Object.values(value)) levels = add(levels, descriptor(right))
    return levels
  }

  /** `$extend` ancestors contribute their pairings (an upper bound: overridden ones count too). */
  const inherited = (extend: unknown): number => {
    const ids = typeof extend === 'string' ? [extend] : Array.isArray(extend) ? extend : []
    let levels = 0
    for (const id of ids) if (typeof id === 'string') levels = add(levels, named(id, true))
    return levels
  }

  /** The levels a descriptor in a value position enters. */
  const descriptor = (value: unknown): number => {
    if (typeof value === 'string') return value.startsWith('/') || value.includes('../') ? 0 : named(value, false)
    if (Array.isArray(value)) {
      let levels = 0
      for (const element of value) levels = add(levels, descriptor(element))
      return levels
    }
    return isObject(value) ? through(value, false) : 0
  }

  try {
    if (documentForm(document) === 'compound' && isObject((document as Record<string, unknown>).mappings)) {
      const members = Object.values((document as { mappings: Record<string, unknown> }).mappings)
      const entry = members[members.length - 1]
      return isObject(entry) && typeof entry.$id === 'string' && entry.$id !== '' ? named(entry.$id, false) : descriptor(entry)
    }
    if (documentForm(document) === 'pairings') return add(1, pairingsOf(document))
    return descriptor(document)
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
