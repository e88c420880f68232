// `mapping` (structure, language.md §7.2): the value is mapped through these pairings into a fresh target.
import type { PairingValue } from '../../descriptor.js'
import { keyword, PAIRING_VALUE_SCHEMA } from '../record.js'
import { pairingValueGrammar } from './pairings.js'

export default keyword<'mapping', 'structure'>({
  name: 'mapping',
  stage: 'structure',
  tier: 'core',
  documentMember: 'single',
  schema: {
    ...PAIRING_VALUE_SCHEMA,
    ...pairingValueGrammar('mapping'),
    description: 'The pairings of this level (target pointer → descriptor), or a mapping id or { $ref } whose pairings are used; the value is mapped into a fresh target.',
  },
  observesPaths: true,
  // The level's pairing value (a falsy one gives none: visitChildren passes on only a truthy one).
  parts(value, _descriptor, visit) {
    visit.pairings(value, [])
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    mapping?: PairingValue
  }
}
