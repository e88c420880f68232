// POST /map (http.md §4): the registered form (own ids only), results as data at 200 unless
// invalidStatus promotes them, an absent input, the explicit form (off → 403; on → validated with
// the screens, then evaluated statelessly with its members shadowing installed ids for that request
// only), failures of extensions, and what extensions see (identity, the client's abort signal).
import net from 'node:net'
import t from 'tap'
import type { EvaluationContext } from '../engine/index.js'
import { ECHO, GREETINGS, SECRET, STRICT, bearer, call, originOf, serve, settlesWithin, shared } from './http-support.js'

const map = (payload: unknown) => ({ method: 'POST' as const, url: '/map', payload: payload as object })

// Tests that need the same options share one server (a build costs a few hundred milliseconds, a
// worker pool for explicit documents a second more); none of them leaves anything a later one could
// see (the explicit form registers nothing, as one of them asserts). A test whose options are its
// own builds its own server.

/** An input-less mapping: constants, defaults and initializers still apply. */
const ABSENT = { $id: 'absent', mapping: { '/c': { constant: 1 }, '/d': { source: '/x', default: 'z' }, '/e': { init: 'stamp' }, '/f': '/x' } }
/** The registered form, explicit form off (the default). */
const registered = shared(t, { mappings: [ECHO, GREETINGS, STRICT, ABSENT], extensions: { initializers: { stamp: () => 'stamped' } } })
/**
 * The explicit form on, its documents evaluated in worker threads (the default isolation), with
 * invalidStatus 422: one server and one worker pool (a second or more of CPU per thread) for the
 * explicit tests and the invalidStatus ones. The explicit tests' documents are valid or refused at
 * admission (InvalidMappingDocument), which invalidStatus leaves alone, and GET /mappings is
 * compared before and after, whatever it lists.
 */
const explicit = shared(t, { mappings: [ECHO, STRICT, { $id: 'needs', mapping: { '/a': { source: '/a', required: true } } }], options: { map: { invalidStatus: 422, explicit: true } } })
const promoting = explicit

/** Yields, so that concurrent evaluations interleave. */
const pause = async (_options: unknown, value: unknown): Promise<unknown> => {
  await new Promise((resolve) => setImmediate(resolve))
  return value
}
const explode = (): never => {
  throw new Error('kaboom')
}
const BOOM = { $id: 'boom', mapping: { '/x': { source: '/a', transform: 'explode' } } }
/** What `look` saw of context.identity, request by request. */
const identities: unknown[] = []
const look = async (_options: unknown, value: unknown, context: EvaluationContext): Promise<unknown> => {
  identities.push(context.identity)
  return value
}
const LOOKING = { $id: 'looking', mapping: { '/v': { constant: 1, look: {} } } }
/** `hold` hands its context to the test that asked (it resolves when the test says). */
const holding: Array<(context: EvaluationContext, done: () => void) => void> = []
const hold = (_options: unknown, value: unknown, context: EvaluationContext): Promise<unknown> =>
  new Promise((resolve) => holding.shift()?.(context, () => resolve(value)))
/** What `settle` saw of context.signal once a turn had passed. */
const settled: boolean[] = []
const settle = async (_options: unknown, value: unknown, context: EvaluationContext): Promise<unknown> => {
  await new Promise((resolve) => setImmediate(resolve))
  settled.push(context.signal?.aborted ?? true)
  return value
}
/** Extensions given as functions run inline (isolation.test.ts covers workers); listening on 127.0.0.1. */
const inline = shared(
  t,
  {
    mappings: [
      ECHO,
      BOOM,
      LOOKING,
      { $id: 'held', mapping: { '/v': { constant: 1, hold: {} } } },
      { $id: 'settling', mapping: { '/v': { constant: 1, settle: {} } } },
    ],
    extensions: { plugins: { pause, look, hold, settle }, transformers: { explode } },
    options: { map: { explicit: true }, isolation: false },
  },
  { listen: true }
)

t.test('registered form: 200 with the envelope, output keys first', async (t) => {
  const app = await registered()
  const echo = await call(app, map({ mapping: 'echo', input: { hello: 'world' } }))
  t.equal(echo.statusCode, 200)
  t.equal(echo.body, '{"echo":{"hello":"world"},"valid":true,"errors":[]}')
  const greet = await call(app, map({ mapping: 'greet', input: { message: 'hello' } }))
  t.same(greet.data, { text: 'hello', valid: true, errors: [] })
})

