// Laws of validation: for any value, a well-formed report and never a throw; and a document that
// validates clean at the instance level never makes evaluation throw for a reason validation
// could have seen.
import fc from 'fast-check'
import t from 'tap'
import { BudgetExceeded, Mapper, validate, type ValidationReport } from '../engine/index.js'

function wellFormed(report: ValidationReport): string | undefined {
  if (typeof report.valid !== 'boolean' || report.valid !== (report.errors.length === 0)) return 'valid does not match errors'
  for (const entry of [...report.errors, ...report.warnings]) {
    if (Object.keys(entry).join() !== 'rule,message,pointer,descriptor') return `bad keys ${Object.keys(entry).join()}`
    if (typeof entry.rule !== 'string' || typeof entry.message !== 'string') return 'rule and message must be strings'
    if (entry.pointer !== '' && !entry.pointer.startsWith('/')) return `bad pointer ${entry.pointer}`
  }
  JSON.stringify(report)
  return undefined
}

const mapper = new Mapper(
  { mappings: [{ $id: 'known', mapping: { '/k': '/k' } }] },
  { initializers: { uuid: () => 'u' }, transformers: { trim: (v) => (typeof v === 'string' ? v.trim() : v) }, plugins: { echo: async (_o, v) => v } }
)

t.test('any JSON value gets a well-formed report, at both levels, without a throw', async (t) => {
  await fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
      for (const report of [validate(value), mapper.validate(value), validate({ mapping: value }), mapper.validate({ mappings: { m: value } })]) {
        const problem = wellFormed(report)
        if (problem !== undefined) throw new Error(problem)
      }
    }),
    { numRuns: 500 }
  )
  t.pass('500 values')
})

// Documents built from the language's grammar, with the mistakes validation exists to catch.
const pointer = fc.constantFrom('/a', '/b/c', '/a/0', '/l/-', 'bad', '/x~2', '/a/../b', '#/a', '/valid', '')
const name = fc.constantFrom('known', 'unknown', 'trim', 'uuid', 'nope', 'one', 'two')
const operand = fc.oneof(fc.jsonValue({ maxDepth: 1 }), pointer, name)
const keywordPair = fc.oneof(
  fc.record({ source: fc.oneof(pointer, operand) }),
  fc.record({ as: fc.constantFrom('string', 'number', 'json', 'integer', 3) }),
  fc.record({ transform: fc.oneof(name, fc.array(fc.oneof(name, fc.dictionary(name, operand, { maxKeys: 2 })), { maxLength: 3 }), operand) }),
  fc.record({ init: fc.oneof(name, operand) }),
  fc.record({ pattern: fc.constantFrom('^a', '(a+)+', '[', 'a{2}', 5) }),
  fc.record({ find: fc.oneof(fc.record({ eq: fc.dictionary(fc.constantFrom('k'), operand, { maxKeys: 1 }), pointer }), operand) }),
  fc.record({ first: fc.oneof(fc.array(fc.oneof(pointer, name, fc.constant(['/a'])), { maxLength: 2 }), operand) }),
  fc.record({ switch: fc.oneof(fc.record({ source: pointer, cases: fc.dictionary(fc.constantFrom('x', 'default'), fc.oneof(pointer, name, operand), { maxKeys: 2 }) }), operand) }),
  fc.record({ each: fc.oneof(name, fc.record({ $ref: name }), operand, fc.dictionary(pointer, fc.oneof(pointer, name), { maxKeys: 2 })) }),
  fc.record({ mapping: fc.oneof(name, operand, fc.record({ mapping: name }), fc.record({ each: fc.record({ $ref: name }) })) }),
  fc.record({ switch: fc.record({ source: operand, input: pointer, cases: fc.dictionary(fc.constantFrom('x', 'default'), fc.oneof(pointer, name), { maxKeys: 2 }) }) }),
  fc.record({ minimum: operand, multipleOf: operand, enum: operand, required: operand }),
  fc.record({ $ref: name }),
  fc.record({ echo: fc.oneof(fc.record({ pointer: fc.oneof(pointer, operand) }), operand) }),
  fc.record({ $extend: fc.oneof(name, fc.array(name, { maxLength: 2 }), operand) })
)
const descriptor = fc.oneof(
  pointer,
  name,
  operand,
  fc.array(fc.oneof(pointer, name), { maxLength: 3 }),
  fc.array(keywordPair, { minLength: 1, maxLength: 4 }).map((pairs) => Object.assign({}, ...pairs) as Record<string, unknown>)
)
const document = fc.oneof(
  fc.record({ mapping: fc.dictionary(pointer, descriptor, { maxKeys: 5 }) }),
  fc.dictionary(pointer, descriptor, { maxKeys: 4 }),
  fc.record({ mappings: fc.dictionary(fc.constantFrom('one', 'two'), fc.record({ $id: fc.constantFrom('one', 'two', 'known'), mapping: fc.dictionary(pointer, descriptor, { maxKeys: 3 }) }), { maxKeys: 2 }) }),
  fc.record({ mappings: fc.dictionary(fc.constantFrom('one', 'two'), fc.oneof(fc.record({ $id: fc.constantFrom('one', 'two'), mapping: name }), fc.record({ $id: fc.constantFrom('one', 'two'), each: fc.dictionary(pointer, descriptor, { maxKeys: 2 }) })), { maxKeys: 2 }) }),
  fc.array(keywordPair, { minLength: 1, maxLength: 3 }).map((pairs) => Object.assign({}, ...pairs) as Record<string, unknown>)
)
const input = fc.oneof(fc.record({ a: fc.jsonValue({ maxDepth: 2 }), k: fc.string(), l: fc.array(fc.integer(), { maxLength: 2 }) }), fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 2 }))

t.test('a document that validates clean never makes map throw for a reason validation could see', async (t) => {
  let clean = 0
  await fc.assert(
    fc.asyncProperty(document, input, async (doc, value) => {
      const report = mapper.validate(doc)
      if (wellFormed(report) !== undefined) return false
      if (!report.valid) return true
      clean++
      try {
        await mapper.map(doc, value)
      } catch (error) {
        // Writing through a primitive the input supplied is a fact about the input, not the document;
        // a self-reference that never runs out of input is stopped by its depth budget.
        if (error instanceof BudgetExceeded) return true
        if (!/Cannot create property/.test((error as Error).message)) throw error
      }
      return true
    }),
    { numRuns: 1500 }
  )
  t.ok(clean > 50, `${clean} clean documents were evaluated`)
})
