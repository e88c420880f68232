// Explain traces (README "Explain", docs/engine.md §2.13): the engine's trace per pairing (stages,
// reads, branches, plugins, nested levels) and its bounds; explaining never changes the envelope,
// over the whole conformance suite; POST /map with "explain": true and its gate; `map --explain`.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import t from 'tap'
import { MAX_ELEMENTS, Mapper, type Explanation, type PairingTrace } from '../engine/index.js'
import { EnvelopeSchema } from '../http/schemas/map.js'
import { caseFiles, loadFile, SUITE_DIR } from './conformance/suite.js'
import { fixtureExtensions } from './conformance/fixtures.js'
import { ECHO, SECRET, STRICT, bearer, call, serve, shared, sharedByOptions } from './http-support.js'
import { runCli } from './startup-support.js'
import { untyped } from './startup-support.js'

const extensions = {
  transformers: { upper: (value: unknown) => (typeof value === 'string' ? value.toUpperCase() : value) },
  plugins: {
    exclaim: async (_options: unknown, value: unknown) => {
      await new Promise((resolve) => setTimeout(resolve, 2))
      return `${String(value)}!`
    },
  },
}

t.test('a pairing: its reads, the value after locate, shape and validate, and what it wrote', async (t) => {
  const mapper = new Mapper({}, extensions)
  const { envelope, explain } = await mapper.explain(
    { mapping: { '/title': { source: '/book/title', transform: 'upper', type: 'string', maxLength: 5 } } },
    { book: { title: 'dune, messiah' } }
  )
  t.same(envelope, {
    valid: false,
    errors: [{ source: '/book/title', value: 'DUNE, MESSIAH', maxLength: 5, message: 'cannot be more than 5 characters' }],
  })
  t.strictSame(explain, {
    pairings: [
      {
        target: '/title',
        pointer: '/mapping/~1title',
        reads: ['/book/title'],
        stages: [
          { stage: 'locate', keyword: 'source', value: 'dune, messiah' },
          { stage: 'shape', keyword: 'transform', value: 'DUNE, MESSIAH' },
          {
            stage: 'validate',
            keyword: 'type, maxLength',
            value: 'DUNE, MESSIAH',
            errors: [{ source: '/book/title', value: 'DUNE, MESSIAH', maxLength: 5, message: 'cannot be more than 5 characters' }],
          },
        ],
        written: true,
        value: 'DUNE, MESSIAH',
      },
    ],
    truncated: false,
  })
})

t.test('a switch names the case it took and the key it read; a variant list the element it wrote', async (t) => {
  const mapper = new Mapper()
  const document = {
    mapping: {
      '/kind': { switch: { source: '/type', cases: { book: { constant: 'monograph' }, default: { constant: 'other' } } } },
      '/fallback': { switch: { source: '/type', cases: { film: { constant: 'film' }, default: { constant: 'other' } } } },
      '/none': { switch: { source: '/missing', cases: { x: { constant: 1 } } } },
      '/name': ['/nickname', '/name'],
      '/nothing': ['/a', '/b'],
    },
  }
  const { envelope, explain } = await mapper.explain(document, { type: 'book', name: 'Ada' })
  t.same(envelope, { kind: 'monograph', fallback: 'other', none: { type: 'book', name: 'Ada' }, name: 'Ada', valid: true, errors: [] })
  const [kind, fallback, none, name, nothing] = explain.pairings as PairingTrace[]
  t.strictSame(kind!.branch, { switch: 'book', key: 'book' })
  t.strictSame(kind!.stages, [
    { stage: 'locate', value: { type: 'book', name: 'Ada' } },
    { stage: 'dispatch', keyword: 'switch', value: 'monograph' },
  ])
  t.strictSame(fallback!.branch, { switch: 'default', key: 'book' })
  t.strictSame(none!.branch, { switch: null })
  t.strictSame(name, {
    target: '/name',
    pointer: '/mapping/~1name',
    reads: ['/nickname', '/name'],
    stages: [],
    branch: { variant: 1 },
    written: true,
    value: 'Ada',
  })
  t.strictSame(nothing!.branch, { variant: null })
  t.equal(nothing!.written, false)
  t.notOk('value' in nothing!, 'nothing written, no value')
})

