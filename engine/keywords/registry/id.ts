// `$id` (registry, language.md §5): the name a document registers under.
import { issue, keyword, ok } from '../record.js'

const FORBIDDEN_IDS = ['__proto__', 'constructor', 'prototype']

export default keyword<'$id', 'registry'>({
  name: '$id',
  stage: 'registry',
  tier: 'core',
  documentMember: 'compound',
  schema: { description: 'The name this mapping registers under.', type: 'string', minLength: 1, not: { enum: FORBIDDEN_IDS } },
  operand(value) {
    if (typeof value !== 'string' || value === '') return issue('REG-5', '$id must be a non-empty string')
    if (FORBIDDEN_IDS.includes(value)) return issue('REG-6', `"${value}" is not allowed as a mapping $id`)
    return ok
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    $id?: string
  }
}
