// The engine's public API (docs/spec/language.md Part 2 "API"): registration, compound documents evaluated
// without registering, the read-only registry view, compiled plans, array input, the envelope, and
// `new Mapper({ mappings })` taking every shape the service's `mappings` takes, loadMappings() entries included.
import t from 'tap'
import { DocumentError, Mapper, evaluate, evaluateMapping, extend, type MappingEntry, type MappingsInput } from '../engine/index.js'
import { loadMappings, mappingEntries } from '../sources/mappings.js'
import { tempTree } from './startup-support.js'

const parent = { $id: 'mapping:Parent', description: 'parent', mapping: { '/a': '/a' } }
const child = { $id: 'mapping:Child', $extend: 'mapping:Parent', mapping: { '/b': '/b' } }

t.test('construction registers and flattens; the view is read-only', async (t) => {
  const mapper = new Mapper({ mappings: { p: parent, c: child } })
  t.same(mapper.mappings['mapping:Child'], { $id: 'mapping:Child', description: 'parent', mapping: { '/a': '/a', '/b': '/b' } })
  t.ok(Object.isFrozen(mapper.mappings))
  t.throws(() => {
    ;(mapper.mappings as Record<string, unknown>).x = 1
  })
  t.same(await mapper.map('mapping:Child', { a: 1, b: 2 }), { a: 1, b: 2, valid: true, errors: [] })
})

t.test('registration errors name what is wrong', async (t) => {
  t.throws(() => new Mapper({ mappings: { c: child } }), { message: 'Unknown mapping "mapping:Parent"' })
  t.throws(() => new Mapper({ mappings: [{ $id: 'a', $extend: 'b', mapping: {} }, { $id: 'b', $extend: 'a', mapping: {} }] }), {
    message: /\$extend cycle: a → b → a/,
  })
  t.throws(() => new Mapper({ mappings: [{ $id: 'a', $extend: [], mapping: {} }] }), { message: /non-empty list/ })
  t.throws(() => new Mapper({ mappings: [{ $id: 'base', each: {} }, { $id: 'a', $extend: 'base', mapping: {} }] }), {
    message: 'Mapping "base", an ancestor of "a", has no pairings',
  })
  t.throws(() => new Mapper().register({ mapping: {} }), { message: /needs a non-empty string \$id/ })
})

t.test('register replaces by $id and registers compound members', async (t) => {
  const mapper = new Mapper({ mappings: [parent] })
  mapper.register({ $id: 'mapping:Parent', mapping: { '/z': '/a' } })
  t.same(await mapper.map('mapping:Parent', { a: 1 }), { z: 1, valid: true, errors: [] })
  t.same(mapper.register({ mappings: { one: { $id: 'one', mapping: { '/o': { constant: 1 } } }, two: { $id: 'two', $extend: 'one', mapping: {} } } }), ['one', 'two'])
  t.same(await mapper.map('two', {}), { o: 1, valid: true, errors: [] })
})

t.test('a compound document given to map is evaluated, shadowing, and never registered', async (t) => {
  const mapper = new Mapper({ mappings: [{ $id: 'shared', mapping: { '/who': { constant: 'installed' } } }] })
  const compound = {
    mappings: {
      shared: { $id: 'shared', mapping: { '/who': { constant: 'submitted' } } },
      entry: { $id: 'entry', mapping: { '/x': { $ref: 'shared' } } },
    },
  }
  t.same(await mapper.map(compound, {}), { x: { who: 'submitted' }, valid: true, errors: [] })
  t.same(Object.keys(mapper.mappings), ['shared'], 'nothing was registered')
  t.same(await mapper.map({ mapping: { '/x': { $ref: 'shared' } } }, {}), { x: { who: 'installed' }, valid: true, errors: [] })
  t.same(await mapper.map({ mapping: { '/x': { $ref: 'entry' } } }, {}), { valid: false, errors: [{ $ref: 'entry', message: 'unknown mapping reference' }] })
})

t.test('a compiled document is cached and follows registry changes', async (t) => {
  const mapper = new Mapper({ mappings: [{ $id: 'base', mapping: { '/v': { constant: 1 } } }] })
  const document = { mappings: { d: { $id: 'd', $extend: 'base', mapping: {} } } }
  t.equal(mapper.compile(document), mapper.compile(document), 'the same plan for the same document')
  t.same(await mapper.map(document, {}), { v: 1, valid: true, errors: [] })
  mapper.register({ $id: 'base', mapping: { '/v': { constant: 2 } } })
  t.same(await mapper.map(document, {}), { v: 2, valid: true, errors: [] }, 'recompiled after registration')
})

