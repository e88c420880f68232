// Laws that hold for every document and input (style.md): evaluation never mutates the input,
// Object.prototype is untouched, outputs are JSON (no undefined, no non-finite numbers), and a
// compiled plan carries no state from one run to the next.
import fc from 'fast-check'
import t from 'tap'
import { Mapper } from '../engine/index.js'

const pointer = fc.constantFrom('/a', '/b', '/a/b', '/a/0', '/a/-', '/list/-', '/x/y', '/', '/__proto__/p', '/constructor/prototype/p', '/__proto__')
const readPointer = fc.constantFrom('/a', '/b', '/a/b', '/list', '/list/0', '/n', '/s', '/', '/__proto__', '/constructor', '/missing')
const json = fc.jsonValue({ maxDepth: 3 })

const leaf = fc.oneof(
  readPointer,
  fc.constantFrom('../a', '../../b', 'not-a-pointer', '#/a', '/a/../b'),
  fc.record({ source: readPointer, as: fc.constantFrom('string', 'number', 'boolean', 'json') }),
  fc.record({ source: readPointer, default: json }),
  fc.record({ constant: json }),
  fc.record({ source: readPointer, type: fc.constantFrom('string', 'number', 'object', 'array', 'integer') }),
  fc.record({ source: readPointer, minimum: fc.integer({ min: -5, max: 5 }), multipleOf: fc.constantFrom(0.1, 2, 0) }),
  fc.record({ first: fc.array(readPointer, { maxLength: 3 }) }),
  fc.record({ all: fc.array(readPointer, { maxLength: 3 }), concat: fc.constant(true) }),
  fc.record({ source: readPointer, find: fc.record({ eq: fc.dictionary(fc.constantFrom('k', 'n'), json, { maxKeys: 1 }), pointer: fc.constantFrom('/v', '/k') }) }),
  fc.record({ source: readPointer, regexp_i: fc.constant(true) }),
  fc.record({ output: readPointer }),
  fc.record({ target: readPointer })
)

const { descriptor } = fc.letrec((tie) => ({
  descriptor: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('structural'), tie('switching'), fc.array(leaf, { minLength: 1, maxLength: 3 })),
  pairings: fc.dictionary(pointer, tie('descriptor'), { maxKeys: 4 }),
  structural: fc.record({ source: readPointer, each: tie('pairings') }),
  switching: fc.record({
    source: readPointer,
    switch: fc.record({ source: fc.constantFrom('/s', '/n', '/k'), cases: fc.dictionary(fc.constantFrom('x', '1', 'true', 'default', 'constructor'), leaf, { maxKeys: 3 }) }),
  }),
}))

const document = fc.record({ mapping: fc.dictionary(pointer, descriptor, { minKeys: 1, maxKeys: 5 }) })
const input = fc.oneof(
  fc.record({ a: json, b: json, list: fc.array(json, { maxLength: 3 }), n: fc.integer(), s: fc.string({ maxLength: 5 }) }, { requiredKeys: [] }),
  fc.array(fc.record({ a: json, n: fc.integer() }), { maxLength: 3 }),
  json
)

function jsonClean(value: unknown, path = '$'): string | undefined {
  if (value === undefined) return `${path} is undefined`
  if (typeof value === 'number' && !Number.isFinite(value)) return `${path} is ${value}`
  if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') return `${path} is a ${typeof value}`
  if (value !== null && typeof value === 'object') {
    for (const [key, member] of Object.entries(value)) {
      const problem = jsonClean(member, `${path}.${key}`)
      if (problem !== undefined) return problem
    }
  }
  return undefined
}

const mapper = new Mapper()

t.test('evaluation never mutates the input and never touches Object.prototype', async (t) => {
  await fc.assert(
    fc.asyncProperty(document, input, async (doc, value) => {
      const snapshot = structuredClone(value)
      const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).join()
      try {
        await mapper.map(doc, value)
      } catch {
        // Host errors (write-through a truthy primitive) are allowed; the laws hold regardless.
      }
      t.same(value, snapshot)
      return Object.getOwnPropertyNames(Object.prototype).join() === prototypeKeys && ({} as Record<string, unknown>).p === undefined
    }),
    { numRuns: 300 }
  )
  t.pass('300 documents')
})

t.test('outputs are JSON: no undefined, no NaN or Infinity, stable through a round trip', async (t) => {
  await fc.assert(
    fc.asyncProperty(document, input, async (doc, value) => {
      let envelope: unknown
      try {
        envelope = await mapper.map(doc, value)
      } catch {
        return true
      }
      const problem = jsonClean(envelope)
      if (problem !== undefined) throw new Error(problem)
      return JSON.stringify(JSON.parse(JSON.stringify(envelope))) === JSON.stringify(envelope)
    }),
    { numRuns: 300 }
  )
  t.pass('300 documents')
})

t.test('a compiled plan gives the same envelope on every run', async (t) => {
  await fc.assert(
    fc.asyncProperty(document, input, async (doc, value) => {
      let plan
      try {
        plan = mapper.compile(doc)
      } catch {
        return true
      }
      const run = async (): Promise<string> => {
        try {
          return JSON.stringify(await plan.run(structuredClone(value)))
        } catch (error) {
          return `threw ${(error as Error).message}`
        }
      }
      return Object.is(await run(), await run())
    }),
    { numRuns: 200 }
  )
  t.pass('200 documents')
})
