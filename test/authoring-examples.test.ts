// Examples in a mapping document: run at registration (a failing one fails startup with one line),
// by POST /validate (EXAMPLE-1 errors where the caller may evaluate, an EXAMPLE-2 warning where it
// may not), and by `mapper-service test` (exit codes, the readable diff, progress on long runs).
import { compiledEntry } from './proc-compiled.js'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { runCommand } from '../bin/commands.js'
import { differences, Mapper, validate } from '../engine/index.js'
import { RegistrationError } from '../service/mapping-service.js'
import { buildServer, type BuildConfig } from '../server.js'
import { SECRET, sign } from './auth-support.js'
import { spawnEntryPoint, tempTree } from './startup-support.js'

t.setTimeout(300000)

const SILENT = { logging: { level: 'silent' } } as const

/**
 * The /validate tests share one server per option set (a build costs a few hundred milliseconds, the
 * worker pool that runs a submitted document's examples a second more); validating leaves nothing
 * behind. Closed when the file ends.
 */
const servers = new Map<string, Promise<FastifyInstance>>()
function serverWith(options: BuildConfig['options']): Promise<FastifyInstance> {
  const key = JSON.stringify(options)
  let app = servers.get(key)
  if (app === undefined) {
    servers.set(key, (app = buildServer({ options })))
    t.teardown(async () => (await app!).close())
  }
  return app
}

/** A mapping whose example is wrong: /a is read as it is, the example expects a number. */
const WRONG = { $id: 'wrong', mapping: { '/a': '/b' }, examples: [{ input: { b: '1' }, output: { a: 1 } }] }

async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | undefined; out: string; err: string }> {
  let out = ''
  let err = ''
  const code = await runCommand(args, { out: (text) => (out += text), err: (text) => (err += text), stdin: async () => '', env })
  return { code, out, err }
}

t.test('differences: pointer by pointer, key order ignored, absent sides left out', async (t) => {
  t.same(differences({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }), [])
  t.same(differences({ a: 1, b: [1, 2], c: { d: 'x' } }, { a: '1', b: [1], c: { d: 'x', e: null } }), [
    { pointer: '/a', expected: 1, actual: '1' },
    { pointer: '/b/1', expected: 2 },
    { pointer: '/c/e', actual: null },
  ])
  t.same(differences({ 'a/b': 1 }, { 'a/b': 2 }), [{ pointer: '/a~1b', expected: 1, actual: 2 }])
})

t.test('the engine runs examples: valid, errors, array input, compound members, $extend as registered', async (t) => {
  const mapper = new Mapper({ mappings: [{ $id: 'base', mapping: { '/base': { constant: true } } }] })
  const results = await mapper.examples({
    $id: 'child',
    $extend: 'base',
    mapping: { '/n': { source: '/n', required: true } },
    examples: [
      { input: { n: 1 }, output: { base: true, n: 1 } },
      { description: 'refused', input: {}, output: {}, valid: false, errors: [{ source: '/n', required: true, message: 'required value' }] },
      { input: [{ n: 2 }], output: { items: [{ base: true, n: 2 }] } },
      { input: {}, output: {}, valid: false, errors: [] },
    ],
  })
  t.same(
    results.map((result) => [result.pointer, result.pass]),
    [
      ['/examples/0', true],
      ['/examples/1', true],
      ['/examples/2', true],
      ['/examples/3', false],
    ]
  )
  t.same(results[3]!.differences, [{ pointer: '/errors/0', actual: { source: '/n', required: true, message: 'required value' } }])
  const compound = await mapper.examples({
    mappings: {
      inner: { $id: 'inner', mapping: { '/i': '/i' }, examples: [{ input: { i: 1 }, output: { i: 1 } }] },
      outer: { $id: 'outer', mapping: { '/o': { $ref: 'inner' } }, examples: [{ input: { i: 1 }, output: { o: { i: 2 } } }] },
    },
  })
  t.same(
    compound.map((result) => [result.pointer, result.mapping, result.pass]),
    [
      ['/mappings/inner/examples/0', 'inner', true],
      ['/mappings/outer/examples/0', 'outer', false],
    ]
  )
  t.same(compound[1]!.differences, [{ pointer: '/o/i', expected: 2, actual: 1 }])
  t.same(Object.keys(mapper.mappings), ['base'], 'nothing was registered')
})