t.test('array input is wrapped as items; envelope keys win over output keys', async (t) => {
  const mapper = new Mapper()
  t.same(await mapper.map({ mapping: { '/d': '/e' } }, [{ e: 1 }, { e: 2 }]), { items: [{ d: 1 }, { d: 2 }], valid: true, errors: [] })
  t.same(await mapper.map({ mapping: { '/d': '/e' } }, []), { items: [], valid: true, errors: [] })
  t.same(await mapper.map({ '/valid': { constant: 'mine' }, '/n': { constant: 1 } }, {}), { valid: true, n: 1, errors: [] })
})

t.test('bad documents and ids are refused with clear errors', async (t) => {
  const mapper = new Mapper()
  await t.rejects(mapper.map(42, {}), { message: /mapping document must be an object/ })
  t.same(await mapper.map('nope', {}), { valid: false, errors: [{ descriptor: 'nope', message: 'unrecognized string descriptor' }] })
  await t.rejects(mapper.map({ mapping: { '/a': { mapping: 'nowhere' } } }, {}), { message: 'Unknown mapping "nowhere"' })
  await t.rejects(mapper.map({ mapping: { '/a': null } }, {}), { message: /a descriptor must be a string, an object or an array/ })
  await t.rejects(mapper.map({ mapping: { '/a': { first: [['/x']] } } }, {}), { message: /variant list/ })
})

t.test('one-shot evaluate, evaluateMapping and extend', async (t) => {
  t.equal(await evaluate({ source: '/a', as: 'string' }, { input: { a: 1 } }), '1')
  const errors: unknown[] = []
  t.equal(await evaluateMapping({ mapping: { '/a': { source: '/m', required: true } } }, { input: {}, errors: errors as never }), null)
  t.equal(errors.length, 1)
  t.same(extend(child, { mappings: { 'mapping:Parent': parent } }), {
    $id: 'mapping:Child',
    description: 'parent',
    mapping: { '/a': '/a', '/b': '/b' },
  })
  t.same(extend({ mapping: { '/x': '/x' } }), { mapping: { '/x': '/x' } }, 'nothing to extend')
})

t.test('template placeholders: a name of one or more non-} characters, as the reference reads them', async (t) => {
  const mapper = new Mapper()
  const render = async (template: string): Promise<unknown> =>
    (await mapper.map({ mapping: { '/out': { source: '/p', template, mapping: { '/a': '/a', '/b c': '/b' } } } }, { p: { a: 'A', b: 'B' } })).out
  t.equal(await render('{{a}}-{{b c}}'), 'A-B', 'names may hold spaces')
  t.equal(await render('{{}}'), '{{}}', 'an empty name is literal text')
  t.equal(await render('{{a}b}}'), '{{a}b}}', 'a name cannot hold }')
  t.equal(await render('{{a}}}'), 'A}', 'a third } is literal text')
  t.equal(await render('{{{a}}'), '', 'the first {{ opens: the name is {a, which has no value')
})

