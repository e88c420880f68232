// `multipleOf` (validate, language.md §10.3): a number that is a decimal-exact multiple of the operand.
import { keyword } from '../record.js'
import { numericCheck } from './fail.js'
import { refuse } from '../grammar.js'

/** Digits after the decimal point in a number's plain decimal text (exponent forms included). */
function decimals(n: number): number {
  const [mantissa, exponent] = String(n).split('e')
  const fraction = mantissa!.split('.')[1]?.length ?? 0
  return Math.max(0, fraction - Number(exponent ?? 0))
}

/** Decimal-exact multiple test: both scaled by 10^d, rounded, remainder zero (0 never divides). */
function isMultipleOf(value: number, divisor: number): boolean {
  const scale = 10 ** Math.min(Math.max(decimals(value), decimals(divisor)), 100)
  const remainder = Math.round(value * scale) % Math.round(divisor * scale)
  return remainder === 0
}

export default keyword<'multipleOf', 'validate'>({
  name: 'multipleOf',
  stage: 'validate',
  tier: 'core',
  schema: { description: 'Validator: a number value is a (decimal-exact) multiple of this.', type: 'number', exclusiveMinimum: 0, ...refuse('KW-validate-1', 'multipleOf must be a positive number') },
  compile: (descriptor, _cx, provenance) =>
    numericCheck('multipleOf', descriptor.multipleOf, isMultipleOf, `must be a multiple of ${String(descriptor.multipleOf)}`, provenance),
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    multipleOf?: number
  }
}