t.test('examples are checked by validation (KW-examples-1) and are data, not descriptors', async (t) => {
  t.ok(validate({ $id: 'x', mapping: {}, examples: [{ input: { stdout: true }, output: { mapping: 5 } }] }).valid)
  const report = validate({ $id: 'x', mapping: {}, examples: [{ input: 1, output: [] }, 'no'] })
  t.same(
    report.errors.map((error) => [error.rule, error.pointer]),
    [
      ['KW-examples-1', '/examples/0/output'],
      ['KW-examples-1', '/examples/1'],
    ]
  )
  const mapper = new Mapper()
  t.ok(mapper.validate({ $id: 'x', mapping: {}, examples: [{ input: {}, output: { stdout: true } }] }, { stdout: false }).valid, 'a stdout key in an example is not the keyword')
})

t.test('startup: a failing example fails registration with one line naming the mapping, its source and the first difference', async (t) => {
  await t.rejects(buildServer({ mappings: [WRONG], options: SILENT }), {
    name: 'RegistrationError',
    message: 'mapping "wrong" from options.mappings: example 0 fails: /a: expected 1, got "1" (at /examples/0)',
  })
  t.ok(new RegistrationError('x') instanceof Error)
  const app = await buildServer({ mappings: [{ ...WRONG, examples: [{ input: { b: '1' }, output: { a: '1' } }] }], options: SILENT })
  await app.close()
  t.pass('a passing example starts')
})

t.test('startup through the entry point: exit 1, one line on stderr', async (t) => {
  const dir = tempTree(t, { 'maps/wrong.yaml': '$id: wrong\nmapping: { /a: /b }\nexamples:\n  - { input: { b: "1" }, output: { a: 1 } }\n' })
  const exit = await spawnEntryPoint(t, { PORT: '0', MAPPINGS: dir.path('maps'), OPTIONS: JSON.stringify(SILENT) }, 90000, await compiledEntry()).exited
  t.equal(exit.code, 1)
  t.equal(exit.stderr, `mapper-service: mapping "wrong" from ${dir.path('maps/wrong.yaml')}: example 0 fails: /a: expected 1, got "1" (at /examples/0)\n`)
})

t.test('POST /validate runs the examples of a valid submitted document where the caller may evaluate it', async (t) => {
  const app = await serverWith({ ...SILENT, map: { explicit: true } })
  const post = async (mapping: unknown): Promise<Record<string, unknown>> => {
    const response = await app.inject({ method: 'POST', url: '/validate', payload: { mapping } })
    t.equal(response.statusCode, 200)
    return response.json() as Record<string, unknown>
  }
  const failing = await post(WRONG)
  t.equal(failing.valid, false)
  t.same(failing.errors, [
    {
      rule: 'EXAMPLE-1',
      message: 'example 0 fails: /a: expected 1, got "1"',
      pointer: '/examples/0',
      descriptor: WRONG.examples[0],
      differences: [{ pointer: '/a', expected: 1, actual: '1' }],
    },
  ])
  const passing = await post({ ...WRONG, examples: [{ input: { b: 1 }, output: { a: 1 } }] })
  t.same(passing, { valid: true, errors: [], warnings: [], expansion: 1 })
  t.same(await post(WRONG), failing, 'the cached report is left as it was')
  const shape = await post({ ...WRONG, examples: [{ input: {}, output: {}, ouput: {} }] })
  t.match(shape, { valid: false, errors: [{ rule: 'KW-examples-1', pointer: '/examples/0/ouput' }] }, 'a misshapen example is a validation error, and nothing runs')
})

