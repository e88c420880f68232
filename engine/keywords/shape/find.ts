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
  code(descriptor, gen) {
    const spec = isObject(descriptor.find) ? descriptor.find : {}
    const eq = isObject(spec.eq) ? spec.eq : {}
    const list = gen.local()
    const index = gen.local()
    // An object operand is compared as the compiled form compares it: by identity, never equal to an input's member.
    const expected = (value: unknown): string => (value !== null && typeof value === 'object' ? gen.constant(value) : gen.value(value))
    // As the compiled form: a plain read of each key, compared by identity with the operand's value.
    const matches = (member: string): string =>
      [`${member} !== null`, `typeof ${member} === 'object'`, ...Object.keys(eq).map((key) => `${member}[${gen.value(key)}] === ${expected(eq[key])}`)].join(' && ')
    let narrow = ''
    if (truthy(spec.pointer)) {
      const read = gen.read(spec.pointer, 'v')
      if (read === undefined) return undefined
      narrow = read
    }
    return (
      "if (v !== null && typeof v === 'object') {\n" +
      `  if (Array.isArray(v)) {\n    ${list} = v;\n    v = undefined;\n` +
      `    for (${index} = 0; ${index} < ${list}.length; ${index}++) if (${matches(`${list}[${index}]`)}) break;\n` +
      `    run.tick(${index});\n    if (${index} < ${list}.length) {\n      v = ${list}[${index}];\n${narrow}    }\n` +
      `  } else if (${matches('v')}) {\n${narrow}  } else v = undefined;\n}\n`
    )
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
