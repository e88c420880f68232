// The JSON Schema of a mapping document (engine/schema.ts): it compiles under Ajv's strict mode, it
// accepts every document the engine's validation accepts (the bundled mappings, the conformance
// suite's, generated ones), it refuses the usual mistakes where they are, and the route and the CLI
// serve the very same schema.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
// The named export: under NodeNext the default one is the CommonJS module object.
import { Ajv2020 } from 'ajv/dist/2020.js'
import fc from 'fast-check'
import t from 'tap'
import { runCommand } from '../bin/commands.js'
import { readDocumentFile } from '../sources/files.js'
import { bundledMappingsPath } from '../sources/mappings.js'
import { KEYWORDS, mappingSchema, validate } from '../engine/index.js'
import type { KeywordRecord } from '../engine/keywords/record.js'
import { buildServer } from '../server.js'
import { SECRET } from './auth-support.js'
import { caseFiles, loadFile, SUITE_DIR } from './conformance/suite.js'

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true })
const check = ajv.compile(mappingSchema())

/** Ajv's verdict: the instance paths of its errors (empty when the document passes). */
function schemaErrors(document: unknown): string[] {
  return check(document) ? [] : (check.errors ?? []).map((error) => error.instancePath)
}

t.test('every keyword record carries a schema fragment with a description, and the schema offers each keyword', async (t) => {
  const keywordObject = (mappingSchema().$defs as Record<string, { else: { properties: Record<string, { description?: string }> } }>).keywordObject
  for (const record of KEYWORDS as readonly KeywordRecord[]) {
    t.type(record.schema, 'object', `${record.name} has a schema`)
    t.ok(record.schema.description.length > 10, `${record.name} has a description`)
    t.ok(keywordObject.else.properties[record.name]?.description?.startsWith(record.schema.description), `${record.name} is a property of a keyword object`)
  }
})

t.test('every bundled mapping validates', async (t) => {
  const files = readdirSync(bundledMappingsPath()).filter((name) => /\.(json|ya?ml)$/.test(name))
  t.ok(files.length >= 3, `${files.length} bundled mappings`)
  for (const file of files) {
    const document = await readDocumentFile(join(bundledMappingsPath(), file))
    t.ok(validate(document).valid, `${file} is valid for the engine`)
    t.same(schemaErrors(document), [], `${file} passes the schema`)
  }
})

t.test('every conformance-suite mapping the engine accepts passes the schema', async (t) => {
  const suite = SUITE_DIR
  const files = caseFiles([suite])
  t.ok(files.length >= 14, `found ${files.length} case files in ${suite}`)
  let accepted = 0
  let refused = 0
  for (const file of files) {
    for (const c of loadFile(file).cases) {
      // Registered mappings, and descriptors (a keyword object is a descriptor-form document).
      const documents = [...Object.values(c.mappings ?? {}), c.descriptor]
      for (const document of documents) {
        if (document === undefined) continue
        if (!validate(document).valid) {
          refused++
          continue
        }
        accepted++
        const errors = schemaErrors(document)
        if (errors.length > 0) t.fail(`${c.description}: ${JSON.stringify(document)} fails the schema at ${errors.join(', ')}`)
      }
    }
  }
  t.ok(accepted > 100, `${accepted} valid documents pass (${refused} the engine refuses were left out)`)
})

// Each row: a document, the rule validation reports, and the instance path Ajv names.
const INVALID: Array<[name: string, document: unknown, rule: string, path: string]> = [
  ['not an object', [], 'DOC-3', ''],
  ['an unknown as', { $id: 'x', mapping: { '/a': { source: '/b', as: 'integer' } } }, 'KW-pipeline-1', '/mapping/~1a/as'],
  ['an empty $id', { $id: '', mapping: {} }, 'REG-5', '/$id'],
  ['a forbidden $id', { $id: '__proto__', mapping: {} }, 'REG-6', '/$id'],
  ['a pairing key that is no pointer', { mapping: { a: '/b' } }, 'PTR-10', '/mapping'],
  ['a fragment pointer descriptor', { mapping: { '/a': '#/b' } }, 'DOC-2', '/mapping/~1a'],
  ['a number as descriptor', { mapping: { '/a': 5 } }, 'DOC-5', '/mapping/~1a'],
  ['a combinator that is no list', { mapping: { '/a': { first: '/b' } } }, 'KW-combinator-1', '/mapping/~1a/first'],
  ['a variant list inside a combinator', { mapping: { '/a': { first: [['/b']] } } }, 'DOC-5', '/mapping/~1a/first/0'],
  ['a .. segment', { mapping: { '/a': { source: '/b/../c' } } }, 'PTR-9', '/mapping/~1a/source'],
  ['a bad ~ escape', { mapping: { '/a': '/b~2' } }, 'PTR-10', '/mapping/~1a'],
  ['a switch naming no scope', { mapping: { '/a': { switch: { cases: {} } } } }, 'KW-switch-1', '/mapping/~1a/switch'],
  ['a two-key transform step', { mapping: { '/a': { transform: [{ a: 1, b: 2 }] } } }, 'KW-pipeline-1', '/mapping/~1a/transform'],
  ['random 0', { mapping: { '/a': { random: 0 } } }, 'KW-random-1', '/mapping/~1a/random'],
  ['a type outside the seven', { mapping: { '/a': { type: 'float' } } }, 'KW-validate-1', '/mapping/~1a/type'],
  ['each pairings with a key that is no pointer', { mapping: { '/a': { each: { x: '/y' } } } }, 'PTR-10', '/mapping/~1a/each'],
  ['a compound member that is no object', { mappings: { a: 5 } }, 'DOC-3', '/mappings/a'],
  ['a compound document with an empty $id', { $id: '', mappings: { a: { $id: 'a', mapping: {} } } }, 'REG-5', '/$id'],
  ['an example without output', { $id: 'x', mapping: {}, examples: [{ input: 1 }] }, 'KW-examples-1', '/examples/0'],
  ['a misspelt example member', { $id: 'x', mapping: {}, examples: [{ input: 1, output: {}, ouput: {} }] }, 'KW-examples-1', '/examples/0'],
  ['examples that are no list', { $id: 'x', mapping: {}, examples: { input: 1 } }, 'KW-examples-1', '/examples'],
]

