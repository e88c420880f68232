// A mapping document walked through its keyword records: which of its objects are keyword objects
// and which are pairing maps is found by asking each keyword what its operand holds (record.ts
// `Children`), never by naming keywords. The compiler places pairing maps with it (for budget
// errors); the stdout check finds the descriptors that would print with it. Operands that are data
// (`constant`, `examples`, a plugin's options) hold no documents, so nothing inside them is visited.
import { documentForm, pairingValueForm } from '../document.js'
import { escapeToken } from '../pointer.js'
import { complete, STEPS_PER_YIELD, type Steps } from '../steps.js'
import { isObject, keysOf } from '../values.js'
import { visitChildren, visiting } from './index.js'

/** What a walk reports; a callback returning true ends the walk there. */
export interface DocumentVisitor {
  /** A keyword object: a descriptor, a document's top, a compound document's member. */
  keywordObject?(value: Record<string, unknown>, pointer: string): boolean | void
  /** An object given as a level's pairings: a pairing value (pairings or a descriptor giving them), or a pairings document's top. */
  pairingMap?(value: Record<string, unknown>, pointer: string): boolean | void
}

const at = (pointer: string, tokens: readonly string[]): string => {
  let out = pointer
  for (const token of tokens) out += `/${escapeToken(token)}`
  return out
}

/**
 * Walk `document` (at `pointer` in whatever holds it) in each of its forms: every keyword object it
 * holds, every keyword of each (a `$ref` sibling included: this walk looks wider than evaluation
 * reads), every pairing map.
 */
export function walkDocument(document: unknown, pointer: string, visitor: DocumentVisitor): void {
  complete(walking(document, pointer, visitor))
}

/** `walkDocument` step by step (engine/steps.ts): it yields between the pairings of a map. */
export function * walking(document: unknown, pointer: string, visitor: DocumentVisitor): Steps<void> {
  let stopped = false
  let steps = 0

  function * descriptor(value: unknown, here: string, variants: boolean): Steps<void> {
    if (stopped) return
    if (Array.isArray(value)) {
      if (variants) for (let i = 0; i < value.length; i++) yield * descriptor(value[i], `${here}/${i}`, false)
      return
    }
    if (isObject(value)) yield * keywordObject(value, here)
  }

  function * keywordObject(value: Record<string, unknown>, here: string): Steps<void> {
    if (stopped) return
    if (visitor.keywordObject?.(value, here) === true) {
      stopped = true
      return
    }
    // What the keywords hold, in their order, walked once they are all named (a generator cannot
    // yield from inside their callbacks).
    const held: Array<[unknown, string, 'descriptor' | 'pairings']> = []
    visitChildren(
      value,
      visiting({
        descriptor: (child, tokens) => held.push([child, at(here, tokens), 'descriptor']),
        alternative: (child, tokens) => held.push([child, at(here, tokens), 'descriptor']),
        pairings: (child, tokens) => held.push([child, at(here, tokens), 'pairings']),
      })
    )
    for (const [child, place, kind] of held) {
      if (kind === 'pairings') yield * pairingValue(child, place)
      else yield * descriptor(child, place, false)
    }
  }

  function * pairingValue(value: unknown, here: string): Steps<void> {
    if (stopped || !isObject(value)) return
    if (visitor.pairingMap?.(value, here) === true) {
      stopped = true
      return
    }
    if (pairingValueForm(value) === 'pairings') yield * pairings(value, here)
    else yield * keywordObject(value, here)
  }

  function * pairings(map: Record<string, unknown>, here: string): Steps<void> {
    for (const left of keysOf(map)) {
      if (stopped) return
      const right = map[left]
      // Only a container holds anything to walk: a string's pointer is never spelt.
      if (right !== null && typeof right === 'object') yield * descriptor(right, at(here, [left]), true)
      if (++steps % STEPS_PER_YIELD === 0) yield
    }
  }

  switch (documentForm(document)) {
    case 'compound': {
      const members = (document as Record<string, unknown>).mappings
      if (!isObject(members)) return
      for (const key of Object.keys(members)) {
        const member = members[key]
        if (isObject(member)) yield * keywordObject(member, at(pointer, ['mappings', key]))
      }
      return
    }
    case 'pairings':
      yield * pairingValue(document, pointer)
      return
    case 'descriptor':
      yield * keywordObject(document as Record<string, unknown>, pointer)
  }
}
