// Response serializers compiled once per process (http/serializers.ts): the same schema in the same
// context is one compiled function, shared by every server built in the process; what a serializer
// depends on besides its schema (the context's shared schemas, the serializer options) keeps
// serializers apart, so a cached one never answers for a schema it was not compiled from.
import t from 'tap'
import { cachedSerializerBuilder } from '../http/serializers.js'
import { buildServer } from '../server.js'
import { ECHO } from './http-support.js'

const route = (schema: unknown): { schema: unknown; method: string; url: string; httpStatus: string } => ({ schema, method: 'GET', url: '/x', httpStatus: '200' })

t.test('one compiled function per schema and context, whatever the route', async (t) => {
  const schema = { type: 'object', properties: { a: { type: 'integer' } } }
  const first = cachedSerializerBuilder(undefined, undefined)(route(schema))
  const again = cachedSerializerBuilder(undefined, undefined)({ ...route({ ...schema }), url: '/y', httpStatus: '404' })
  t.equal(again, first, 'an equal schema elsewhere gets the function already compiled')
  t.equal(first({ a: 1, b: 2 }), '{"a":1}', 'and it serializes as fast-json-stringify does')
  const other = cachedSerializerBuilder(undefined, undefined)(route({ type: 'object', properties: { b: { type: 'integer' } } }))
  t.not(other, first, 'another schema, another function')
  t.equal(other({ a: 1, b: 2 }), '{"b":2}')
})

t.test('the shared schemas and the options of the context are part of what is kept', async (t) => {
  const schema = { $ref: 'Shared#' }
  const shared = (properties: Record<string, unknown>): Record<string, unknown> => ({ Shared: { $id: 'Shared', type: 'object', properties } })
  const withA = cachedSerializerBuilder(shared({ a: { type: 'string' } }), undefined)(route(schema))
  const withB = cachedSerializerBuilder(shared({ b: { type: 'string' } }), undefined)(route(schema))
  t.not(withA, withB)
  t.equal(withA({ a: 'x', b: 'y' }), '{"a":"x"}')
  t.equal(withB({ a: 'x', b: 'y' }), '{"b":"y"}')
  const rounded = cachedSerializerBuilder(undefined, { rounding: 'floor' })(route({ type: 'integer' }))
  const plain = cachedSerializerBuilder(undefined, undefined)(route({ type: 'integer' }))
  t.not(rounded, plain)
  t.equal(rounded(1.7), '1')
})

t.test('two servers in one process answer alike through the shared serializers', async (t) => {
  const answers: string[] = []
  for (let round = 0; round < 2; round++) {
    const app = await buildServer({ mappings: [ECHO], options: { logging: { level: 'silent' } } })
    t.teardown(() => app.close())
    const mapped = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'echo', input: { a: [1, 'x'] } } })
    const refused = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'nope', input: {} } })
    answers.push(`${mapped.statusCode} ${mapped.body} ${refused.statusCode} ${JSON.stringify({ ...JSON.parse(refused.body), requestId: undefined })}`)
  }
  t.equal(answers[1], answers[0])
  t.match(answers[0], /^200 \{"echo":\{"a":\[1,"x"\]\},"valid":true,"errors":\[\]\} 404 \{"code":"NotFound"/)
})