t.test('invalid documents fail the schema where validation finds them', async (t) => {
  for (const [name, document, rule, path] of INVALID) {
    t.ok(
      validate(document).errors.some((error) => error.rule === rule),
      `${name}: validation reports ${rule}`
    )
    const errors = schemaErrors(document)
    t.ok(errors.includes(path), `${name}: the schema fails at ${JSON.stringify(path)} (got ${JSON.stringify(errors)})`)
  }
})

// Documents built from the whole catalogue: every keyword, operands right and wrong, nested.
const names = (KEYWORDS as readonly KeywordRecord[]).map((record) => record.name)
const pointer = fc.constantFrom('', '/a', '/b/c', '/a/0', '/l/-', '#/a', '#', 'bad', '/x~2', '/x~1y', '/a/../b', '/..', '../up')
const word = fc.constantFrom('known', 'x', 'default', 'string', 'number', 'json', 'object', '^a', '(a+)+', '[')
const scalar = fc.oneof(pointer, word, fc.integer({ min: -2, max: 3 }), fc.boolean(), fc.constant(null), fc.constant(0.5))

const { descriptor } = fc.letrec<{ descriptor: unknown; keywordObject: unknown; operand: unknown }>((tie) => ({
  descriptor: fc.oneof({ depthSize: 'small', withCrossShrink: true }, pointer, word, tie('keywordObject'), fc.array(fc.oneof(pointer, tie('keywordObject')), { maxLength: 2 })),
  keywordObject: fc.dictionary(fc.oneof(fc.constantFrom(...names), fc.constantFrom('echo', '/a', 'pointer')), tie('operand'), { maxKeys: 3 }),
  operand: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.array(fc.oneof(scalar, tie('descriptor')), { maxLength: 2 }),
    fc.dictionary(fc.oneof(pointer, fc.constantFrom('eq', 'cases', 'source', 'input', 'pointer', 'mapping', '$ref', 'output')), tie('descriptor'), { maxKeys: 3 }),
    fc.record({ source: pointer, cases: fc.dictionary(word, tie('descriptor'), { maxKeys: 2 }) }),
    fc.record({ input: scalar, output: fc.oneof(fc.object({ maxDepth: 1 }), scalar) }, { requiredKeys: [] }).map((example) => [example])
  ),
}))

const document = fc.oneof(
  fc.record({ $id: fc.oneof(word, scalar), mapping: fc.dictionary(pointer, descriptor, { maxKeys: 3 }) }, { requiredKeys: ['mapping'] }),
  fc.dictionary(pointer, descriptor, { maxKeys: 3 }),
  fc.record({ mappings: fc.dictionary(word, descriptor, { maxKeys: 2 }) }),
  descriptor
)

t.test('property: whatever the engine validates clean, the schema accepts', async (t) => {
  let clean = 0
  await fc.assert(
    fc.property(document, (doc) => {
      if (!validate(doc).valid) return true
      clean++
      const errors = schemaErrors(doc)
      if (errors.length > 0) throw new Error(`${JSON.stringify(doc)} is valid but fails the schema at ${errors.join(', ')}`)
      return true
    }),
    { numRuns: 3000 }
  )
  t.ok(clean > 300, `${clean} clean documents of 3000 passed`)
})

t.test('GET /schema/mapping.json and `mapper-service schema` serve the same schema, without a token', async (t) => {
  const app = await buildServer({ options: { logging: { level: 'silent' }, auth: { secret: SECRET } } })
  t.teardown(() => app.close())
  const response = await app.inject({ method: 'GET', url: '/schema/mapping.json' })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^application\/schema\+json/)
  let printed = ''
  const code = await runCommand(['schema'], { out: (text) => (printed += text), err: () => {}, stdin: async () => '', env: {} })
  t.equal(code, 0)
  t.same(JSON.parse(response.body), mappingSchema())
  t.same(JSON.parse(printed), mappingSchema())
  t.equal((await app.inject({ method: 'GET', url: '/mappings' })).statusCode, 401, 'the rest of the service still asks for a token')
})
