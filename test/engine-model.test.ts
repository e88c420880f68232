// The engine's document model and keyword catalogue, held to what docs/engine.md promises: keyword
// names are written in their own modules (the rest of the engine asks the records); the descriptor
// rule of a pairing value is one rule that validation, evaluation and the document schema all
// follow; an `extra` never replaces a member of the context; and a keyword is added by its module
// and one entry in the catalogue, nothing else (a toy keyword added to a copy of the engine,
// type-checked, evaluated on both paths, validated and offered by the schema).
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import t from 'tap'
import { Context, SHAPE_KEEPERS } from '../engine/context.js'
import { pairingValueForm } from '../engine/document.js'
import { KEYWORDS, Mapper, mappingSchema } from '../engine/index.js'
import { walkDocument } from '../engine/keywords/walk.js'
import { escapeToken, parsePointer } from '../engine/pointer.js'
import { caseFiles, loadFile, SUITE_DIR } from './conformance/suite.js'
import { ROOT } from './loader/compiled-tree.mjs'
import { tsc } from './tsc.js'

const names = KEYWORDS.map((record) => record.name as string)

t.test('keyword names are written as string literals only in the keywords\' own modules', async (t) => {
  const quoted = new RegExp(`(['"])(${names.map((name) => name.replace('$', '\\$')).join('|')})\\1`)
  const found: string[] = []
  const visit = (folder: string): void => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name)
      if (statSync(path).isDirectory()) {
        if (relative(ROOT, path) !== join('engine', 'keywords')) visit(path)
      } else if (path.endsWith('.ts')) {
        readFileSync(path, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (quoted.test(line) && !/^\s*(\/\/|\*|\/\*)/.test(line)) found.push(`${relative(ROOT, path)}:${i + 1}: ${line.trim()}`)
          })
      }
    }
  }
  visit(join(ROOT, 'engine'))
  // The catalogue's own drivers (engine/keywords/*.ts) may name keywords; the rest asks the records.
  t.ok(found.length <= 4, `${found.length} lines name a keyword outside engine/keywords/:\n${found.join('\n')}`)
})

t.test('an extra never replaces a member of the context (the names are read from the class)', async (t) => {
  const members = new Set([...Object.getOwnPropertyNames(Context.prototype), ...Object.keys(SHAPE_KEEPERS[1]!)])
  for (const name of ['input', 'source', 'target', 'run', 'depth', 'paths', 'evaluate', 'withSource', 'signal']) t.ok(members.has(name), `${name} is a member`)
  const seen: Record<string, string> = {}
  const mapper = new Mapper({}, {
    transformers: {
      look: (value, context) => {
        for (const name of [...members, 'custom']) seen[name] = (context as unknown as Record<string, unknown>)[name] === 'planted' ? 'planted' : 'own'
        return value
      },
    },
  })
  // `identity` and `signal` are the host's to give (the context reads them from the extra, on first use).
  for (const own of ['identity', 'signal']) members.delete(own)
  const extra = Object.fromEntries([...members, 'custom'].map((name) => [name, 'planted']))
  const envelope = await mapper.map({ mapping: { '/a': { source: '/a', transform: 'look' } } }, { a: 1 }, extra)
  t.same(envelope, { a: 1, valid: true, errors: [] })
  t.equal(seen.custom, 'planted', 'an extra of another name is a member')
  const replaced = [...members].filter((name) => seen[name] === 'planted')
  t.same(replaced, [], 'no member was replaced by the extra of its name')
})

/** Every object a conformance document holds in a pairing value's place, and some of every form besides. */
function pairingValues(): unknown[] {
  const found: unknown[] = [
    { each: { '/n': '/n' } },
    { each: 'named' },
    { source: '/a', mapping: { '/n': '/n' } },
    { mapping: 'named' },
    { mapping: { each: '/a' } },
    { $ref: 'named' },
    { $ref: 'named', source: '/x' },
    { '/n': '/n', 'not-a-pointer': '/m' },
    { description: 'x', '/n': '/n' },
    {},
  ]
  for (const file of caseFiles([SUITE_DIR])) {
    for (const c of loadFile(file).cases) {
      const documents = [...Object.values(c.mappings ?? {}), c.descriptor]
      for (const document of documents) {
        walkDocument(document, '', {
          pairingMap(value, pointer) {
            if (pointer !== '') found.push(value)
          },
        })
      }
    }
  }
  return found
}

