// `find` (shape, language.md §8.6): the first member of an array (or the object itself) whose keys
// equal `eq`'s, narrowed by `pointer`.
import { isObject, truthy } from '../../values.js'
import { issue, keyword, ok, POINTER_SCHEMA } from '../record.js'

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
      pointer: { ...POINTER_SCHEMA, description: 'The part of the found member to take.' },
    },
  },
  operand(value) {
    const good = isObject(value) && isObject(value.eq) && (value.pointer === undefined || typeof value.pointer === 'string')
    return good ? ok : issue('KW-find-1', 'find must be an object with an eq object')
  },
  contents(value, at, visit) {
    if (isObject(value)) visit.pointer(value.pointer, visit.at(at, 'pointer'))
  },
  compile(descriptor, cx) {
    const operand = descriptor.find
    if (!truthy(operand)) return null
    const spec = isObject(operand) ? operand : {}
    const eq = isObject(spec.eq) ? spec.eq : {}
    // The operands are document values (JSON), so a plain property read can never equal one
    // through an inherited member: no own-property test is needed.
    const keys = Object.keys(eq)
    const expected = keys.map((key) => eq[key])
    const narrow = truthy(spec.pointer) ? cx.reader(spec.pointer) : null
    const matches = (member: unknown): boolean => {
      if (member === null || typeof member !== 'object') return false
      for (let i = 0; i < keys.length; i++) {
        if ((member as Record<string, unknown>)[keys[i]!] !== expected[i]) return false
      }
      return true
    }
    const found = (member: unknown): unknown => (narrow === null ? member : narrow(member))
    return {
      awaits: false,
      run(value, context) {
        if (value === null || typeof value !== 'object') return value
        if (!Array.isArray(value)) return matches(value) ? found(value) : undefined
        for (let i = 0; i < value.length; i++) {
          if (matches(value[i])) {
            context.run.tick(i)
            return found(value[i])
          }
        }
        context.run.tick(value.length)
        return undefined
      },
    }
  },
})
