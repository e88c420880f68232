// `$id` (registry, language.md §5): the name a document registers under.
import { keyword } from '../record.js'
import { refuse } from '../grammar.js'

const FORBIDDEN_IDS = ['__proto__', 'constructor', 'prototype']

export default keyword<'$id', 'registry'>({
  name: '$id',
  stage: 'registry',
  tier: 'core',
  documentMember: 'compound',
  schema: {
    description: 'The name this mapping registers under.',
    type: 'string',
    minLength: 1,
    not: { enum: FORBIDDEN_IDS },
    ...refuse('REG-5', '$id must be a non-empty string', { not: { rule: 'REG-6', message: '"{value}" is not allowed as a mapping $id' } }),
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    $id?: string
  }
}
