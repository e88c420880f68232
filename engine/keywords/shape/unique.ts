// `unique` (shape, experimental): `random` picks distinct members (read by `random` itself).
import { keyword } from '../record.js'
import { refuse } from '../grammar.js'

export default keyword<'unique', 'shape'>({
  name: 'unique',
  stage: 'shape',
  tier: 'experimental',
  schema: { description: 'Experimental: with random, pick distinct members.', type: 'boolean', ...refuse('KW-random-1', 'unique must be true or false') },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    unique?: boolean
  }
}
