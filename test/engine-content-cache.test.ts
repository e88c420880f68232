// The content key of explicit documents (engine/content-cache.ts): a document's JSON text, or no
// key at all when that text would not tell it apart from another document, or it nests too deep.
import t from 'tap'
import { contentKey } from '../engine/content-cache.js'

t.test('a printable document is keyed by its JSON text; a long one by a hash of it, with the text length', async (t) => {
  const document = { mapping: { '/a': { source: '/b', enum: [1, 'x', null, true, { c: [2.5] }] } } }
  t.same(contentKey(document, 100), { key: JSON.stringify(document), size: JSON.stringify(document).length })
  const long = { mapping: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`/k${i}`, { source: `/v${i}` }])) }
  const keyed = contentKey(long, 100)!
  t.equal(keyed.size, JSON.stringify(long).length)
  t.ok(keyed.key.length < 100, 'hashed')
  t.same(contentKey(structuredClone(long), 100), keyed, 'the same content, the same key')
})

t.test('no key where the text would mistake one document for another: -0 and non-finite numbers at any depth, arrays included', async (t) => {
  for (const number of [-0, Infinity, -Infinity, NaN]) {
    t.equal(contentKey({ mapping: { '/a': { constant: number } } }, 100), undefined, `${Object.is(number, -0) ? '-0' : number} in an object`)
    t.equal(contentKey({ mapping: { '/a': { enum: [1, [2, [number]]] } } }, 100), undefined, `${Object.is(number, -0) ? '-0' : number} in nested arrays`)
  }
  t.ok(contentKey({ mapping: { '/a': { constant: 0 } } }, 100), '0 itself is printable')
})

t.test('no key for a document nesting deeper than the bound, in objects or arrays', async (t) => {
  const nest = (levels: number, wrap: (inner: unknown) => unknown): unknown => {
    let value: unknown = 1
    for (let i = 0; i < levels; i++) value = wrap(value)
    return value
  }
  t.ok(contentKey(nest(10, (inner) => ({ a: inner })) as object, 10), 'ten levels within a bound of ten')
  t.equal(contentKey(nest(11, (inner) => ({ a: inner })) as object, 10), undefined, 'eleven object levels')
  t.equal(contentKey(nest(11, (inner) => [inner]) as object, 10), undefined, 'eleven array levels')
})
