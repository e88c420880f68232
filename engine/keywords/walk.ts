// A mapping document walked through its keyword records: which of its objects are keyword objects
// and which are pairing maps is found by asking each keyword what its operand holds (record.ts
// `Children`), never by naming keywords. The compiler places pairing maps with it (for budget
// errors); the stdout check finds the descriptors that would print with it. Operands that are data
// (`constant`, `examples`, a plugin's options) hold no documents, so nothing inside them is visited.
import { documentForm } from '../document.js'
import { escapeToken } from '../pointer.js'
import { isObject } from '../values.js'
import { visitChildren } from './index.js'

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
  let stopped = false

  const descriptor = (value: unknown, here: string, variants: boolean): void => {
    if (stopped) return
    if (Array.isArray(value)) {
      if (variants) value.forEach((element, i) => descriptor(element, `${here}/${i}`, false))
      return
    }
    if (isObject(value)) keywordObject(value, here)
  }

  const keywordObject = (value: Record<string, unknown>, here: string): void => {
    if (stopped) return
    if (visitor.keywordObject?.(value, here) === true) {
      stopped = true
      return
    }
    visitChildren(value, {
      descriptor: (child, tokens) => descriptor(child, at(here, tokens), false),
      alternative: (child, tokens) => descriptor(child, at(here, tokens), false),
      pairings: (child, tokens) => pairingValue(child, at(here, tokens)),
      ancestry: () => undefined,
      reference: () => undefined,
    })
  }

  const pairingValue = (value: unknown, here: string): void => {
    if (stopped || !isObject(value)) return
    if (visitor.pairingMap?.(value, here) === true) {
      stopped = true
      return
    }
    if (documentForm(value) === 'pairings') pairings(value, here)
    else keywordObject(value, here)
  }

  const pairings = (map: Record<string, unknown>, here: string): void => {
    for (const left of Object.keys(map)) {
      if (stopped) return
      descriptor(map[left], at(here, [left]), true)
    }
  }

  switch (documentForm(document)) {
    case 'compound': {
      const members = (document as Record<string, unknown>).mappings
      if (!isObject(members)) return
      for (const key of Object.keys(members)) {
        const member = members[key]
        if (isObject(member)) keywordObject(member, at(pointer, ['mappings', key]))
      }
      return
    }
    case 'pairings':
      pairingValue(document, pointer)
      return
    case 'descriptor':
      keywordObject(document as Record<string, unknown>, pointer)
  }
}
