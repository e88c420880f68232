// `type` (validate, language.md §10.3): one of the seven JSON types.
import { narrowType } from '../../output-types.js'
import { isObject } from '../../values.js'
import { keyword, validatorOperand } from '../record.js'
import { fail, failure } from './fail.js'

// Each test twice: as a function for the compiled form, as source over `v` for the generated one.
const TESTS: Record<string, [test: (value: unknown) => boolean, message: string, code: string]> = {
  array: [(v) => Array.isArray(v), 'must be an array', 'Array.isArray(v)'],
  boolean: [(v) => typeof v === 'boolean', 'must be true or false', "typeof v === 'boolean'"],
  integer: [(v) => typeof v === 'number' && Number.isInteger(v), 'must be an integer', "typeof v === 'number' && Number.isInteger(v)"],
  null: [(v) => v === null, 'must be null', 'v === null'],
  number: [(v) => typeof v === 'number', 'must be a number', "typeof v === 'number'"],
  object: [(v) => isObject(v), 'must be an object', "v !== null && typeof v === 'object' && !Array.isArray(v)"],
  string: [(v) => typeof v === 'string', 'must be a string', "typeof v === 'string'"],
}
const TYPES = Object.keys(TESTS).sort()

export default keyword<'type', 'validate'>({
  name: 'type',
  stage: 'validate',
  tier: 'core',
  schema: { description: 'Validator: the value is of this JSON type.', enum: TYPES },
  outputType: (value, operand) => (typeof operand === 'string' && Object.hasOwn(TESTS, operand) ? narrowType(value, operand) : value),
  operand: validatorOperand('type', (v) => typeof v === 'string' && TYPES.includes(v), `one of ${TYPES.join(', ')}`),
  code(descriptor, gen, provenance) {
    const type = descriptor.type as string
    const [, message, test] = TESTS[type]!
    return `if (v !== undefined && !(${test})) errors.push(${gen.constant(failure(provenance, (value) => [['value', value], ['type', type]], message))}(v));\n`
  },
  compile(descriptor, _cx, provenance) {
    const type = descriptor.type
    if (typeof type !== 'string' || !Object.hasOwn(TESTS, type)) return null
    const [test, message] = TESTS[type]!
    return (value, run) => {
      if (value !== undefined && !test(value)) fail(run, provenance, [['value', value], ['type', type]], message)
    }
  },
})
