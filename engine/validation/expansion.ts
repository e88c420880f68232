// What a document will cost, seen before it runs: the static expansion bound, and whether it prints.
// The static expansion bound of a document: how many mapping levels one evaluation enters before
// any input decides anything (every `each` counted as a single element, every `switch` as its
// largest case, every variant and combinator element as evaluated). A mapping that names another
// twice, twenty levels deep, expands to two million levels on any input at all; this bound shows
// it before a single step runs. References that recurse depend on the input, so a document that
// reaches a reference cycle has no static bound.
import { MAX_EVALUATION_DEPTH } from '../budget.js'
import { documentForm } from '../document.js'
import { escapeToken } from '../pointer.js'
import { isObject, truthy } from '../values.js'

/** Past this the count stops growing: it is already beyond every budget. */
const SATURATED = Number.MAX_SAFE_INTEGER

const add = (a: number, b: number): number => Math.min(SATURATED, a + b)

class Unbounded extends Error {}

/**
 * The static number of mapping levels one evaluation of `document` enters, or undefined when it
 * depends on the input (a reference cycle). `lookup` resolves a mapping id to its document.
 */
export function staticExpansion(document: unknown, lookup: (id: string) => unknown): number | undefined {
  const memo = new Map<string, number>()
  const open = new Set<string>()

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

  /** The levels a `mapping` / `each` value enters below its own level. */
  const pairingsOf = (value: unknown): number => {
    if (typeof value === 'string') return named(value, true)
    if (!isObject(value)) return 0
    if (truthy(value.$ref)) return typeof value.$ref === 'string' ? named(value.$ref, true) : 0
    if (documentForm(value) !== 'pairings') {
      const inner = truthy(value.mapping) ? value.mapping : truthy(value.each) ? value.each : undefined
      let levels = inherited(value)
      if (inner !== undefined) levels = add(levels, pairingsOf(inner))
      return levels
    }
    let levels = 0
    for (const right of Object.values(value)) levels = add(levels, descriptor(right))
    return levels
  }

  /** `$extend` ancestors contribute their pairings (an upper bound: overridden ones count too). */
  const inherited = (value: Record<string, unknown>): number => {
    const extend = value.$extend
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
    if (!isObject(value)) return 0
    if (truthy(value.$ref)) return typeof value.$ref === 'string' ? named(value.$ref, false) : 0
    let levels = 0
    for (const keyword of ['first', 'last', 'all'] as const) {
      if (Array.isArray(value[keyword])) levels = add(levels, descriptor(value[keyword]))
    }
    const cases = isObject(value.switch) && isObject(value.switch.cases) ? Object.values(value.switch.cases) : []
    levels = add(levels, cases.reduce<number>((most, branch) => Math.max(most, descriptor(branch)), 0))
    const structural = truthy(value.mapping) ? value.mapping : truthy(value.each) ? value.each : undefined
    if (structural !== undefined || truthy(value.$extend)) {
      levels = add(levels, add(1, add(inherited(value), structural === undefined ? 0 : pairingsOf(structural))))
    }
    return levels
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

/** Keywords whose operands are data, not descriptors: a `stdout` key inside them is inert. */
const DATA_OPERANDS = new Set(['constant', 'default', 'enum', 'examples', 'find', 'transform'])

/** The pointer of the first truthy `stdout` keyword of a document, or undefined. */
export function stdoutAt(document: object): string | undefined {
  const work: Array<[object, string]> = [[document, '']]
  while (work.length > 0) {
    const [value, pointer] = work.pop()!
    if (!Array.isArray(value) && Object.hasOwn(value, 'stdout') && (value as Record<string, unknown>).stdout) return `${pointer}/stdout`
    for (const key of Object.keys(value)) {
      const member: unknown = (value as Record<string, unknown>)[key]
      if (member === null || typeof member !== 'object' || (!Array.isArray(value) && DATA_OPERANDS.has(key))) continue
      work.push([member, `${pointer}/${escapeToken(key)}`])
    }
  }
  return undefined
}
