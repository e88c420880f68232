// `type` (validate, language.md §10.3): one of the seven JSON types.
import { narrowType } from '../../output-types.js'
import { isObject } from '../../values.js'
import { keyword, validatorOperand } from '../record.js'
import { fail } from './fail.js'

const TESTS: Record<string, [test: (value: unknown) => boolean, message: string]> = {
  array: [(v) => Array.isArray(v), 'must be an array'],
  boolean: [(v) => typeof v === 'boolean', 'must be true or false'],
  integer: [(v) => typeof v === 'number' && Number.isInteger(v), 'must be an integer'],
  null: [(v) => v === null, 'must be null'],
  number: [(v) => typeof v === 'number', 'must be a number'],
  object: [(v) => isObject(v), 'must be an object'],
  string: [(v) => typeof v === 'string', 'must be a string'],
}
const TYPES = Object.keys(TESTS).sort()

export default keyword<'type', 'validate'>({
  name: 'type',
  stage: 'validate',
  tier: 'core',
  schema: { description: 'Validator: the value is of this JSON type.', enum: TYPES },
  outputType: (value, operand) => (typeof operand === 'string' && Object.hasOwn(TESTS, operand) ? narrowType(value, operand) : value),
  operand: validatorOperand('type', (v) => typeof v === 'string' && TYPES.includes(v), `one of ${TYPES.join(', ')}`),
  compile(descriptor, _cx, provenance) {
    const type = descriptor.type
    if (typeof type !== 'string' || !Object.hasOwn(TESTS, type)) return null
    const [test, message] = TESTS[type]!
    return (value, context) => {
      if (value !== undefined && !test(value)) fail(context, provenance, [['value', value], ['type', type]], message)
    }
  },
})
