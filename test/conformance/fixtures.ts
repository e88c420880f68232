// The deterministic fixture extensions the conformance cases name (conformance/README.md,
// language.md §19.6).
import { readPointer } from '../../engine/pointer.js'
import type { Extensions } from '../../engine/types.js'

const PEOPLE: Record<string, { id: string; name: string; role: string }> = {
  42: { id: '42', name: 'Ada', role: 'admin' },
}

export const fixtureExtensions: Required<Extensions> = {
  initializers: {
    uuid: () => 'urn:uuid:00000000-0000-4000-8000-000000000000',
    'date-time': () => '2026-01-01T00:00:00.000Z',
    counterfactual: (value) => (value === undefined ? 'initialized' : value),
    // Deliberately asynchronous (they violate EXT-2); two core cases pin what the engine does.
    asyncUnsupported: async () => 'never',
    asyncList: async () => ['x', 'y'],
  },
  transformers: {
    trim: (value) => (typeof value === 'string' ? value.trim() : value),
    upcase: (value) => (typeof value === 'string' ? value.toUpperCase() : value),
    split: (value, _context, options) => (typeof value === 'string' ? value.split(String(options?.split)) : value),
    slice: (value, _context, options) => {
      if (!Array.isArray(value) && typeof value !== 'string') return value
      const operand = options?.slice
      const [start, end] = Array.isArray(operand) ? (operand as number[]) : [operand as number]
      return value.slice(start, end)
    },
    last: (value) => (Array.isArray(value) ? value[value.length - 1] : value),
    pluck: (value, _context, options) => readPointer(value, String(options?.pluck)),
  },
  plugins: {
    echo: async (options, value) => ({ options, value }),
    wrap: async (options, value) => ({ [(options?.key as string) || 'wrapped']: value }),
    delayed: async (options, value) => {
      await new Promise((resolve) => setTimeout(resolve, Number(options?.ms) || 1))
      return value
    },
    failing: async () => {
      throw new Error('plugin failure: failing')
    },
    db: async (_options, value) => {
      if (value === null || typeof value !== 'object') return []
      const { table, id } = value as { table?: unknown; id?: unknown }
      if (table !== 'people' || typeof id !== 'string' || !Object.hasOwn(PEOPLE, id)) return []
      return [{ ...PEOPLE[id]! }]
    },
    flag: async (options, value, context) => {
      context.errors.push({ plugin: 'flag', message: (options?.message as string) || 'flagged' })
      return value
    },
  },
}
