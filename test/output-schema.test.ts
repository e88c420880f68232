// The inferred output schema (engine/output-schema.ts) is sound — it validates the output of every
// conformance case that maps a whole mapping to a valid result, and of every example of the shipped
// mappings — and precise where the document says enough (the citation of language.md §16.1).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import t from 'tap'
import { parse } from 'yaml'
import { evaluateMapping, Mapper } from '../engine/index.js'
import { inferOutput, MAX_INFERRED_PAIRINGS, outputSchema, renderAlt, type JsonSchema, type MappingLookup } from '../engine/output-schema.js'
import type { ErrorObject } from '../engine/types.js'
import { fixtureExtensions } from './conformance/fixtures.js'
import { caseFiles, loadFile, PROJECT_ROOT, SUITE_DIR } from './conformance/suite.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const ajv = new Ajv2020({ strict: false, allErrors: true })

/** The output as it is sent: JSON text parsed back. */
const asSent = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? 'null')

/** The envelope without valid and errors. */
function outputOf(envelope: Record<string, unknown>): Record<string, unknown> {
  const { valid: _valid, errors: _errors, ...output } = envelope
  return output
}

function check(schema: JsonSchema, output: unknown): string | undefined {
  const validate = ajv.compile(schema)
  return validate(asSent(output)) ? undefined : ajv.errorsText(validate.errors)
}

const plugin = (name: string): boolean => Object.hasOwn(fixtureExtensions.plugins, name)
const lookupIn = (mappings: Record<string, unknown> | undefined): MappingLookup => (id) =>
  mappings !== undefined && Object.hasOwn(mappings, id) ? mappings[id] : undefined
const mapperLookup = (mapper: Mapper): MappingLookup => (id) => (Object.hasOwn(mapper.mappings, id) ? mapper.mappings[id] : undefined)

t.test('every conformance case that maps a whole mapping to a valid result: the inferred schema validates its output', async (t) => {
  let applied = 0
  for (const file of caseFiles([SUITE_DIR])) {
    for (const c of loadFile(file).cases) {
      if (c.level !== 'mapper' && c.level !== 'map') continue
      const name = `${file.slice(SUITE_DIR.length + 1)}: ${c.description}`
      const entry = c.level === 'mapper' ? (c.id ?? c.descriptor) : c.descriptor
      let output: unknown
      let lookup: MappingLookup
      try {
        const mapper = new Mapper({ mappings: c.mappings }, fixtureExtensions, { stdout: () => {} })
        if (c.level === 'mapper') {
          const envelope = (await mapper.map(entry, c.input)) as unknown as Record<string, unknown>
          if (envelope.valid !== true) continue
          output = outputOf(envelope)
          lookup = mapperLookup(mapper)
        } else {
          const errors: ErrorObject[] = []
          output = await evaluateMapping(c.descriptor as never, { ...fixtureExtensions, input: c.input, errors, mappings: c.mappings, stdout: () => {} })
          if (errors.length > 0 || output === null) continue
          lookup = lookupIn(c.mappings)
        }
      } catch {
        continue
      }
      applied++
      const failure = check(outputSchema(entry, lookup, { plugin }), output)
      if (failure !== undefined) t.fail(`${name}: ${failure}\noutput ${JSON.stringify(output)}\nschema ${JSON.stringify(outputSchema(entry, lookup, { plugin }))}`)
    }
  }
  t.ok(applied >= 60, `applied to ${applied} cases`)
})

t.test('every example of the shipped mappings: the inferred schema validates the output the mapping gives, and the one the example states', async (t) => {
  const dir = join(PROJECT_ROOT, 'mappings')
  const documents = readdirSync(dir).sort().map((name) => parse(readFileSync(join(dir, name), 'utf8')) as Record<string, unknown>)
  const mapper = new Mapper()
  // A compound document registers its members.
  for (const document of documents) mapper.register(document)
  const members = documents.flatMap((document) => (document.mappings !== undefined ? Object.values(document.mappings as Record<string, Record<string, unknown>>) : [document]))
  let applied = 0
  for (const member of members) {
    const id = member.$id as string
    const schema = outputSchema(id, mapperLookup(mapper), { plugin: () => false })
    for (const example of (member.examples ?? []) as Array<{ input: unknown; output: unknown; valid?: boolean }>) {
      const envelope = (await mapper.map(id, example.input)) as unknown as Record<string, unknown>
      if (envelope.valid !== true) continue
      applied++
      t.equal(check(schema, outputOf(envelope)), undefined, `${id}: the output of an example`)
      t.equal(check(schema, example.output), undefined, `${id}: the output an example states`)
    }
  }
  t.ok(applied >= 3, `applied to ${applied} examples`)
})

