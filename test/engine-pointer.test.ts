// The JSON Pointer profile (language.md §3) where the conformance suite is thin.
import t from 'tap'
import { compileReader, compileWriter, parsePointer, readPointer, resolvePath, type WriteOwnership } from '../engine/pointer.js'
import { evaluateMapping } from '../engine/index.js'

const write = (pointer: string, target: object, value: unknown, ownership: WriteOwnership | null = null): string | undefined =>
  compileWriter(parsePointer(pointer))(target, value, ownership)

t.test('parsing', async (t) => {
  t.same(parsePointer(''), [])
  t.same(parsePointer('/'), [''])
  t.same(parsePointer('/a~1b/c~0d'), ['a/b', 'c~d'])
  t.same(parsePointer('/~01'), ['~1'], '~1 is unescaped before ~0')
  t.same(parsePointer('#/a%20b/c'), ['a b', 'c'], 'fragment form is percent-decoded')
  t.throws(() => parsePointer('a'), { message: 'Invalid JSON Pointer a' })
  t.throws(() => parsePointer(5), { message: 'JSON Pointer must be a string' })
  t.throws(() => parsePointer('#/%E0%A4%A'), URIError)
})

t.test('reads', async (t) => {
  const doc = { a: { b: [10, 20, { c: null }] }, s: 'str', z: 0, '': 'empty' }
  t.equal(readPointer(doc, '/a/b/1'), 20)
  t.equal(readPointer(doc, '/a/b/2/c'), null, 'a present null is defined')
  t.equal(readPointer(doc, '/a/b/01'), undefined, 'non-canonical index')
  t.equal(readPointer(doc, '/a/b/-'), undefined)
  t.equal(readPointer(doc, '/a/b/length'), undefined, 'array members other than indices are not read')
  t.equal(readPointer(doc, '/s/0'), undefined, 'strings are not traversed')
  t.equal(readPointer(doc, '/s/length'), undefined)
  t.equal(readPointer(doc, '/z/x'), undefined, 'falsy values are not traversed')
  t.equal(readPointer(doc, '/constructor'), undefined, 'inherited members are not own properties')
  t.equal(readPointer(doc, '/__proto__'), undefined)
  t.equal(readPointer(doc, '/toString'), undefined)
  t.equal(readPointer(doc, '/'), doc, '"/" is the whole document')
  t.equal(readPointer(doc, '//a'), doc, 'an empty first token denotes the whole document')
  t.equal(readPointer(doc, ''), doc)
  const own = JSON.parse('{"__proto__": {"x": 1}, "constructor": 2}') as object
  t.same(readPointer(own, '/__proto__/x'), 1, 'an own __proto__ key is ordinary data')
  t.equal(readPointer(own, '/constructor'), 2)
  t.equal(compileReader(['a', 'b'])(null), undefined)
})

t.test('reads of the names functions carry (name, call, bind): own members of objects only, on both paths', async (t) => {
  const named = function named(): void {}
  const input = { name: 'n', call: 'c', list: ['x'], author: { name: 'Ada' }, fn: named, nameless: {} }
  t.equal(readPointer(input, '/name'), 'n')
  t.equal(readPointer(input, '/author/name'), 'Ada')
  t.equal(readPointer(input, '/nameless/name'), undefined)
  t.equal(readPointer(input, '/list/name'), undefined, 'an array has no member of that name')
  t.equal(readPointer(input, '/fn/name'), undefined, 'a function is not traversed')
  t.equal(readPointer(input, '/fn/call'), undefined)
  const mapping = { '/a': '/name', '/b': '/author/name', '/c': '/nameless/name', '/d': '/list/name', '/e': '/fn/name', '/f': { source: '/fn/bind', default: 'none' }, '/g': '/call' }
  for (const codegen of [true, false]) {
    t.strictSame(await evaluateMapping({ mapping }, { input, codegen, stdout: () => {} }), { a: 'n', b: 'Ada', f: 'none', g: 'c' }, `codegen ${codegen}`)
  }
})

