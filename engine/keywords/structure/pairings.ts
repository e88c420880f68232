// What `mapping` and `each` share: their operand is pairings, a descriptor, or a mapping reference.
import { refuse, type REFUSE, type Refusal } from '../grammar.js'

/** The operand grammar of a pairing value at the keyword (what lies inside is validation's look, through `parts`). */
export const pairingValueGrammar = (name: string): { readonly type: readonly string[]; readonly [REFUSE]: Refusal } => ({
  type: ['object', 'string'],
  ...refuse('KW-mapping-1', `${name} must be an object of pairings or a mapping reference`),
})
