// `each` (structure, engine.md §7.2): like `mapping`, applied to every element of an array value.
import { keyword } from '../record.js'
import { pairingsOperand } from './pairings.js'
import type { PairingMap } from '../../types.js'
import { truthy } from '../../values.js'

export default keyword<PairingMap | string | { $ref: string }, 'each', 'structure'>({
  name: 'each',
  stage: 'structure',
  tier: 'core',
  observesPaths: true,
  operand: pairingsOperand('each'),
  contents(value, at, visit, descriptor, top) {
    // Beside `mapping`, evaluation ignores it.
    if (truthy(descriptor.mapping)) return
    visit.pairingValue(value, at, top)
  },
})
