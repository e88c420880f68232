// The three shapes of a mapping document (language.md §2.5, §6.2; validation.md §1), decided in one
// place for evaluation and validation alike.
import { isKeyword, pairingValueOf, standingAlone } from './keywords/index.js'
import { isObject, rememberedKeys, truthy } from './values.js'

export { entryOf, idOf } from './document-id.js'

/** The deepest document the engine admits and validation accepts (DOC-6; the root is depth 1). */
export const MAX_DOCUMENT_DEPTH = 100

export type DocumentForm = 'compound' | 'descriptor' | 'pairings' | 'invalid'

/**
 * `compound`: a truthy `mappings` member. `descriptor`: a truthy `mapping`, or any keyword at the
 * top. `pairings`: an object with no keyword at its top, whose every key is a target pointer.
 * (The reference also treats a keyword object without `mapping` as pairings and then fails on its
 * keyword keys as pointers; we evaluate such an object as the descriptor it plainly is.)
 */
export function documentForm(document: unknown): DocumentForm {
  if (!isObject(document)) return 'invalid'
  if (truthy(document.mappings)) return 'compound'
  if (truthy(document.mapping)) return 'descriptor'
  const remembered = rememberedKeys(document)
  if (remembered === undefined) return Object.keys(document).some(isKeyword) ? 'descriptor' : 'pairings'
  // A large frozen pairing map (values.ts keysOf) is asked by every walk of a registration: its keys never change, nor its form.
  let form = forms.get(remembered)
  if (form === undefined) forms.set(remembered, (form = remembered.some(isKeyword) ? 'descriptor' : 'pairings'))
  return form
}

/** How a written pairing value gives a level's pairings. */
export type PairingValueForm = 'name' | 'reference' | 'descriptor' | 'pairings' | 'invalid'

/**
 * The descriptor rule of a pairing value (language.md §2.5), for the value written as `mapping` /
 * `each`: a string is a mapping's name; an object a keyword stands for whole is a reference (`$ref`);
 * an object whose `mapping` is truthy is a descriptor, and that inner value gives the pairings;
 * any other object is the pairing map itself, every key a target pointer (`{ each: … }` there is
 * a map whose key `each` is not a pointer: PTR-10 in validation, a failed evaluation). A mapping
 * that a name or reference reaches is a registered document and is read by its own form
 * (`documentForm`: any keyword at its top makes it a descriptor). Compilation, validation, the
 * expansion bound, the document walk, output-schema inference and the document schema read the
 * rule from here (docs/engine.md, "The document model").
 */
export function pairingValueForm(value: unknown): PairingValueForm {
  if (typeof value === 'string') return 'name'
  if (!isObject(value)) return 'invalid'
  if (standingAlone(value) !== undefined) return 'reference'
  return truthy(value.mapping) ? 'descriptor' : 'pairings'
}

/**
 * The pairing value of a mapping document that a name or reference reaches, read by its own form
 * (`documentForm`): a pairing map or a reference is its own; a descriptor gives the one its
 * keywords give (`mapping`, else `each`), undefined when none. Compilation and array input alike.
 */
export function reachedPairingValue(document: Record<string, unknown>): unknown {
  if (documentForm(document) === 'pairings' || standingAlone(document) !== undefined) return document
  return pairingValueOf(document)
}

/** The form of each large frozen object asked about, by its remembered keys. */
const forms = new WeakMap<readonly string[], DocumentForm>()

/**
 * A compound document's members, in written order; undefined for a document of another form, or
 * one whose `mappings` is not an object (which validation refuses).
 */
export function membersOf(document: unknown): unknown[] | undefined {
  if (documentForm(document) !== 'compound') return undefined
  const mappings = (document as Record<string, unknown>).mappings
  return isObject(mappings) ? Object.values(mappings) : undefined
}