t.test('registered form: prototype members and unknown ids are 404', async (t) => {
  const app = await registered()
  for (const id of ['__proto__', 'toString', 'constructor', 'hasOwnProperty', 'valueOf', '', 'greetings', 'nope']) {
    const response = await call(app, map({ mapping: id, input: {} }))
    t.equal(response.statusCode, 404, JSON.stringify(id))
    t.equal(response.data.code, 'NotFound')
    t.equal(response.data.message, `No mapping registered as "${id}"`)
  }
})

t.test('mapping missing, or neither a string nor a plain object: 400', async (t) => {
  const app = await explicit()
  const bodies: unknown[] = [{}, { input: {} }, { mapping: 42 }, { mapping: null }, { mapping: true }, { mapping: ['echo'] }, [{ mapping: 'echo' }], 'echo', 7, null]
  for (const body of bodies) {
    const response = await call(app, { method: 'POST', url: '/map', payload: JSON.stringify(body) })
    t.equal(response.statusCode, 400, JSON.stringify(body))
    t.equal(response.data.code, 'BadRequest')
    t.equal(response.data.message, '"mapping" must be a string naming a registered mapping, or a mapping document object')
  }
})

t.test('valid: false is data at 200 by default', async (t) => {
  const app = await registered()
  const response = await call(app, map({ mapping: 'strict', input: { name: 42 } }))
  t.equal(response.statusCode, 200)
  t.equal(response.data.valid, false)
  t.ok(Array.isArray(response.data.errors) && response.data.errors.length > 0)
  t.equal(typeof response.data.errors[0].message, 'string')
})

t.test('invalidStatus promotes valid: false to ValidationError with errors; valid results stay 200', async (t) => {
  const app = await promoting()
  const refused = await call(app, map({ mapping: 'strict', input: { name: 42 } }))
  t.equal(refused.statusCode, 422)
  t.equal(refused.data.code, 'ValidationError')
  t.equal(refused.data.message, 'Mapping validation failed')
  t.same(refused.data.errors, [{ source: '/name', value: 42, type: 'string', message: 'must be a string' }])
  const fine = await call(app, map({ mapping: 'strict', input: { name: 'Ada' } }))
  t.same(fine.data, { name: 'Ada', valid: true, errors: [] })
  const explicit = await call(app, map({ mapping: { mapping: { '/n': { source: '/n', type: 'number' } } }, input: { n: 'x' } }))
  t.equal(explicit.statusCode, 422, 'honoured by the explicit form too')
  t.equal(explicit.data.code, 'ValidationError')
  const teapot = await serve(t, { mappings: [STRICT], options: { map: { invalidStatus: 418 } } })
  t.equal((await call(teapot, map({ mapping: 'strict', input: { name: 42 } }))).statusCode, 418)
})

t.test('input absent: every read is undefined, constants, initializers and defaults still apply', async (t) => {
  const app = await registered()
  t.same((await call(app, map({ mapping: 'absent' }))).data, { c: 1, d: 'z', e: 'stamped', valid: true, errors: [] })
  const echo = await call(app, map({ mapping: 'echo' }))
  t.equal(echo.statusCode, 200)
  t.same(echo.data, { valid: true, errors: [] })
})

t.test('explicit form disabled: 403 Forbidden for every document shape', async (t) => {
  const app = await registered()
  for (const mapping of [GREETINGS, { mapping: { '/text': '/message' } }, { '/text': '/message' }, {}]) {
    const response = await call(app, map({ mapping, input: { message: 'hi' } }))
    t.equal(response.statusCode, 403)
    t.same(response.data, { code: 'Forbidden', message: "The explicit mapping form is not enabled on this deployment: the option map.explicit turns this on (in OPTIONS, OPTIONS_FILE or the plugin's options)", requestId: response.headers['x-request-id'] })
  }
})

t.test('explicit form enabled: a compound document, a single descriptor, a bare pairing map', async (t) => {
  const app = await explicit()
  t.same((await call(app, map({ mapping: GREETINGS, input: { message: 'hello' } }))).data, { text: 'hello', valid: true, errors: [] })
  t.same((await call(app, map({ mapping: { mapping: { '/text': '/message' } }, input: { message: 'hi' } }))).data, { text: 'hi', valid: true, errors: [] })
  t.same((await call(app, map({ mapping: { '/text': '/message' }, input: { message: 'hi' } }))).data, { text: 'hi', valid: true, errors: [] })
  const inner = await call(app, map({ mapping: { mapping: { '/inner': 'echo' } }, input: { message: 'hi' } }))
  t.same(inner.data, { inner: { echo: { message: 'hi' } }, valid: true, errors: [] }, 'references reach the installed registry')
})

