// Stage 5, validate (engine.md §8.7, §10.3): each validator appends at most one error object and
// never changes the value; failures are reported in the catalogue's order.
import { linearRegExp } from '../linear-regexp.js'
import type { Context } from '../context.js'
import { errorObject, type Provenance } from '../diagnostics.js'
import type { Step } from '../plan.js'
import { isObject, truthy } from '../values.js'

type Check = (value: unknown, context: Context) => void

const TYPE_TESTS: Record<string, [test: (value: unknown) => boolean, message: string]> = {
  array: [(v) => Array.isArray(v), 'must be an array'],
  boolean: [(v) => typeof v === 'boolean', 'must be true or false'],
  integer: [(v) => typeof v === 'number' && Number.isInteger(v), 'must be an integer'],
  null: [(v) => v === null, 'must be null'],
  number: [(v) => typeof v === 'number', 'must be a number'],
  object: [(v) => isObject(v), 'must be an object'],
  string: [(v) => typeof v === 'string', 'must be a string'],
}

/** Digits after the decimal point in a number's plain decimal text (exponent forms included). */
function decimals(n: number): number {
  const [mantissa, exponent] = String(n).split('e')
  const fraction = mantissa!.split('.')[1]?.length ?? 0
  return Math.max(0, fraction - Number(exponent ?? 0))
}

/** Decimal-exact multiple test: both scaled by 10^d, rounded, remainder zero (0 never divides). */
export function isMultipleOf(value: number, divisor: number): boolean {
  const scale = 10 ** Math.min(Math.max(decimals(value), decimals(divisor)), 100)
  const remainder = Math.round(value * scale) % Math.round(divisor * scale)
  return remainder === 0
}

export function compileValidate(descriptor: Record<string, unknown>, provenance: Provenance): Step | null {
  const checks: Check[] = []
  const fail = (context: Context, fields: Array<[string, unknown]>, message: string): void => {
    context.run.errors.push(errorObject(provenance, fields, message))
  }
  const has = (key: string): boolean => Object.hasOwn(descriptor, key) && descriptor[key] !== undefined

  if (has('type') && typeof descriptor.type === 'string' && Object.hasOwn(TYPE_TESTS, descriptor.type)) {
    const type = descriptor.type
    const [test, message] = TYPE_TESTS[type]!
    checks.push((value, context) => {
      if (value !== undefined && !test(value)) fail(context, [['value', value], ['type', type]], message)
    })
  }
  const bound = (
    keyword: 'maximum' | 'minimum' | 'multipleOf',
    passes: (value: number, operand: number) => boolean,
    message: (operand: number) => string,
  ): void => {
    const operand = descriptor[keyword]
    if (typeof operand !== 'number') return
    const text = message(operand)
    checks.push((value, context) => {
      if (typeof value === 'number' && !passes(value, operand)) fail(context, [['value', value], [keyword, operand]], text)
    })
  }
  bound('maximum', (v, max) => v <= max, (max) => `cannot be greater than ${max}`)
  bound('minimum', (v, min) => v >= min, (min) => `cannot be less than ${min}`)
  bound('multipleOf', isMultipleOf, (m) => `must be a multiple of ${m}`)
  const length = (keyword: 'minLength' | 'maxLength', passes: (length: number, operand: number) => boolean, text: string): void => {
    const operand = descriptor[keyword]
    if (typeof operand !== 'number') return
    checks.push((value, context) => {
      if (typeof value === 'string' && !passes(value.length, operand)) fail(context, [['value', value], [keyword, operand]], text)
    })
  }
  length('minLength', (n, min) => n >= min, `cannot be less than ${String(descriptor.minLength)} characters`)
  length('maxLength', (n, max) => n <= max, `cannot be more than ${String(descriptor.maxLength)} characters`)
  if (Array.isArray(descriptor.enum)) {
    const allowed = descriptor.enum
    const message = `must be one of ${JSON.stringify(allowed)}`
    checks.push((value, context) => {
      if (value !== undefined && !allowed.includes(value)) fail(context, [['value', value], ['enum', allowed]], message)
    })
  }
  if (has('pattern')) {
    const pattern = descriptor.pattern
    let regex: RegExp | undefined
    let invalid: unknown
    try {
      regex = linearRegExp(pattern as string)
    } catch (error) {
      invalid = error
    }
    checks.push((value, context) => {
      if (typeof value !== 'string') return
      if (regex === undefined) throw invalid
      context.run.matchInput(value.length)
      if (!regex.test(value)) fail(context, [['value', value], ['pattern', pattern]], 'must match pattern')
    })
  }
  if (truthy(descriptor.required)) {
    const required = descriptor.required
    checks.push((value, context) => {
      if (value === undefined) fail(context, [['required', required]], 'required value')
    })
  }
  if (checks.length === 0) return null
  return {
    awaits: false,
    run(value, context) {
      for (const check of checks) check(value, context)
      return value
    },
  }
}
