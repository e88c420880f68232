// Safety of evaluation: no mutation of the input or the document, no prototype pollution, bounded
// depth, JSON-only outputs.
import t from 'tap'
import { Mapper, MAX_DOCUMENT_DEPTH, evaluate } from '../engine/index.js'

t.test('evaluation never mutates the input', async (t) => {
  const mapper = new Mapper()
  const input = { list: [1, 2], obj: { a: 1 }, items: [{ n: 1 }] }
  const snapshot = structuredClone(input)
  const envelope = await mapper.map(
    {
      mapping: {
        '/list': '/list',
        '/list/-': { constant: 3 },
        '/obj': '/obj',
        '/obj/b': { constant: 2 },
        '/copy': '/obj',
        '/copy/c': { constant: 3 },
        '/rows': { source: '/items', each: { '/n': '/n' } },
        '/whole': '/',
        '/whole/extra': { constant: true },
      },
    },
    input
  )
  t.same(input, snapshot, 'the input is unchanged')
  t.same(envelope.list, [1, 2, 3])
  t.same(envelope.obj, { a: 1, b: 2 })
  t.same(envelope.copy, { a: 1, c: 3 }, 'two writes of one input object do not see each other')
  t.same((envelope.whole as Record<string, unknown>).extra, true)
})

t.test('evaluation never mutates the document, and runs are independent', async (t) => {
  const document = { mapping: { '/list': { constant: [1, 2] }, '/list/-': { constant: 3 }, '/d': { source: '/x', default: { k: [] } }, '/d/k/-': { constant: 1 } } }
  const snapshot = structuredClone(document)
  const mapper = new Mapper()
  const first = await mapper.map(document, {})
  const second = await mapper.map(document, {})
  t.same(document, snapshot, 'the document is unchanged')
  t.same(first, second, 'a second run gives the same envelope')
  t.same(first.list, [1, 2, 3])
  t.same(first.d, { k: [1] })
  ;(first.list as unknown[]).push('caller mutation')
  t.same((await mapper.map(document, {})).list, [1, 2, 3], 'outputs share nothing with the plan')
})

t.test('reading the output never makes it contain itself', async (t) => {
  const mapper = new Mapper()
  const envelope = await mapper.map({ mapping: { '/a': { constant: 1 }, '/all': { output: '/' }, '/t': { target: '/' } } }, {})
  t.doesNotThrow(() => JSON.stringify(envelope))
  t.same(envelope, { a: 1, all: { a: 1 }, t: { a: 1, all: { a: 1 } }, valid: true, errors: [] })
})

