// What the validators share: an error object in the language's key order, and the bound checks.
import type { KeywordName } from '../../descriptor.js'
import type { Run } from '../../run.js'
import { errorObject, type Provenance } from '../../diagnostics.js'
import { keyword } from '../record.js'
import { refuse } from '../grammar.js'

/** Append one validator's error object. */
export function fail(run: Run, provenance: Provenance, fields: Array<[string, unknown]>, message: string): void {
  run.errors.push(errorObject(provenance, fields, message))
}

/** A numeric bound: checked on numbers only. */
export function numericCheck(
  keyword: string,
  operand: unknown,
  passes: (value: number, operand: number) => boolean,
  message: string,
  provenance: Provenance
) {
  if (typeof operand !== 'number') return null
  return (value: unknown, run: Run): void => {
    if (typeof value === 'number' && !passes(value, operand)) fail(run, provenance, [['value', value], [keyword, operand]], message)
  }
}

/** A length bound on strings (`minLength`, `maxLength`), whole: operand grammar and check. */
export function lengthKeyword<N extends KeywordName>(
  name: N,
  description: string,
  passes: (length: number, operand: number) => boolean,
  message: (operand: number) => string
) {
  return keyword<N, 'validate'>({
    name,
    stage: 'validate',
    tier: 'core',
    schema: { description, type: 'integer', minimum: 0, ...refuse('KW-validate-1', `${name} must be a non-negative integer`) },
    compile(descriptor, _cx, provenance) {
      const operand = descriptor[name]
      if (typeof operand !== 'number') return null
      const text = message(operand)
      return (value, run) => {
        if (typeof value === 'string' && !passes(value.length, operand)) fail(run, provenance, [['value', value], [name, operand]], text)
      }
    },
  })
}