t.test('a plugin: its timing and the value it returned', async (t) => {
  const mapper = new Mapper({}, extensions)
  const { envelope, explain } = await mapper.explain({ mapping: { '/shout': { source: '/word', exclaim: {}, transform: 'upper' } } }, { word: 'hey' })
  t.same(envelope, { shout: 'HEY!', valid: true, errors: [] })
  const [shout] = explain.pairings as PairingTrace[]
  t.strictSame(shout!.stages, [
    { stage: 'locate', keyword: 'source', value: 'hey' },
    { stage: 'plugins', keyword: 'exclaim', value: 'hey!' },
    { stage: 'shape', keyword: 'transform', value: 'HEY!' },
  ])
  t.equal(shout!.plugins?.length, 1)
  t.equal(shout!.plugins?.[0]?.name, 'exclaim')
  t.type(shout!.plugins?.[0]?.ms, 'number')
  t.ok(shout!.plugins![0]!.ms >= 0)
})

t.test('each: nested pairing runs per element, with their input pointers; registered mappings by id', async (t) => {
  const mapper = new Mapper({ mappings: [{ $id: 'person', mapping: { '/n': { source: '/name', transform: 'upper' } } }] }, extensions)
  const { envelope, explain } = await mapper.explain(
    { mapping: { '/people': { source: '/authors', each: { '/name': '/name', '/card': { $ref: 'person' } } } } },
    { authors: [{ name: 'ada' }, { name: 'alan' }] }
  )
  t.same(envelope, { people: [{ name: 'ada', card: { n: 'ADA' } }, { name: 'alan', card: { n: 'ALAN' } }], valid: true, errors: [] })
  const element = (index: number, name: string): PairingTrace[] => [
    {
      target: '/name',
      pointer: '/mapping/~1people/each/~1name',
      element: index,
      reads: [`/authors/${index}/name`],
      stages: [{ stage: 'locate', keyword: 'source', value: name }],
      written: true,
      value: name,
    },
    {
      target: '/card',
      pointer: '/mapping/~1people/each/~1card',
      element: index,
      reads: [],
      stages: [{ stage: 'locate', value: { name } }],
      pairings: [
        {
          target: '/n',
          pointer: '/mapping/~1n',
          mapping: 'person',
          reads: [`/authors/${index}/name`],
          stages: [
            { stage: 'locate', keyword: 'source', value: name },
            { stage: 'shape', keyword: 'transform', value: name.toUpperCase() },
          ],
          written: true,
          value: name.toUpperCase(),
        },
      ],
      written: true,
      value: { n: name.toUpperCase() },
    },
  ]
  t.strictSame(explain, {
    pairings: [
      {
        target: '/people',
        pointer: '/mapping/~1people',
        reads: ['/authors'],
        stages: [{ stage: 'locate', keyword: 'source', value: [{ name: 'ada' }, { name: 'alan' }] }],
        pairings: [...element(0, 'ada'), ...element(1, 'alan')],
        written: true,
        value: [
          { name: 'ada', card: { n: 'ADA' } },
          { name: 'alan', card: { n: 'ALAN' } },
        ],
      },
    ],
    truncated: false,
  })
})

t.test('values are JSON-safe: undefined is absent, non-finite numbers are null', async (t) => {
  const mapper = new Mapper({}, { transformers: { weird: () => ({ a: undefined, b: Number.NaN, c: [undefined, Infinity] }) } })
  const { explain } = await mapper.explain({ mapping: { '/gone': '/missing', '/odd': { constant: 1, transform: 'weird' } } }, {})
  const [gone, odd] = explain.pairings as PairingTrace[]
  t.strictSame(gone!.stages, [{ stage: 'locate', keyword: 'source', absent: true }])
  t.equal(gone!.written, false)
  t.strictSame(odd!.value, { b: null, c: [null, null] })
  t.equal(JSON.stringify(explain).includes('undefined'), false)
})