t.test('no document reaches Object.prototype', async (t) => {
  const mapper = new Mapper()
  const envelope = await mapper.map(
    {
      mapping: {
        '/__proto__/polluted': { constant: 'yes' },
        '/constructor/prototype/polluted': { constant: 'yes' },
        '/x': { source: '/constructor' },
        '/y': { switch: { source: '/k', cases: { constructor: { constant: 'hit' } } }, source: '/' },
        '/z': 'toString',
      },
    },
    { k: 'constructor' }
  )
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  t.equal(Object.hasOwn(Object.prototype, 'polluted'), false)
  t.same(JSON.parse(JSON.stringify(envelope)), {
    valid: false,
    errors: [{ descriptor: 'toString', message: 'unrecognized string descriptor' }],
  }, 'name strings resolve own registry entries only: toString is unrecognized')
  const clean = await mapper.map({ mapping: { '/__proto__/polluted': { constant: 'yes' }, '/x': { source: '/constructor' } } }, {})
  t.same(JSON.parse(JSON.stringify(clean)), { __proto__: { polluted: 'yes' }, valid: true, errors: [] })
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('a mapping id __proto__ is an ordinary id, never a prototype member', async (t) => {
  const mapper = new Mapper({ mappings: { x: { $id: '__proto__', mapping: { '/v': '/a' } } } })
  t.ok(Object.hasOwn(mapper.mappings, '__proto__'))
  t.equal(Object.getPrototypeOf(mapper.mappings), Object.prototype)
  t.same(await mapper.map('__proto__', { a: 1 }), { v: 1, valid: true, errors: [] })
  t.same(await mapper.map({ mapping: { '/r': { $ref: 'constructor' } } }, {}), {
    valid: false,
    errors: [{ $ref: 'constructor', message: 'unknown mapping reference' }],
  })
})

t.test('deep documents: depth 100 evaluates, deeper is refused with a clear error', async (t) => {
  const nested = (levels: number): Record<string, unknown> => {
    // Each level adds two: the descriptor object and its pairing map.
    let descriptor: Record<string, unknown> = { constant: 'leaf' }
    for (let i = 0; i < levels; i++) descriptor = { source: '/', mapping: { '/n': descriptor } }
    return descriptor
  }
  const mapper = new Mapper()
  const ok = await mapper.map(nested(49), {})
  let depth = 0
  for (let v: unknown = ok; v !== null && typeof v === 'object'; v = (v as Record<string, unknown>).n) depth++
  t.equal(depth, 49, 'every level is mapped')
  await t.rejects(mapper.map(nested(60), {}), { message: `mapping nesting exceeds the maximum depth of ${MAX_DOCUMENT_DEPTH}` })
  const deepInput = (levels: number): Record<string, unknown> => {
    const root: Record<string, unknown> = {}
    let cursor = root
    for (let i = 1; i < levels; i++) cursor = (cursor.a = {}) as Record<string, unknown>
    return root
  }
  const copy = await mapper.map({ mapping: { '/copy': '/', '/snap': { output: '/copy' } } }, deepInput(900))
  t.equal(copy.valid, true, 'a deep input is copied without exhausting the stack')
  // Deeper than any output may print (outputDepth): refused as the value is written, never a RangeError.
  await t.rejects(mapper.map({ mapping: { '/copy': '/', '/snap': { output: '/copy' } } }, deepInput(10_000)), {
    name: 'BudgetExceeded',
    budget: 'outputDepth',
    limit: 1000,
    used: 1001,
    pointer: '/mapping/~1copy',
  })
})

t.test('self-reference: recursive data maps as deep as it goes; a scope that never shrinks is stopped', async (t) => {
  const mapper = new Mapper({
    mappings: [
      { $id: 'node', mapping: { '/v': '/v', '/c': { source: '/c', mapping: 'node' } } },
      { $id: 'loop', mapping: { '/a': { $ref: 'loop' } } },
      { $id: 'loop-read', mapping: { '/a': ['/none', { first: [{ $ref: 'loop-read' }] }] } },
    ],
  })
  let input: Record<string, unknown> = { v: 0 }
  for (let i = 1; i <= 200; i++) input = { v: i, c: input }
  const envelope = await mapper.map('node', input)
  t.same(envelope.valid, true)
  t.same(JSON.parse(JSON.stringify(envelope)).v, 200)
  await t.rejects(mapper.map('loop', {}), { name: 'BudgetExceeded', code: 'BudgetExceeded', budget: 'depth', limit: 500, used: 501, mapping: 'loop', pointer: '/mapping/~1a' })
  await t.rejects(mapper.map('loop-read', {}), { name: 'BudgetExceeded', budget: 'depth', mapping: 'loop-read', pointer: '/mapping/~1a' })
})

t.test('outputs never contain NaN, Infinity or undefined', async (t) => {
  for (const s of ['abc', 'Infinity', '-Infinity', '1e400', 'NaN']) {
    t.equal(await evaluate({ source: '/s', as: 'number' }, { input: { s } }), null, `as number of ${s}`)
  }
  t.equal(await evaluate({ source: '/s', as: 'number' }, { input: { s: [1, [2]] } }), null)
  t.equal(await evaluate({ source: '/s', as: 'number' }, { input: { s: { valueOf: 1, toString: 2 } } }), null, 'no host conversion of objects')
  t.equal(await evaluate({ source: '/s', as: 'string' }, { input: { s: [{ toString: 1 }, null, [3]] } }), '[object Object],,3')
  t.equal(await evaluate({ source: '/s', as: 'string' }, { input: { s: null } }), 'null', 'decision 10')
})
