// `mapping` (structure, engine.md §7.2): the value is mapped through these pairings into a fresh target.
import { keyword } from '../record.js'
import { pairingsOperand } from './pairings.js'
import type { PairingMap } from '../../types.js'

export default keyword<PairingMap | string | { $ref: string }, 'mapping', 'structure'>({
  name: 'mapping',
  stage: 'structure',
  tier: 'core',
  observesPaths: true,
  operand: pairingsOperand('mapping'),
  contents(value, at, visit, descriptor, top) {
    visit.pairingValue(value, at, top)
  },
})