t.test('bounded: a fan-out over 100k elements keeps the first elements, counts the rest, and says truncated', async (t) => {
  const mapper = new Mapper()
  const items = Array.from({ length: 100_000 }, (_, i) => ({ n: i }))
  const long = 'x'.repeat(10_000)
  const { envelope, explain } = await mapper.explain(
    { mapping: { '/out': { source: '/items', each: { '/m': '/n' } }, '/long': '/long', '/after': { constant: true } } },
    { items, long },
    undefined,
    { limits: { fanOut: 200_000, steps: 10_000_000, outputValues: 1_000_000 } }
  )
  t.equal((envelope.out as unknown[]).length, 100_000)
  t.equal(explain.truncated, true)
  const [out, longRead, after] = explain.pairings as PairingTrace[]
  t.equal(out!.pairings?.length, MAX_ELEMENTS)
  t.equal(out!.omitted, 100_000 - MAX_ELEMENTS)
  t.equal(out!.truncated, true, 'the written array is previewed, not copied')
  t.ok((out!.value as unknown[]).length < 100, 'a preview of the written array')
  t.equal(longRead!.truncated, true)
  t.ok((longRead!.value as string).length < 300)
  t.same(after!.value, true, 'pairings after the fan-out are still traced')
  t.ok(JSON.stringify(explain).length < 100_000, 'the whole trace stays small')
})

t.test('explaining leaves the normal plan alone, and a registered id explains through its own twin', async (t) => {
  const mapper = new Mapper({ mappings: [{ $id: 'greet', mapping: { '/text': '/message' } }] })
  const plan = mapper.compile('greet')
  const before = plan.run({ message: 'hi' })
  const synchronous = plan.explain({ message: 'hi' })
  t.notOk(synchronous instanceof Promise, 'synchronous exactly when run is')
  const { envelope, explain } = await synchronous
  t.same(envelope, before)
  t.equal(mapper.compile('greet'), plan, 'the cached plan is the same object')
  t.same(plan.run({ message: 'hi' }), before)
  t.strictSame(explain.pairings, [
    { target: '/text', pointer: '/mapping/~1text', mapping: 'greet', reads: ['/message'], stages: [{ stage: 'locate', keyword: 'source', value: 'hi' }], written: true, value: 'hi' },
  ])
  const array = await plan.explain([{ message: 'a' }])
  t.same(array.envelope, { items: [{ text: 'a' }], valid: true, errors: [] })
  t.equal(array.explain.pairings[0]?.pairings?.[0]?.element, 0)
})

t.test('explain never changes the result: every conformance case evaluated both ways, envelope, throw and stdout', async (t) => {
  t.ok(existsSync(SUITE_DIR), `the conformance suite is at ${SUITE_DIR}`)
  let compared = 0
  for (const file of caseFiles([SUITE_DIR])) {
    for (const c of loadFile(file).cases) {
      // `random` picks differently on every run: nothing to compare.
      if (c.level === 'extend' || JSON.stringify([c.descriptor, c.mappings]).includes('"random"')) continue
      // Every case runs through a Mapper: a get-level descriptor as the right side of one pairing.
      const subject = c.level === 'mapper' ? (c.id ?? c.descriptor) : c.level === 'map' ? c.descriptor : { mapping: { '/value': c.descriptor } }
      const outcome = async (explain: boolean): Promise<{ envelope?: unknown; throws?: string; printed: string[]; trace?: Explanation }> => {
        const printed: string[] = []
        try {
          const mapper = new Mapper({ mappings: c.mappings }, fixtureExtensions, { stdout: (text) => printed.push(text) })
          if (!explain) return { envelope: await mapper.map(subject, c.input), printed }
          const explained = await mapper.explain(subject, c.input)
          return { envelope: explained.envelope, printed, trace: explained.explain }
        } catch (error) {
          return { throws: (error as Error).message, printed }
        }
      }
      const plain = await outcome(false)
      const explained = await outcome(true)
      t.equal(JSON.stringify(explained.envelope), JSON.stringify(plain.envelope), `${c.description}: envelope`)
      t.equal(explained.throws, plain.throws, `${c.description}: throw`)
      t.same(explained.printed, plain.printed, `${c.description}: stdout`)
      if (explained.trace !== undefined) t.doesNotThrow(() => JSON.parse(JSON.stringify(explained.trace)), `${c.description}: the trace is JSON`)
      compared++
    }
  }
  t.ok(compared >= 100, `${compared} cases compared`)
})