t.test('POST /validate does not evaluate where the caller may not (EXAMPLE-2), and does where it may', async (t) => {
  // Whether the caller may evaluate is decided by the route on the main thread, before any worker
  // is asked (http/routes/validation.ts), and the report is made by the same code inline or in a
  // worker (service/evaluation.ts validateDocument). The gate is the subject here: the default
  // posture validates in a worker as it ships, and the two postures with auth validate inline
  // (isolation.validate false), sparing a worker thread each (a second or more of CPU to start);
  // the test above runs examples in a worker.
  const INLINE = { isolation: { validate: false } } as const
  for (const options of [
    { ...SILENT },
    { ...SILENT, ...INLINE, auth: { secret: SECRET }, map: { explicit: { claims: { role: 'author' } } } },
    { ...SILENT, ...INLINE, auth: { secret: SECRET }, map: { claims: { role: 'service' }, explicit: true } },
  ]) {
    const app = await serverWith(options)
    const headers = 'auth' in options ? { authorization: `Bearer ${sign({ role: 'reader' }, { key: SECRET })}` } : {}
    const response = await app.inject({ method: 'POST', url: '/validate', headers, payload: { mapping: WRONG } })
    t.equal(response.statusCode, 200)
    t.match(response.json(), { valid: true, errors: [], warnings: [{ rule: 'EXAMPLE-2', pointer: '' }] })
  }
  const app = await serverWith({ ...SILENT, ...INLINE, auth: { secret: SECRET }, map: { explicit: { claims: { role: 'author' } } } })
  const headers = { authorization: `Bearer ${sign({ role: 'author' }, { key: SECRET })}` }
  const author = await app.inject({ method: 'POST', url: '/validate', headers, payload: { mapping: WRONG } })
  t.match(author.json(), { valid: false, errors: [{ rule: 'EXAMPLE-1' }], warnings: [] }, 'a caller with the explicit claims gets the examples run')
})

t.test('mapper-service test: exit 0 when all pass, 1 with a diff per failing example, 2 on bad arguments', async (t) => {
  const dir = tempTree(t, {
    'good.yaml': '$id: good\nmapping: { /out: { source: /in, as: number } }\nexamples:\n  - { input: { in: "42" }, output: { out: 42 } }\n',
    'none.json': JSON.stringify({ $id: 'none', mapping: { '/x': '/x' } }),
    'bad/wrong.json': JSON.stringify({
      ...WRONG,
      examples: [{ description: 'a number', input: { b: '1', c: 2 }, output: { a: 1, c: 2 } }, { input: { b: 2 }, output: { a: 2 } }],
    }),
    'bad/invalid.json': JSON.stringify({ $id: 'invalid', mapping: { '/x': { as: 'integer' } } }),
  })
  const ok = await cli(['test', dir.path('good.yaml'), dir.path('none.json'), 'mappings'])
  t.equal(ok.code, 0, ok.out)
  t.match(ok.out, `PASS ${dir.path('good.yaml')}: 1 example\n`)
  t.match(ok.out, `-    ${dir.path('none.json')}: no examples\n`)
  t.match(ok.out, 'PASS mappings/citation.yaml: 2 examples\n')
  t.match(ok.out, /5 documents, 5 examples: 5 passed, 0 failed\n$/)

  const bad = await cli(['test', dir.path('bad')])
  t.equal(bad.code, 1)
  t.equal(
    bad.out,
    [
      `INVALID ${dir.path('bad/invalid.json')}`,
      // The place in the file: line 1, the column of the value "integer" in the one-line JSON.
      `  ${dir.path('bad/invalid.json')}:1:40: error KW-pipeline-1 at /mapping/~1x/as: as must be string, number, boolean, or json`,
      `FAIL ${dir.path('bad/wrong.json')}: 1 of 2 examples failing`,
      '  ✗ /examples/0 (a number):',
      '      /a: expected 1, got "1"',
      '      /c: expected 2, but it is absent',
      '2 documents (1 invalid), 2 examples: 1 passed, 1 failed',
      '',
    ].join('\n')
  )

  t.match(await cli(['test']), { code: 2, err: 'mapper-service: test needs at least one file or directory\n' })
  t.match(await cli(['test', dir.path('absent.json')]), { code: 2, err: /absent\.json: no such file or directory/ })
  t.match(await cli(['test', '--help']), { code: 0, out: /^Usage: mapper-service test/ })
})

t.test('mapper-service test: a running count on stderr when there are many examples', async (t) => {
  const dir = tempTree(t)
  const examples = Array.from({ length: 250 }, (_, i) => ({ input: { v: i }, output: { v: i } }))
  dir.write('many/echo.json', JSON.stringify({ $id: 'many', mapping: { '/v': '/v' }, examples }))
  const ran = await cli(['test', dir.path('many')])
  t.equal(ran.code, 0)
  t.equal(ran.err, 'test: 100/250 examples\ntest: 200/250 examples\n')
  t.match(ran.out, '1 document, 250 examples: 250 passed, 0 failed')
})