t.test('writes: the examples of §3.4', async (t) => {
  const cases: Array<[string, unknown, unknown, unknown]> = [
    ['/a/0/b', {}, 'x', { a: [{ b: 'x' }] }],
    ['/a/1/b', {}, 'x', { a: [{ b: 'x' }] }],
    ['/a/-', {}, 'x', { a: ['x'] }],
    ['/list/-', { list: [1, 2] }, 3, { list: [1, 2, 3] }],
    ['/a/1', { a: [1, 2, 3] }, 'X', { a: [1, 'X', 2, 3] }],
    ['/a/9', { a: [1, 2, 3] }, 'X', { a: [1, 2, 3, 'X'] }],
    ['/b/b', { a: 1 }, 2, { a: 1, b: { b: 2 } }],
    ['/a~1b/c~0d', {}, 'X', { 'a/b': { 'c~d': 'X' } }],
    ['/a/b', { a: 0 }, 1, { a: { b: 1 } }],
    ['/a/b', { a: null }, 1, { a: { b: 1 } }],
    ['/', {}, 1, { '': 1 }],
  ]
  for (const [pointer, target, value, expected] of cases) {
    t.equal(write(pointer, target as object, value), undefined)
    t.same(target, expected, `${pointer} ← ${JSON.stringify(value)}`)
  }
})

t.test('writes: undefined and empty pointers write nothing', async (t) => {
  const target = {}
  write('/a/b/c', target, undefined)
  t.same(target, {}, 'no intermediate container is created for undefined')
  write('', target, 1)
  t.same(target, {})
})

t.test('writes: PTR-6 non-integer final token on an array is refused', async (t) => {
  const target = { a: [1, 2] }
  t.equal(write('/a/x', target, 3), 'array index must be a non-negative integer or -')
  t.equal(write('/a/1.5', target, 3), 'array index must be a non-negative integer or -')
  t.equal(write('/a/-1', target, 3), 'array index must be a non-negative integer or -')
  t.equal(write('/a/x/y', target, 3), 'array index must be a non-negative integer or -', 'intermediate too')
  t.same(target, { a: [1, 2] }, 'nothing written')
  const errors: unknown[] = []
  const result = await evaluateMapping({ mapping: { '/a': { constant: [1] }, '/a/first': { constant: 2 } } }, { input: {}, errors: errors as never })
  t.equal(result, null, 'the diagnostic short-circuits like any error object')
  t.same(errors, [{ target: '/a/first', message: 'array index must be a non-negative integer or -' }])
})

t.test('writes: an intermediate - appends a new container', async (t) => {
  const target = { a: [{ b: 1 }] }
  write('/a/-/b', target, 2)
  t.same(target, { a: [{ b: 1 }, { b: 2 }] })
})

t.test('writes: a truthy primitive cannot be written through (PTR-7)', async (t) => {
  t.throws(() => write('/a/b', { a: 5 }, 1), { message: "Cannot create property 'b' on number '5'" })
  t.throws(() => write('/a/b', { a: 'str' }, 1), { message: "Cannot create property 'b' on string 'str'" })
})

t.test('writes never reach a prototype', async (t) => {
  const target: Record<string, unknown> = {}
  write('/__proto__/polluted', target, 'yes')
  write('/constructor/prototype/polluted', target, 'yes')
  write('/__proto__', target, { polluted: 'yes' })
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is untouched')
  t.equal(Object.getPrototypeOf(target), Object.prototype)
  t.same(JSON.parse(JSON.stringify(target)), { __proto__: { polluted: 'yes' }, constructor: { prototype: { polluted: 'yes' } } })
  t.ok(Object.hasOwn(target, '__proto__'), '__proto__ is an own data property')
})

t.test('writes copy containers that came from outside before writing through them', async (t) => {
  const shared = { list: [1, 2] }
  const foreign = new WeakSet<object>([shared, shared.list])
  const ownership: WriteOwnership = {
    isForeign: (c) => foreign.has(c),
    adopt: (copy) => {
      for (const v of Object.values(copy)) if (v !== null && typeof v === 'object') foreign.add(v)
    },
  }
  const target: Record<string, unknown> = { x: shared }
  write('/x/list/-', target, 3, ownership)
  t.same(shared, { list: [1, 2] }, 'the original is unchanged')
  t.same(target, { x: { list: [1, 2, 3] } })
})

t.test('relative path arithmetic (§3.6)', async (t) => {
  t.equal(resolvePath('/b', '../d/e'), '/d/e')
  t.equal(resolvePath('/a/b', '../sib'), '/a/sib')
  t.equal(resolvePath('/', '../c'), '/c')
  t.equal(resolvePath('/a', '.././/c/./d'), '/c/d')
  t.equal(resolvePath('/items/3', '/', '../../name'), '/name')
  t.equal(resolvePath('/a', '..\\b'), '/b', 'backslashes count as separators')
})