t.test('precise where the document says enough: the citation of language.md §16.1', async (t) => {
  const document = parse(readFileSync(join(PROJECT_ROOT, 'mappings/citation.yaml'), 'utf8')) as Record<string, unknown>
  const mapper = new Mapper({ mappings: [document] })
  const { output, item } = inferOutput('citation', mapperLookup(mapper))
  const schema = renderAlt(output, () => '') as { required: string[]; properties: Record<string, JsonSchema> }
  t.strictSame(schema.required, ['citation'])
  const citation = schema.properties.citation as { required: string[]; properties: Record<string, JsonSchema> }
  t.strictSame(citation.required, ['doi', 'source'], 'required: true and constant make keys certain; reads do not')
  t.strictSame(citation.properties.source, { const: 'import' })
  t.strictSame(citation.properties.year, { type: ['number', 'null'] }, 'as: number is a number, or null when not representable')
  t.strictSame(citation.properties.title, {}, 'a read is unknown')
  const authors = citation.properties.authors as { anyOf: JsonSchema[] }
  const author = { type: 'object', properties: { family: {}, given: {} }, required: ['given'] }
  t.strictSame(authors.anyOf, [{ type: ['string', 'number', 'boolean', 'null'] }, author, { type: 'array', items: author }], 'each: an array of authors, one author for an object, the value itself for a primitive')
  t.strictSame(renderAlt(item, () => ''), schema, 'an array input maps each member as the mapping does an object')
  // What the envelope cannot hold: a year that is a string, a source other than the constant.
  const full = outputSchema('citation', mapperLookup(mapper))
  t.ok(check(full, { citation: { doi: 'x', source: 'import', year: '1999' } }))
  t.ok(check(full, { citation: { doi: 'x', source: 'export' } }))
  t.equal(check(full, { citation: { doi: 'x', source: 'import', year: null } }), undefined)
})

/** The schema of a document registered as `x` (with others), checked against its outputs on each input. */
async function sound(t: Tap, mappings: Array<Record<string, unknown>>, inputs: unknown[], expect?: (schema: JsonSchema) => void): Promise<void> {
  const mapper = new Mapper({ mappings }, fixtureExtensions)
  const schema = outputSchema('x', mapperLookup(mapper), { plugin })
  for (const input of inputs) {
    const envelope = (await mapper.map('x', input)) as unknown as Record<string, unknown>
    t.equal(envelope.valid, true, `valid on ${JSON.stringify(input)}`)
    t.equal(check(schema, outputOf(envelope)), undefined, `${JSON.stringify(outputOf(envelope))} validates`)
  }
  expect?.(schema)
}

const rootOf = (schema: JsonSchema): Record<string, unknown> => (schema.anyOf as Array<Record<string, unknown>>)[0]!

