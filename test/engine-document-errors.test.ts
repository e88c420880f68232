// What the engine throws for a caller's document is typed (issue 30): a `DocumentError` (a
// TypeError; `DocumentSyntaxError` and `DocumentURIError` for pointers, `NonLinearPattern` for
// patterns) with `code: 'MappingDocumentError'` and `statusCode: 422`, which the service answers
// as a 422 with that code, never a 500. Messages are those of before.
import t, { type Test } from 'tap'
import { DocumentError, Mapper, NonLinearPattern, parsePointer } from '../engine/index.js'
import { admitDocument } from '../engine/mapper.js'
import { shapeError } from '../service/errors.js'

/** The error `run` throws or rejects with. */
async function caught(run: () => unknown): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  return undefined
}

const typed = (t: Test, error: unknown, kind: ErrorConstructor | SyntaxErrorConstructor | TypeErrorConstructor | URIErrorConstructor, message: string | RegExp): void => {
  t.ok(error instanceof kind, `a ${kind.name}: ${String(error)}`)
  t.match(error, { code: 'MappingDocumentError', statusCode: 422, message })
  const shaped = shapeError(error, 1024)
  t.equal(shaped.status, 422, 'answered 422')
  t.equal(shaped.code, 'MappingDocumentError')
}

t.test('registration and compilation of a caller document', async (t) => {
  typed(t, await caught(() => new Mapper().compile({ mappings: { a: { $id: 'a', $extend: 'gone', mapping: {} } } })), TypeError, 'Unknown mapping "gone"')
  typed(t, await caught(() => new Mapper().compile({ mappings: { a: { $id: 'a', $extend: 'b', mapping: {} }, b: { $id: 'b', $extend: 'a', mapping: {} } } })), TypeError, '$extend cycle: a → b → a')
  typed(t, await caught(() => new Mapper().compile({ mappings: { a: { $id: 'a', $extend: 7 } } })), TypeError, /must be a mapping id/)
  typed(t, await caught(() => new Mapper().compile({ mappings: { x: 5 } })), TypeError, 'a mapping document must be an object')
  typed(t, await caught(() => new Mapper().compile({ mappings: [5] })), TypeError, 'the mappings of a compound document must be an object')
  typed(t, await caught(() => new Mapper().register({ mapping: {} })), TypeError, /non-empty string \$id/)
  let deep: unknown = {}
  for (let i = 0; i < 150; i++) deep = { a: deep }
  typed(t, await caught(() => admitDocument(deep)), TypeError, 'mapping nesting exceeds the maximum depth of 100')
  t.ok((await caught(() => new Mapper().compile({ mappings: [5] }))) instanceof DocumentError)
})

t.test('evaluation reaching what validation refuses', async (t) => {
  const mapper = new Mapper()
  typed(t, await caught(() => mapper.map({ mapping: { '/a': { source: '/a', mapping: 'nowhere' } } }, { a: {} })), TypeError, 'Unknown mapping "nowhere"')
  typed(t, await caught(() => mapper.map({ mappings: { a: { $id: 'a', mapping: 'b' }, b: { $id: 'b', mapping: 'a' }, e: { mapping: { '/x': { source: '/x', mapping: 'a' } } } } }, { x: {} })), TypeError, /mapping references loop through/)
  typed(t, await caught(() => mapper.map({ mapping: { '/a': { source: '/a', mapping: 5 } } }, { a: {} })), TypeError, 'mapping must be an object of pairings or a mapping reference')
  typed(t, await caught(() => mapper.map({ mapping: { '/a': 5 } }, {})), TypeError, /a descriptor must be a string, an object or an array/)
  typed(t, await caught(() => mapper.map({ mapping: { '/a': { all: [[1]] } } }, {})), TypeError, /a variant list is a valid descriptor only/)
  typed(t, await caught(() => mapper.map({ mapping: { '/a': { source: '/a', pattern: '(' } } }, { a: 'x' })), SyntaxError, /Invalid regular expression/)
  const nonLinear = await caught(() => mapper.map({ mapping: { '/a': { source: '/a', pattern: '(a)\\1' } } }, { a: 'x' }))
  t.ok(nonLinear instanceof NonLinearPattern)
  typed(t, nonLinear, SyntaxError, /cannot run in linear time/)
})

t.test('pointers', async (t) => {
  typed(t, await caught(() => parsePointer('a')), SyntaxError, 'Invalid JSON Pointer a')
  typed(t, await caught(() => parsePointer(5)), TypeError, 'JSON Pointer must be a string')
  typed(t, await caught(() => parsePointer('#/%E0%A4%A')), URIError, 'URI malformed')
})
