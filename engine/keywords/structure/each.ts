// `each` (structure, language.md §7.2): like `mapping`, applied to every element of an array value.
import type { PairingValue } from '../../descriptor.js'
import { keyword, PAIRING_VALUE_SCHEMA, TRUTHY_SCHEMA } from '../record.js'
import { pairingValueGrammar } from './pairings.js'
import { truthy } from '../../values.js'

export default keyword<'each', 'structure'>({
  name: 'each',
  stage: 'structure',
  tier: 'core',
  schema: {
    description: 'Like mapping, applied to every element of an array value (ignored beside a mapping).',
    ...pairingValueGrammar('each'),
  },
  // Beside `mapping` only the operand's type is checked (evaluation ignores it).
  objectSchema: {
    if: { not: { required: ['mapping'], properties: { mapping: TRUTHY_SCHEMA } } },
    then: { properties: { each: PAIRING_VALUE_SCHEMA } },
  },
  observesPaths: true,
  // The level's pairing value when no `mapping` gives one (applied to every element: evaluation's
  // affair); beside `mapping`, evaluation ignores it.
  parts(value, descriptor, visit) {
    if (!truthy(descriptor.mapping)) visit.pairings(value, [])
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    each?: PairingValue
  }
}