const map = (payload: unknown, headers: Record<string, string> = {}) => ({ method: 'POST' as const, url: '/map', payload: payload as object, headers })
/**
 * The HTTP tests share one server per option set (a build costs a few hundred milliseconds, the
 * worker pool of explicit documents and traces a second more); a request leaves nothing behind.
 * `explicitForm` is the one with the explicit form on (its traces in a worker): invalidStatus and
 * the STRICT mapping are there for the first test, and change nothing for a valid `echo`.
 */
const server = sharedByOptions(t)
const explicitForm = shared(t, { mappings: [ECHO, STRICT], options: { map: { explicit: true, invalidStatus: 422 } } })
const checkEnvelope = TypeCompiler.Compile(EnvelopeSchema)

t.test('POST /map: explain beside valid and errors when asked, absent otherwise; the answer matches its schema', async (t) => {
  const app = await explicitForm()
  const document = { mapping: { '/n': { source: '/n', type: 'number' } } }
  const plain = await call(app, map({ mapping: document, input: { n: 1 } }))
  t.equal(plain.body, '{"n":1,"valid":true,"errors":[]}')
  const asked = await call(app, map({ mapping: document, input: { n: 1 }, explain: true }))
  t.equal(asked.statusCode, 200)
  t.same(Object.keys(asked.data), ['n', 'valid', 'errors', 'explain'])
  t.strictSame(asked.data.explain, {
    pairings: [
      {
        target: '/n',
        pointer: '/mapping/~1n',
        reads: ['/n'],
        stages: [
          { stage: 'locate', keyword: 'source', value: 1 },
          { stage: 'validate', keyword: 'type', value: 1 },
        ],
        written: true,
        value: 1,
      },
    ],
    truncated: false,
  })
  t.ok(checkEnvelope.Check(asked.data), JSON.stringify([...checkEnvelope.Errors(asked.data)][0]))
  const off = await call(app, map({ mapping: 'echo', input: { a: 1 }, explain: false }))
  t.same(off.data, { echo: { a: 1 }, valid: true, errors: [] })
  // invalidStatus promotes an invalid envelope, except when a trace was asked for: then it is data.
  const invalid = await call(app, map({ mapping: 'strict', input: { name: 7 } }))
  t.equal(invalid.statusCode, 422)
  const explained = await call(app, map({ mapping: 'strict', input: { name: 7 }, explain: true }))
  t.equal(explained.statusCode, 200)
  t.equal(explained.data.valid, false)
  t.equal(explained.data.explain.pairings[0].stages[1].errors[0].message, invalid.data.errors[0].message)
  t.ok(checkEnvelope.Check(explained.data))
  // An output member named explain gives way to the trace.
  const clash = await call(app, map({ mapping: { mapping: { '/explain': { constant: 'mine' } } }, explain: true }))
  t.equal(clash.data.explain.pairings[0].target, '/explain')
})

