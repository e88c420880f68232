// `unique` (shape, experimental): `random` picks distinct members (read by `random` itself).
import { booleanOperand, keyword } from '../record.js'

export default keyword<'unique', 'shape'>({
  name: 'unique',
  stage: 'shape',
  tier: 'experimental',
  schema: { description: 'Experimental: with random, pick distinct members.', type: 'boolean' },
  operand: booleanOperand('unique', 'KW-random-1'),
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    unique?: boolean
  }
}
