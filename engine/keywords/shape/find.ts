// `find` (shape, language.md §8.6): the first member of an array (or the object itself) whose keys
// equal `eq`'s, narrowed by `pointer`.
import { finder, findSpec } from '../../codegen/inline.js'
import { isObject, truthy } from '../../values.js'
import { keyword, POINTER_SCHEMA } from '../record.js'
import { refuse } from '../grammar.js'

export default keyword<'find', 'shape'>({
  name: 'find',
  stage: 'shape',
  tier: 'core',
  schema: {
    description: 'The first member of an array value (or the object value itself) whose keys equal those of eq, narrowed by pointer.',
    type: 'object',
    required: ['eq'],
    properties: {
      eq: { type: 'object', description: 'Keys and the values a member must have.' },
      pointer: { ...POINTER_SCHEMA, type: 'string', description: 'The part of the found member to take.' },
    },
    ...refuse('KW-find-1', 'find must be an object with an eq object'),
  },
  parts(value, _descriptor, visit) {
    if (isObject(value)) visit.pointer(value.pointer, ['pointer'])
  },
  inline: 'find',
  compile(descriptor, cx) {
    const operand = descriptor.find
    if (!truthy(operand)) return null
    const pointer = findSpec(operand).pointer
    const find = finder(operand, truthy(pointer) ? cx.reader(pointer) : null)
    return { awaits: false, run: (value, context) => find(value, context.run) }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    find?: { eq: Record<string, unknown>; pointer?: string }
  }
}