t.test('POST /map: who may ask for a trace', async (t) => {
  const forbidden = async (options: Record<string, unknown>, payload: unknown, headers?: Record<string, string>) => {
    const app = await server(options)
    return call(app, map(payload, headers))
  }
  // Default: as the explicit form, which is off by default.
  const off = await forbidden({}, { mapping: 'echo', explain: true })
  t.equal(off.statusCode, 403)
  t.equal(off.data.code, 'Forbidden')
  t.equal(off.data.message, "Explain traces are not enabled on this deployment: the option map.explain turns this on (in OPTIONS, OPTIONS_FILE or the plugin's options)")
  t.equal((await forbidden({}, { mapping: 'echo' })).statusCode, 200, 'without explain nothing changes')
  t.equal((await call(await explicitForm(), map({ mapping: 'echo', explain: true }))).statusCode, 200, 'default: wherever the explicit form is on')
  t.equal((await forbidden({ map: { explain: true } }, { mapping: 'echo', explain: true })).statusCode, 200, 'true: registered ids too, explicit form off')
  t.equal((await forbidden({ map: { explicit: true, explain: false } }, { mapping: 'echo', explain: true })).statusCode, 403, 'false: never')

  const auth = { secret: SECRET }
  const lacking = await forbidden({ auth, map: { explain: { claims: { role: 'debugger' } } } }, { mapping: 'echo', explain: true }, bearer({ role: 'user' }))
  t.equal(lacking.statusCode, 403)
  t.equal(lacking.data.message, 'Caller lacks the claims required for explain traces')
  const holding = await forbidden({ auth, map: { explain: { claims: { role: 'debugger' } } } }, { mapping: 'echo', explain: true }, bearer({ role: 'debugger' }))
  t.equal(holding.statusCode, 200)
  t.ok(Array.isArray(holding.data.explain.pairings))
  // The default follows the explicit form's claims. The gate is the subject: the admitted trace is
  // made inline (isolation false), sparing a worker pool; traces in a worker are `explicitForm`'s.
  const explicitClaims = { auth, map: { explicit: { claims: { scope: 'map:explicit' } } }, isolation: false as const }
  t.equal((await forbidden(explicitClaims, { mapping: 'echo', explain: true }, bearer({ scope: 'read' }))).statusCode, 403)
  t.equal((await forbidden(explicitClaims, { mapping: 'echo', explain: true }, bearer({ scope: 'map:explicit' }))).statusCode, 200)
})

t.test('options: map.explain is validated at startup; its claims need auth', async (t) => {
  await t.rejects(serve(t, { options: untyped({ map: { explain: 'yes' } }) }), /options\.map\.explain/)
  await t.rejects(serve(t, { options: { map: { explain: { claims: { role: 'x' } } } } }), /options\.map\.explain\.claims needs options\.auth/)
})

t.test('the OpenAPI document shows the explain flag and the trace', async (t) => {
  const app = await server()
  const openapi = (await call(app, { method: 'GET', url: '/openapi.json' })).data
  const post = openapi.paths['/map'].post
  // The bodies are named components (MapRequest, MapResponse) the operation refers to.
  const component = (schema: { $ref?: string }): any => (schema.$ref === undefined ? schema : openapi.components.schemas[schema.$ref.replace('#/components/schemas/', '')])
  t.equal(component(post.requestBody.content['application/json'].schema).properties.explain.type, 'boolean')
  const envelope = component(post.responses['200'].content['application/json'].schema)
  t.ok(envelope.properties.explain.properties.pairings, 'the trace is described')
})

t.test('map --explain prints the envelope with its trace', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mapper-explain-'))
  writeFileSync(join(dir, 'doc.json'), JSON.stringify({ mapping: { '/out': { source: '/in', as: 'number' } } }))
  writeFileSync(join(dir, 'input.json'), JSON.stringify({ in: '42' }))
  const explained = await runCli(['map', '--explain', join(dir, 'doc.json'), join(dir, 'input.json')])
  t.equal(explained.code, 0, explained.stderr)
  t.strictSame(JSON.parse(explained.stdout), {
    out: 42,
    valid: true,
    errors: [],
    explain: {
      pairings: [
        {
          target: '/out',
          pointer: '/mapping/~1out',
          reads: ['/in'],
          stages: [
            { stage: 'locate', keyword: 'source', value: '42' },
            { stage: 'finalize', keyword: 'as', value: 42 },
          ],
          written: true,
          value: 42,
        },
      ],
      truncated: false,
    },
  })
  const plain = await runCli(['map', join(dir, 'doc.json'), join(dir, 'input.json')])
  t.same(JSON.parse(plain.stdout), { out: 42, valid: true, errors: [] })
})