t.test('explicit form enabled with claims: only callers holding them', async (t) => {
  // The gate is the subject: the allowed document runs inline (isolation: false), sparing a worker
  // pool of its own; the explicit tests above and below run theirs in worker threads.
  const app = await serve(t, { options: { auth: { secret: SECRET }, map: { explicit: { claims: { scope: 'explicit' } } }, isolation: false } })
  const denied = await call(app, { ...map({ mapping: GREETINGS, input: { message: 'x' } }), headers: bearer({ scope: 'read' }) })
  t.equal(denied.statusCode, 403)
  const allowed = await call(app, { ...map({ mapping: GREETINGS, input: { message: 'x' } }), headers: bearer({ scope: 'read explicit' }) })
  t.same(allowed.data, { text: 'x', valid: true, errors: [] })
  const registered = await call(app, { ...map({ mapping: 'echo', input: 1 }), headers: bearer({ scope: 'read' }) })
  t.equal(registered.statusCode, 200, 'the registered form needs no explicit claims')
})

t.test('explicit form: an invalid document is 422 InvalidMappingDocument with the full report', async (t) => {
  const app = await explicit()
  const cases: Array<[name: string, document: unknown, errors: unknown[]]> = [
    [
      'an unknown transformer',
      { mapping: { '/slug': { source: '/title', transform: 'slugify' } } },
      [{ rule: 'KW-transform-1', message: 'slugify matches no registered transformer', pointer: '/mapping/~1slug/transform', descriptor: 'slugify' }],
    ],
    [
      'a catastrophic pattern',
      { $id: 'redos', mapping: { '/out': { source: '/s', pattern: '(a+)+$' } } },
      [{ rule: 'KW-pattern-2', message: 'pattern must not quantify a group that contains a quantifier', pointer: '/mapping/~1out/pattern', descriptor: '(a+)+$' }],
    ],
    [
      'mapping of the wrong type',
      { mapping: 42 },
      [{ rule: 'KW-mapping-1', message: 'mapping must be an object of pairings or a mapping reference', pointer: '/mapping', descriptor: 42 }],
    ],
  ]
  for (const [name, document, errors] of cases) {
    const response = await call(app, map({ mapping: document, input: { s: 'aaaa' } }))
    t.equal(response.statusCode, 422, name)
    t.equal(response.data.code, 'InvalidMappingDocument')
    t.equal(response.data.message, 'The submitted mapping document is invalid')
    t.same(response.data.report, { valid: false, errors, warnings: [] }, name)
  }
})

t.test('explicit form: admission screens REG-6 (forbidden member ids) and DOC-6 (depth)', async (t) => {
  const app = await explicit()
  for (const id of ['__proto__', 'constructor', 'prototype']) {
    // Written as JSON text so the id is data, exactly as a client sends it.
    const payload = `{"mapping":{"mappings":{"bad":{"$id":${JSON.stringify(id)},"mapping":{"/x":"/y"}}}},"input":{"y":1}}`
    const response = await call(app, { method: 'POST', url: '/map', payload })
    t.equal(response.statusCode, 422, id)
    t.same(response.data.report, {
      valid: false,
      errors: [{ rule: 'REG-6', message: `"${id}" is not allowed as a mapping $id`, pointer: '/mappings/bad/$id', descriptor: id }],
      warnings: [],
    })
  }
  t.equal(Object.getOwnPropertyNames(Object.prototype).includes('x'), false)
  t.equal(({} as Record<string, unknown>).mapping, undefined, 'Object.prototype is untouched')

  let deep: unknown = { '/x': '/y' }
  for (let level = 0; level < 150; level++) deep = { '/x': { mapping: deep } }
  const response = await call(app, map({ mapping: { mapping: deep }, input: {} }))
  t.equal(response.statusCode, 422)
  t.equal(response.data.code, 'InvalidMappingDocument')
  const [error] = response.data.report.errors
  t.equal(error.rule, 'DOC-6')
  t.equal(error.message, 'mapping nesting exceeds the maximum depth of 100')
  t.match(error.pointer, /^\/mapping(\/~1x\/mapping)+/)
  t.ok('descriptor' in error)
})