/** An input every read finds a value in: each member is the input again. */
const ANYTHING: object = new Proxy(
  {},
  {
    get: (_target, key) => (typeof key === 'string' ? ANYTHING : undefined),
    has: () => true,
    getOwnPropertyDescriptor: (_target, key) => (typeof key === 'string' ? { value: ANYTHING, configurable: true, enumerable: false, writable: true } : undefined),
  }
)

const isPointer = (key: string): boolean => {
  try {
    parsePointer(key)
    return key === '' || key.startsWith('/')
  } catch {
    return false
  }
}

t.test('the descriptor rule of a pairing value: validation, evaluation and the document schema read every value alike', async (t) => {
  const values = pairingValues()
  t.ok(values.length > 100, `${values.length} pairing values`)
  const ajv = new Ajv2020({ strict: false, allowUnionTypes: true })
  const schemaCheck = ajv.compile(mappingSchema())
  const named = { $id: 'named', mapping: { '/n': '/n' } }
  let maps = 0
  for (const value of values) {
    const form = pairingValueForm(value)
    const document = { mapping: { '/o': { source: '/', mapping: value } } }
    const at = '/mapping/~1o/mapping'
    // What the rule says: a pairing map's keys are target pointers, and a key that is not one is an error.
    const badKeys = form === 'pairings' ? Object.keys(value as object).filter((key) => !isPointer(key)) : []
    if (form === 'pairings') maps++
    const mapper = new Mapper({ mappings: [named] }, {})
    const report = mapper.validate(document as never)
    const flagged = report.errors.filter((d) => d.rule === 'PTR-10' && d.pointer.startsWith(`${at}/`) && !d.pointer.slice(at.length + 1).includes('/')).map((d) => d.descriptor)
    t.same(flagged, badKeys, `validation reads ${JSON.stringify(value)} as ${form}`, { diagnostic: false })
    // Evaluation finds a bad key when it writes there (every read of this input finds a value), on
    // the generated path and the closure path alike. A right side that is a name string reads
    // nothing here, so its key is never written.
    const written = badKeys.filter((key) => {
      const right = (value as Record<string, unknown>)[key]
      return typeof right !== 'string' || right.startsWith('/')
    })
    for (const codegen of [true, false]) {
      let refused: string | undefined
      try {
        await new Mapper({ mappings: [named] }, {}, { codegen }).map(document as never, ANYTHING)
      } catch (error) {
        refused = /^Invalid JSON Pointer (.*)$/s.exec((error as Error).message)?.[1]
      }
      const ownKey = refused !== undefined && Object.hasOwn(value as object, refused) ? refused : undefined
      const agrees = written.length > 0 ? ownKey !== undefined && badKeys.includes(ownKey) : ownKey === undefined || badKeys.includes(ownKey)
      t.ok(agrees, `evaluation (codegen ${String(codegen)}) reads ${JSON.stringify(value)} as ${form}`, { diagnostic: false })
    }
    const schemaRefuses = !schemaCheck(document) && (schemaCheck.errors ?? []).some((error) => error.instancePath === at || badKeys.some((key) => error.instancePath === `${at}/${escapeToken(key)}`))
    if (badKeys.length > 0) t.ok(schemaRefuses, `the schema refuses ${JSON.stringify(value)}`, { diagnostic: false })
  }
  t.ok(maps > 50, `${maps} of them pairing maps`)
})

