// `random` (shape, experimental): members picked at random from an array value; with `unique`,
// distinct ones.
import { errorObject } from '../../diagnostics.js'
import { truthy } from '../../values.js'
import { keyword } from '../record.js'
import { refuse } from '../grammar.js'

/** The largest `random` selection a document may ask for (each member is a value of the output). */
export const MAX_RANDOM = 10_000

export default keyword<'random', 'shape'>({
  name: 'random',
  stage: 'shape',
  tier: 'experimental',
  schema: {
    description: 'Experimental: pick this many members of an array value at random.',
    type: 'integer',
    minimum: 1,
    maximum: MAX_RANDOM,
    ...refuse('KW-random-1', 'random must be a positive integer', { maximum: `random must not exceed ${MAX_RANDOM}` }),
  },
  compile(descriptor, _cx, provenance) {
    const count = descriptor.random
    if (!truthy(count)) return null
    const unique = truthy(descriptor.unique)
    return {
      awaits: false,
      run(value, context) {
        if (!Array.isArray(value)) return value
        if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) return value
        if (unique && count > new Set(value).size) {
          context.run.errors.push(errorObject(provenance, [['value', value], ['random', count]], `cannot select ${count} unique members`))
          return undefined
        }
        const pick = (): unknown => value[Math.floor(Math.random() * value.length)]
        if (count === 1) return value.length === 0 ? undefined : pick()
        if (value.length === 0) return value
        context.run.willMake(count)
        if (!unique) return Array.from({ length: count }, pick)
        // Unique selection: a partial Fisher–Yates shuffle of the distinct members terminates always.
        const distinct = [...new Set(value)]
        for (let i = 0; i < count; i++) {
          const j = i + Math.floor(Math.random() * (distinct.length - i))
          ;[distinct[i], distinct[j]] = [distinct[j], distinct[i]]
        }
        return distinct.slice(0, count)
      },
    }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    random?: number
  }
}