t.test('explicit form: a member shadows an installed id for that request only', async (t) => {
  const app = await explicit()
  const shadowing = { mappings: { echo: { $id: 'echo', mapping: { '/shadowed': '/message' } }, main: { $id: 'main', mapping: { '/inner': 'echo' } } } }
  const shadowed = await call(app, map({ mapping: shadowing, input: { message: 'hi' } }))
  t.same(shadowed.data, { inner: { shadowed: 'hi' }, valid: true, errors: [] })
  const registered = await call(app, map({ mapping: 'echo', input: { message: 'hi' } }))
  t.same(registered.data, { echo: { message: 'hi' }, valid: true, errors: [] }, 'the installed echo is unchanged')
  const referencing = await call(app, map({ mapping: { mapping: { '/inner': 'echo' } }, input: { message: 'hi' } }))
  t.same(referencing.data, { inner: { echo: { message: 'hi' } }, valid: true, errors: [] })
})

t.test('explicit form: nothing is registered, GET /mappings never lists a submission', async (t) => {
  const app = await explicit()
  const before = (await call(app, { method: 'GET', url: '/mappings' })).data
  t.equal((await call(app, map({ mapping: GREETINGS, input: { message: 'hello' } }))).statusCode, 200)
  const after = (await call(app, { method: 'GET', url: '/mappings' })).data
  t.same(after, before)
  t.notOk('greet' in after)
  t.equal((await call(app, map({ mapping: 'greet', input: {} }))).statusCode, 404, 'a member is not callable by id afterwards')
})

t.test('explicit form: 50 concurrent documents defining the same member id differently', async (t) => {
  // The plugin yields, so the evaluations interleave.
  const app = await inline()
  const before = (await call(app, { method: 'GET', url: '/mappings' })).body
  const document = (i: number) => ({
    mappings: {
      member: { $id: 'member', mapping: { '/which': { constant: `document-${i}`, pause: {} } } },
      echo: { $id: 'echo', mapping: { '/shadow': { constant: i, pause: {} } } },
      main: { $id: 'main', mapping: { '/member': 'member', '/echo': 'echo', '/input': { source: '/i', pause: {} } } },
    },
  })
  const responses = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      i % 5 === 4 ? call(app, map({ mapping: 'echo', input: { i } })) : call(app, map({ mapping: document(i), input: { i } }))
    )
  )
  responses.forEach((response, i) => {
    const expected = i % 5 === 4 ? { echo: { i }, valid: true, errors: [] } : { member: { which: `document-${i}` }, echo: { shadow: i }, input: i, valid: true, errors: [] }
    t.same(response.data, expected, `request ${i}`)
  })
  t.equal((await call(app, { method: 'GET', url: '/mappings' })).body, before, 'GET /mappings is unchanged')
})

t.test('explicit form: compiled plans are cached unobservably, even for documents that print alike', async (t) => {
  const app = await explicit()
  // JSON.stringify prints 1e400 (Infinity) as null and -0 as 0: one must never get the other's plan.
  const send = (constant: string) => call(app, { method: 'POST', url: '/map', payload: `{"mapping":{"mapping":{"/x":{"constant":${constant},"as":"string"}}}}` })
  t.same((await send('1e400')).data, { x: 'Infinity', valid: true, errors: [] })
  t.same((await send('null')).data, { x: 'null', valid: true, errors: [] })
  t.same((await send('1e400')).data, { x: 'Infinity', valid: true, errors: [] })
  const repeated = await Promise.all([send('"a"'), send('"b"'), send('"a"')])
  t.same(repeated.map((response) => response.data.x), ['a', 'b', 'a'])
})

t.test('extension failures: a throwing transformer is 500, registered or explicit', async (t) => {
  const app = await inline()
  for (const mapping of ['boom', { mapping: BOOM.mapping }]) {
    const response = await call(app, map({ mapping, input: { a: 1 } }))
    t.equal(response.statusCode, 500)
    t.same(response.data, { code: 'InternalError', message: 'An unexpected error occurred', requestId: response.headers['x-request-id'] })
  }
})

t.test('context.identity: the verified token payload, null when auth is off', async (t) => {
  const seen = identities.length
  const open = await inline()
  t.equal((await call(open, map({ mapping: 'looking' }))).statusCode, 200)
  const secured = await serve(t, { mappings: [LOOKING], extensions: { plugins: { look } }, options: { auth: { secret: SECRET } } })
  t.equal((await call(secured, { ...map({ mapping: 'looking' }), headers: bearer({ sub: 'alice', role: 'admin' }) })).statusCode, 200)
  t.equal(identities.length, seen + 2)
  t.equal(identities[seen], null)
  t.match(identities[seen + 1], { sub: 'alice', role: 'admin' })
})

