// Stage 6, finalize (engine.md §8.8): default, regexp_i, then `as`, the very last step.
import type { Step } from '../plan.js'
import { copyValue, toText } from '../values.js'

/** ECMAScript Number() for any JSON value, never calling anything the value carries. */
function toNumber(value: unknown): number {
  switch (typeof value) {
    case 'number':
      return value
    case 'string':
      return Number(value)
    case 'boolean':
      return value ? 1 : 0
    default:
      if (value === null) return 0
      return Array.isArray(value) ? Number(toText(value)) : Number.NaN
  }
}

/** The four coercions of `as` (undefined always stays undefined, GET-4). */
export const COERCIONS: Record<string, (value: unknown) => unknown> = {
  string: (value) => toText(value),
  // Decision 1 (KW-as-1): a result JSON cannot represent becomes null, with no error.
  number: (value) => {
    const n = toNumber(value)
    return Number.isFinite(n) ? n : null
  },
  boolean: (value) => !!value,
  json: (value) => JSON.stringify(value),
}

export function compileFinalize(descriptor: Record<string, unknown>): Step[] {
  const steps: Step[] = []
  if (Object.hasOwn(descriptor, 'default') && descriptor.default !== undefined) {
    const fallback = descriptor.default
    const isContainer = fallback !== null && typeof fallback === 'object'
    steps.push({
      awaits: false,
      run: (value) => (value !== undefined ? value : isContainer ? copyValue(fallback) : fallback),
    })
  }
  // Decision 10: regexp_i acts only when true, and leaves undefined undefined.
  if (descriptor.regexp_i === true) {
    steps.push({ awaits: false, run: (value) => (value === undefined ? value : `/${toText(value)}/i`) })
  }
  const as = descriptor.as
  if (typeof as === 'string' && Object.hasOwn(COERCIONS, as)) {
    const coerce = COERCIONS[as]!
    steps.push({ awaits: false, run: (value) => (value === undefined ? value : coerce(value)) })
  }
  return steps
}
