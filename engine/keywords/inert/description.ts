// `description`: prose for people; evaluation never reads it.
import { keyword } from '../record.js'

export default keyword<'description', 'inert'>({
  name: 'description',
  stage: 'inert',
  tier: 'core',
  documentMember: 'compound',
  // Any value: evaluation and validation never read it.
  schema: { description: 'Prose for people; evaluation never reads it.' },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    description?: string
  }
}