t.test('a keyword is one module and one entry in the catalogue: a toy keyword added to a copy of the engine', async (t) => {
  const copy = join(ROOT, 'node_modules', '.cache', `mapper-toy-keyword-${process.pid}`)
  rmSync(copy, { recursive: true, force: true })
  mkdirSync(copy, { recursive: true })
  t.teardown(() => rmSync(copy, { recursive: true, force: true }))
  cpSync(join(ROOT, 'engine'), join(copy, 'engine'), { recursive: true })
  // 1. The module (as docs/engine.md "Adding a keyword" shows).
  writeFileSync(
    join(copy, 'engine', 'keywords', 'shape', 'shout.ts'),
    `// \`shout\` (shape): a string value in upper case with "!" after it, when the operand is true.
import { refuse } from '../grammar.js'
import { keyword } from '../record.js'

export default keyword<'shout', 'shape'>({
  name: 'shout',
  stage: 'shape',
  tier: 'experimental',
  // The operand's schema fragment is its grammar: validation reports the refusal written on it.
  schema: { description: 'When true, a string value upper-cased, with an exclamation mark.', type: 'boolean', ...refuse('KW-pipeline-1', 'shout must be true or false') },
  compile(descriptor) {
    if (descriptor.shout !== true) return null
    return { awaits: false, run: (value) => (typeof value === 'string' ? \`\${value.toUpperCase()}!\` : value) }
  },
})

declare module '../../descriptor.js' {
  interface KeywordOperands {
    shout?: boolean
  }
}
`
  )
  // 2. One entry in the catalogue: its import and its place in the list.
  const catalogue = join(copy, 'engine', 'keywords', 'index.ts')
  const text = readFileSync(catalogue, 'utf8')
  const edited = text.replace("import unique from './shape/unique.js'\n", "import unique from './shape/unique.js'\nimport shout from './shape/shout.js'\n").replace('  unique,\n', '  unique,\n  shout,\n')
  t.not(edited, text, 'the catalogue took the entry')
  writeFileSync(catalogue, edited)
  // A use of the descriptor type, which now knows the operand.
  writeFileSync(
    join(copy, 'use.ts'),
    `import type { DescriptorObject } from './engine/index.js'
export const loud: DescriptorObject = { source: '/a', shout: true }
// @ts-expect-error the operand's type comes from the keyword's module
export const wrong: DescriptorObject = { source: '/a', shout: 'yes' }
`
  )
  writeFileSync(
    join(copy, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023'], types: ['node'], strict: true, noEmit: true, skipLibCheck: true }, include: ['engine', 'use.ts'] })
  )
  const typed = await tsc(['-p', join(copy, 'tsconfig.json')], copy)
  t.equal(typed.code, 0, `the copy type-checks: ${typed.output}`)
  writeFileSync(
    join(copy, 'run.ts'),
    `import { Mapper, mappingSchema } from './engine/index.js'
const document = { mapping: { '/a': { source: '/a', shout: true }, '/b': { source: '/b', shout: true, as: 'string' } } }
const out: Record<string, unknown> = {}
for (const codegen of [true, false]) out[String(codegen)] = await new Mapper({}, {}, { codegen }).map(document, { a: 'hey', b: 3 })
out.valid = new Mapper({}, {}).validate(document)
out.invalid = new Mapper({}, {}).validate({ mapping: { '/a': { source: '/a', shout: 'yes' } } })
const schema = mappingSchema() as { $defs: { keywordObject: { else: { properties: Record<string, unknown> } } } }
out.schema = schema.$defs.keywordObject.else.properties.shout
process.stdout.write(JSON.stringify(out))
`
  )
  const ran = execFileSync(process.execPath, ['--import', join(ROOT, 'test', 'loader', 'register.mjs'), join(copy, 'run.ts')], { encoding: 'utf8', cwd: ROOT })
  const out = JSON.parse(ran) as Record<string, unknown>
  for (const path of ['true', 'false']) t.same(out[path], { a: 'HEY!', b: '3', valid: true, errors: [] }, `evaluated (codegen ${path})`)
  t.same(out.valid, { valid: true, errors: [], warnings: [] }, 'validation knows the keyword')
  t.match(out.invalid, { valid: false, errors: [{ rule: 'KW-pipeline-1', message: 'shout must be true or false', pointer: '/mapping/~1a/shout' }] }, 'and checks its operand')
  t.match(out.schema, { type: 'boolean', description: /upper-cased/ }, 'the document schema offers it')
})