t.test('context.signal: aborted when the client disconnects (real server)', async (t) => {
  let entered!: () => void
  const started = new Promise<void>((resolve) => (entered = resolve))
  let sawAbort!: () => void
  const aborted = new Promise<void>((resolve) => (sawAbort = resolve))
  const states: boolean[] = []
  holding.push((context, done) => {
    states.push(context.signal?.aborted ?? true)
    entered()
    context.signal?.addEventListener('abort', () => {
      sawAbort()
      done()
    }, { once: true })
  })
  const app = await inline()
  const { port } = new URL(originOf(app))
  const socket = net.connect(Number(port), '127.0.0.1')
  t.teardown(() => socket.destroy())
  const body = JSON.stringify({ mapping: 'held', input: {} })
  socket.write(`POST /map HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
  t.ok(await settlesWithin(started, 5000), 'the plugin was reached')
  t.same(states, [false], 'not aborted while the client waits')
  socket.destroy()
  t.ok(await settlesWithin(aborted, 5000), 'the plugin saw context.signal abort')
})

t.test('context.signal: not aborted by a request that completes normally (real server)', async (t) => {
  const app = await inline()
  const before = settled.length
  const response = await fetch(`${originOf(app)}/map`, { method: 'POST', body: JSON.stringify({ mapping: 'settling' }), signal: AbortSignal.timeout(10000) })
  t.equal(response.status, 200)
  t.same(await response.json(), { v: 1, valid: true, errors: [] })
  t.same(settled.slice(before), [false])
})

t.test('POST /map/{id}: the registered form with the id in the path and the input in the body', async (t) => {
  const app = await serve(t, { mappings: [ECHO, GREETINGS, { $id: 'mapping:Kv', mapping: { '/key': '/k' } }], options: { auth: { secret: SECRET }, map: { claims: { role: 'mapper' } } } })
  const headers = bearer({ role: 'mapper' })
  const greet = await call(app, { method: 'POST', url: '/map/greet', headers, payload: { input: { message: 'hi' } } })
  t.equal(greet.statusCode, 200)
  t.strictSame(greet.data, { text: 'hi', valid: true, errors: [] })
  t.strictSame((await call(app, { method: 'POST', url: '/map/mapping%3AKv', headers, payload: { input: { k: 1 } } })).data, { key: 1, valid: true, errors: [] }, 'the id percent-decoded')
  t.strictSame((await call(app, { method: 'POST', url: '/map/echo', headers, payload: {} })).data, { valid: true, errors: [] }, 'an absent input')
  t.strictSame((await call(app, { method: 'POST', url: '/map/echo', headers, payload: [1] })).statusCode, 400, 'the body is { input }')
  const member = await call(app, { method: 'POST', url: '/map/echo', headers, payload: { mapping: 'greet', input: {} } })
  t.equal(member.statusCode, 400, 'no other member')
  const unknown = await call(app, { method: 'POST', url: '/map/nope', headers, payload: { input: {} } })
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.data.message, 'No mapping registered as "nope"')
  t.equal((await call(app, { method: 'POST', url: '/map/__proto__', headers, payload: { input: {} } })).statusCode, 404, 'own ids only')
  t.equal((await call(app, { method: 'POST', url: '/map/greet', payload: { input: {} } })).statusCode, 401)
  t.equal((await call(app, { method: 'POST', url: '/map/greet', headers: bearer({ role: 'nobody' }), payload: { input: {} } })).statusCode, 403, 'map.claims, as POST /map')
})

t.test('POST /map/{id}: map.invalidStatus promotes an invalid result as POST /map does', async (t) => {
  const app = await promoting()
  const refused = await call(app, { method: 'POST', url: '/map/needs', payload: { input: {} } })
  t.equal(refused.statusCode, 422)
  t.equal(refused.data.code, 'ValidationError')
})

t.test('a path parameter longer than the router takes: 414 URITooLong, never a 500', async (t) => {
  const app = await registered()
  for (const url of [`/map/${'x'.repeat(200)}`, `/mappings/${'y'.repeat(200)}/schema`]) {
    const answer = await call(app, { method: url.startsWith('/map/') ? 'POST' : 'GET', url, payload: url.startsWith('/map/') ? { input: {} } : undefined })
    t.equal(answer.statusCode, 414, url.slice(0, 12))
    t.match(answer.data, { code: 'URITooLong', message: 'A path segment is longer than this server accepts' })
  }
})