t.test('new Mapper({ mappings }) takes what the service takes: loadMappings() entries, documents, mixed, in any form', async (t) => {
  // A real directory as MAPPINGS names one: files in nested folders, YAML and JSON, a compound
  // document, a `$extend` across files (one batch), and a file that is not a mapping (skipped).
  const tree = tempTree(t, {
    'mappings/greet.json': JSON.stringify({ $id: 'greet', mapping: { '/text': '/message' } }),
    'mappings/nested/loud.yaml': '$id: loud\n$extend: greet\nmapping:\n  /volume: { constant: 11 }\n',
    'mappings/pair.json': JSON.stringify({ mappings: { left: { $id: 'left', mapping: { '/l': '/message' } }, right: { $id: 'right', mapping: { '/r': { $ref: 'left' } } } } }),
    'mappings/input.json': JSON.stringify({ message: 'not a mapping' }),
  })
  const warnings: string[] = []
  const loaded: MappingEntry[] = await loadMappings(tree.path('mappings'), { warn: (line) => warnings.push(line) })
  t.same(loaded.map((entry) => entry.id).sort(), ['greet', 'left', 'loud', 'right'], 'loadMappings read every mapping file')
  t.equal(warnings.length, 1, 'and skipped the input file, saying so')

  const fromFiles = new Mapper({ mappings: loaded })
  t.same(Object.keys(fromFiles.mappings).sort(), ['greet', 'left', 'loud', 'right'])
  const input = { message: 'hi' }
  t.same(await fromFiles.map('greet', input), { text: 'hi', valid: true, errors: [] }, 'greet.json')
  t.same(await fromFiles.map('loud', input), { text: 'hi', volume: 11, valid: true, errors: [] }, 'loud.yaml, extending greet.json')
  t.same(await fromFiles.map('left', input), { l: 'hi', valid: true, errors: [] }, "pair.json's first member")
  t.same(await fromFiles.map('right', input), { r: { l: 'hi' }, valid: true, errors: [] }, "pair.json's second member, naming the first")

  const shout = { $id: 'shout', $extend: 'greet', mapping: { '/shouted': { constant: true } } }
  const compound = { mappings: { a: { $id: 'a', mapping: { '/a': '/message' } }, b: { $id: 'b', $extend: 'loud', mapping: {} } } }
  const forms: Array<[string, MappingsInput, string[]]> = [
    ['entries and documents in one array', [...loaded, shout], ['greet', 'left', 'loud', 'right', 'shout']],
    ['entries, a document and a compound document in one array', [...loaded, shout, compound], ['a', 'b', 'greet', 'left', 'loud', 'right', 'shout']],
    ['an object keyed by anything, mixed', { first: loaded[0]!, second: shout }, ['greet', 'shout']],
    ['{ mappings: [...] }, mixed', { mappings: [...loaded, shout] }, ['greet', 'left', 'loud', 'right', 'shout']],
    ['{ mappings: { … } }, mixed', { mappings: { g: loaded[0]!, s: shout } }, ['greet', 'shout']],
    ['one entry alone', loaded[0]!, ['greet']],
    ['one document alone', { $id: 'solo', mapping: { '/s': '/message' } }, ['solo']],
    ['a compound document alone', { mappings: { a: compound.mappings.a } }, ['a']],
    ['a document keyed "mappings" among others', { mappings: { $id: 'keyed', mapping: { '/k': '/message' } }, g: loaded[0]! }, ['greet', 'keyed']],
  ]
  for (const [name, mappings, expected] of forms) {
    const mapper = new Mapper({ mappings })
    t.same(Object.keys(mapper.mappings).sort(), expected, `the engine: ${name}`)
    t.same(mappingEntries(mappings).map((entry) => entry.id).sort(), expected, `the service reads it alike: ${name}`)
  }
  const mixed = new Mapper({ mappings: [...loaded, shout, compound] })
  t.same(await mixed.map('shout', input), { text: 'hi', shouted: true, valid: true, errors: [] }, 'a document extending an entry')
  t.same(await mixed.map('b', input), { text: 'hi', volume: 11, valid: true, errors: [] }, 'a compound member extending an entry')
  t.same(await mixed.map('right', input), { r: { l: 'hi' }, valid: true, errors: [] })
  t.same(await new Mapper({ mappings: { first: loaded[0]!, second: shout } }).map('shout', input), { text: 'hi', shouted: true, valid: true, errors: [] }, 'keyed')
})

t.test("new Mapper({ mappings }) refuses a bad shape with the service's message, as a DocumentError", async (t) => {
  const tree = tempTree(t, { 'greet.json': JSON.stringify({ $id: 'greet', mapping: { '/text': '/message' } }) })
  const loaded = await loadMappings(tree.path('greet.json'))
  const bad: Array<[string, unknown, string]> = [
    ['not an object', 42, 'options.mappings must hold mapping documents or loadMappings() entries: an array, an object keyed by $id, { mappings } or one document'],
    ['a member that is not an object', [5], 'not a mapping document: options.mappings'],
    ['a document without $id', [{ mapping: { '/a': '/a' } }], 'mapping without $id in options.mappings'],
    ['a compound member without $id', { mappings: { a: { mapping: {} } } }, 'mapping without $id in options.mappings'],
    ['a $id from a file and a document', [...loaded, { $id: 'greet', mapping: {} }], `duplicate mapping $id "greet" in options.mappings (already registered from ${tree.path('greet.json')})`],
  ]
  for (const [name, mappings, message] of bad) {
    const thrown = t.throws(() => new Mapper({ mappings: mappings as MappingsInput }), { message }, `the engine: ${name}`)
    t.ok(thrown instanceof DocumentError, `${name}: a DocumentError`)
    t.throws(() => mappingEntries(mappings as MappingsInput), { name: 'SourceError', message }, `the service: ${name}, the same message`)
  }
})
