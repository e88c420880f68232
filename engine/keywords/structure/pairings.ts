// What `mapping` and `each` share: their operand is pairings, a descriptor, or a mapping reference.
import { isObject } from '../../values.js'
import { issue, ok, type OperandIssue } from '../record.js'

export const pairingsOperand = (name: string) => (value: unknown): OperandIssue[] =>
  isObject(value) || typeof value === 'string' ? ok : issue('KW-mapping-1', `${name} must be an object of pairings or a mapping reference`)