t.test('sound on tricky writes', async (t) => {
  t.test('intermediate arrays, clamped indices and - appends', (t) =>
    sound(t, [{ $id: 'x', mapping: { '/a/0/b': { constant: 1 }, '/a/1/c': '/c', '/a/-': { constant: 'end' }, '/l/-/n': '/n', '/l/0': { constant: 0 } } }], [{}, { c: 2, n: 3 }, { c: [1], n: null }], (schema) => {
      const root = rootOf(schema) as { properties: Record<string, { type?: string }>; required: string[] }
      t.equal(root.properties.a!.type, 'array')
      t.strictSame(root.required, ['a', 'l'])
    }))
  t.test('a pointer written twice (slash and fragment forms), the later certain write wins', (t) =>
    sound(t, [{ $id: 'x', mapping: { '/a': { constant: 1 }, '#/a': { constant: 'x' }, '/b': { constant: 1 }, '#/b': '/maybe' } }], [{}, { maybe: true }], (schema) => {
      const root = rootOf(schema) as { properties: Record<string, unknown> }
      t.strictSame(root.properties.a, { const: 'x' })
      t.strictSame(root.properties.b, {}, 'a write that may not happen leaves the earlier value possible')
    }))
  t.test('writes inside a value written whole, and through a falsy one', (t) =>
    sound(t, [{ $id: 'x', mapping: { '/a': { constant: { x: 1 } }, '/a/y': { constant: 2 }, '/z': { constant: 0 }, '/z/w': { constant: 1 }, '/s': '/s', '/s/t': { constant: 1 } } }], [{}, { s: { u: 1 } }, { s: null }]))
  t.test('$extend: a redefined pairing runs where the descendant puts it', (t) =>
    sound(
      t,
      [
        { $id: 'parent', mapping: { '/b': { constant: 'original' }, '/c': { constant: 1 } } },
        { $id: 'x', $extend: 'parent', mapping: { '/b': { output: '/c' } } },
      ],
      [{}],
      (schema) => t.strictSame((rootOf(schema) as { properties: Record<string, unknown> }).properties.b, {})
    ))
  t.test('recursion through references: $defs and $ref', (t) =>
    sound(t, [{ $id: 'x', mapping: { '/name': '/n', '/kids': { source: '/c', each: 'x' }, '/first': { source: '/c/0', mapping: { $ref: 'x' } } } }], [{ n: 'a', c: [{ n: 'b', c: [{ n: 'c' }] }, { n: 'd', c: 'leaf' }] }, [{ n: 1 }]], (schema) => {
      t.ok(Object.hasOwn((schema.$defs ?? {}) as object, 'x'), 'the recursive mapping is a definition')
    }))
  t.test('each over an array, an object and a primitive', (t) =>
    sound(t, [{ $id: 'x', mapping: { '/out': { source: '/v', each: { '/k': { constant: 1 } } } } }], [{ v: [1, {}, null] }, { v: {} }, { v: 'text' }, { v: [] }, {}]))
  t.test('a template writes its pairings into the level, over what was there', (t) =>
    sound(t, [{ $id: 'x', mapping: { '/n': { constant: 5 }, '/greet': { source: '/p', template: 'Hi {{n}}', mapping: { '/n': '/first' } } } }], [{ p: { first: 'Ada' } }, { p: 'plain' }], (schema) => {
      t.strictSame((rootOf(schema) as { properties: Record<string, unknown> }).properties.n, {})
    }))
  t.test('switch cases, combinators and variant lists', (t) =>
    sound(
      t,
      [
        {
          $id: 'x',
          mapping: {
            '/s': { source: '/', switch: { source: '/kind', cases: { a: { constant: 1 }, b: { source: '/', mapping: { '/got': '/b' } }, default: '/d' } } },
            '/f': { first: ['/missing', { constant: 'f' }] },
            '/all': { all: ['/a', { constant: 2 }, { source: '/', mapping: { '/k': { constant: true } } }] },
            '/v': ['/missing', { constant: null }],
          },
        },
      ],
      [{ kind: 'a' }, { kind: 'b', b: [1] }, { kind: 'c', d: { any: 1 } }, { a: 1 }],
      (schema) => {
        const root = rootOf(schema) as { properties: Record<string, unknown>; required: string[] }
        t.strictSame(root.properties.f, {}, 'first: a read or the constant')
        t.strictSame(root.required, ['f', 'all', 'v'], 'a first with a defined element, all, a variant list with a defined element are certain')
      }
    ))
  t.test('validators narrow, finalize coerces, plugins are unknown', (t) =>
    sound(
      t,
      [
        {
          $id: 'x',
          mapping: {
            '/t': { source: '/t', type: 'string' },
            '/e': { source: '/e', enum: ['a', 1] },
            '/n': { source: '/n', type: 'integer', minimum: 0, maximum: 9 },
            '/d': { source: '/d', default: 'none' },
            '/j': { source: '/j', as: 'json' },
            '/b': { source: '/b', as: 'boolean' },
            '/p': { source: '/p', wrap: { key: 'w' }, as: 'string', required: true },
          },
        },
      ],
      [{ t: 'x', e: 1, n: 3, j: { a: [1] }, b: 'false', p: 1 }, { e: 'a', d: null, p: 0 }],
      (schema) => {
        const root = rootOf(schema) as { properties: Record<string, unknown>; required: string[] }
        t.strictSame(root.properties.t, { type: 'string' })
        t.strictSame(root.properties.e, { enum: ['a', 1] })
        t.strictSame(root.properties.n, { type: 'integer', minimum: 0, maximum: 9 })
        t.strictSame(root.properties.j, { type: 'string' })
        t.strictSame(root.properties.p, { type: 'string' })
        t.strictSame(root.required, ['d', 'p'])
      }
    ))
  t.end()
})

t.test(`a mapping past ${MAX_INFERRED_PAIRINGS} pairings is an object of unknown members, inferred in bounded time`, async (t) => {
  const pairings = Object.fromEntries(Array.from({ length: MAX_INFERRED_PAIRINGS + 1 }, (_, i) => [`/f${i}/value`, { constant: i }]))
  const lookup = (id: string): unknown => (id === 'large' ? { $id: 'large', mapping: pairings } : undefined)
  const schema = outputSchema('large', lookup)
  t.match(schema, { anyOf: [{ type: 'object' }, { type: 'object', properties: { items: { type: 'array', items: { type: 'object' } } } }] })
  t.notOk((schema.anyOf as Array<{ properties?: unknown }>)[0]!.properties, 'no member described')
  const small = outputSchema('small', (id) => (id === 'small' ? { $id: 'small', mapping: { '/f/value': { constant: 1 } } } : undefined))
  t.match(small, { anyOf: [{ properties: { f: { properties: { value: { const: 1 } } } } }] }, 'under the bound, precise')
})
