// Work that grows with the caller's input runs off the event loop (issue 30): POST /validate of a
// submitted document goes to the worker pool whatever map.explicit says (isolation.validate), and a
// body with more values than the main thread should build (service/json-text.ts) keeps its objects
// and arrays as text, parsed and evaluated in a worker, for registered mappings too. The extensions
// come from a module written to a temp dir, as a deployment's EXTENSIONS would: `thread` tells where
// a value was transformed, and the module announces each thread that loads it by a line in a file
// (the threads run in the helper process, options.helperProcess), so the test sees a worker start
// (the pool starts lazily, at its first task).
// A worker thread takes seconds to start on a loaded machine: the tests share one server per set
// of options (the default posture on one thread, isolation off, the explicit form without
// isolation.explicit), and so its warm pool.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { loadExtensions } from '../sources/extensions.js'
import { jsonSyntaxProblem } from '../sources/json-syntax.js'
import { LARGE_BODY_CHARS, LARGE_BODY_VALUES } from '../service/json-text.js'
import { buildServer } from '../server.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const dir = mkdtempSync(join(tmpdir(), 'mapper-offloop-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const MODULE = join(dir, 'extensions.mjs')
const STARTED = join(dir, 'started')
writeFileSync(
  MODULE,
  `import { appendFileSync } from 'node:fs'
import { isMainThread, threadId } from 'node:worker_threads'
if (!isMainThread) appendFileSync(${JSON.stringify(STARTED)}, process.pid + '/' + threadId + '\\n')
export default { transformers: { thread: () => (isMainThread ? 'main' : 'worker') } }
`
)

/** Worker threads that loaded the extensions module (process/threadId), as they announce themselves. */
const started = {
  get size(): number {
    return existsSync(STARTED) ? new Set(readFileSync(STARTED, 'utf8').split('\n').filter((line) => line !== '')).size : 0
  },
}

/** Until `started` has grown past `size` (a worker announces itself as it builds its engine). */
async function workerStarted(size: number): Promise<boolean> {
  for (let tries = 0; tries < 250 && started.size <= size; tries++) await new Promise((resolve) => setTimeout(resolve, 20))
  return started.size > size
}

const ECHO = { $id: 'echo', mapping: { '/echo': '/' } }
const WHERE = { $id: 'where', mapping: { '/where': { source: '/x', transform: 'thread' } } }

async function serve(t: Pick<Tap, 'teardown'>, options: Record<string, unknown> = {}): Promise<FastifyInstance> {
  const app = await buildServer({ mappings: [ECHO, WHERE], extensions: await loadExtensions(MODULE), extensionsModule: MODULE, options: { logging: { level: 'silent' }, underPressure: false, ...options } })
  t.teardown(() => app.close())
  return app
}

/**
 * The default posture: no explicit form, /validate (and large bodies) in worker threads; one of
 * them, so that tasks sent at once queue behind it (and one thread starts, not one per core).
 */
const defaults = await serve(t, { isolation: { threads: 1 } })
/** isolation false: everything inline. */
const inlineOnly = await serve(t, { isolation: false })
/** The explicit form on, isolation.explicit off. */
const explicitInline = await serve(t, { map: { explicit: true }, isolation: { explicit: false } })

async function post(app: FastifyInstance, url: string, payload: string): Promise<{ status: number; text: string; data: any }> {
  const response = await app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } })
  return { status: response.statusCode, text: response.body, data: response.json() }
}

/** A compound document whose members each name the next, `members` long. */
function chain(members: number): Record<string, unknown> {
  const mappings: Record<string, unknown> = {}
  for (let i = 0; i < members; i++) mappings[`m${i}`] = { $id: `m${i}`, mapping: { '/x': i + 1 < members ? { source: '/x', mapping: `m${i + 1}` } : '/x' } }
  return { $id: 'root', mappings }
}

t.test('POST /validate in the default posture (no explicit form): the document is validated in a worker, started on demand', async (t) => {
  const app = defaults
  const before = started.size
  // Not a worker's job: registered ids are answered from the report kept with the set.
  t.equal((await post(app, '/validate', JSON.stringify({ mapping: 'echo' }))).data.valid, true)
  const document = chain(300)
  const inline = inlineOnly
  const expected = await post(inline, '/validate', JSON.stringify({ mapping: document }))
  t.equal(started.size, before, 'no worker yet: the pool starts lazily, and isolation false starts none')
  const answer = await post(app, '/validate', JSON.stringify({ mapping: document }))
  t.equal(answer.status, 200)
  t.ok(await workerStarted(before), 'a worker thread started for the validation')
  t.strictSame(answer.data, expected.data, 'the report printed in the worker is the report inline')
  const invalid = await post(app, '/validate', JSON.stringify({ mapping: { mapping: { '/x': { source: '/a', transform: 'nope' } } } }))
  t.equal(invalid.status, 200)
  t.equal(invalid.data.valid, false)
  t.match(invalid.data.errors, [{ rule: String, pointer: String }], 'an invalid document: its report, from the worker')
})

t.test('POST /validate with the explicit form on but isolation.explicit off: examples still run in a worker', async (t) => {
  const app = explicitInline
  const examples = (where: string): string => JSON.stringify({ mapping: { mapping: WHERE.mapping, examples: [{ input: { x: 1 }, output: { where } }] } })
  t.match((await post(app, '/validate', examples('worker'))).data, { valid: true, errors: [], warnings: [] }, 'the example ran in a worker')
  t.match((await post(app, '/validate', examples('main'))).data.errors, [{ rule: 'EXAMPLE-1' }])
  t.same((await post(app, '/map', JSON.stringify({ mapping: WHERE.mapping, input: { x: 1 } }))).data, { where: 'main', valid: true, errors: [] }, 'while /map of a small explicit document runs inline')
  const off = await serve(t, { map: { explicit: true }, isolation: { explicit: false, validate: false } })
  t.match((await post(off, '/validate', examples('worker'))).data.errors, [{ rule: 'EXAMPLE-1' }], 'isolation.validate false: inline')
})

t.test('a body with more values than the main thread builds: a registered mapping evaluates it in a worker, the same answer as inline', async (t) => {
  const app = defaults
  const inline = inlineOnly
  const small = JSON.stringify({ mapping: 'where', input: Array.from({ length: 10 }, (_, x) => ({ x })) })
  t.match((await post(app, '/map', small)).data.items, [{ where: 'main' }], 'a small body: inline, the fast path')

  for (const [name, input] of [
    ['{} items', Array.from({ length: LARGE_BODY_CHARS / 2 }, () => ({}))],
    ['numbers', Array.from({ length: LARGE_BODY_VALUES * 2 }, (_, i) => i)],
    ['records', Array.from({ length: 3000 }, (_, i) => ({ id: i, name: `n\u00e9 ${i} "q"`, tags: ['a', 'b', null], nested: { ok: i % 2 === 0, at: -1.5e3 } }))],
  ] as const) {
    const body = JSON.stringify({ mapping: 'echo', input })
    t.ok(body.length > LARGE_BODY_CHARS, `${name}: a long body`)
    const isolated = await post(app, '/map', body)
    t.equal(isolated.status, 200, name)
    t.equal(isolated.text, (await post(inline, '/map', body)).text, `${name}: the same text as inline`)
    t.equal(isolated.data.items.length, input.length)
  }
  const where = await post(app, '/map', JSON.stringify({ mapping: 'where', input: Array.from({ length: LARGE_BODY_VALUES }, (_, x) => ({ x })) }))
  t.equal(where.status, 200)
  t.ok(where.data.items.every((item: { where: string }) => item.where === 'worker'), 'evaluated in a worker')
  const byId = await post(app, '/map/where', JSON.stringify({ input: Array.from({ length: LARGE_BODY_VALUES }, (_, x) => ({ x })) }))
  t.ok(byId.data.items.every((item: { where: string }) => item.where === 'worker'), 'POST /map/{id} too')
  const isolationOff = await post(inline, '/map', JSON.stringify({ mapping: 'where', input: Array.from({ length: LARGE_BODY_VALUES }, (_, x) => ({ x })) }))
  t.ok(isolationOff.data.items.every((item: { where: string }) => item.where === 'main'), 'isolation false: parsed and evaluated inline')
  t.equal((await post(app, '/map', JSON.stringify({ mapping: 'nope', input: Array.from({ length: LARGE_BODY_VALUES + 1 }, () => 0) }))).status, 404, 'an unknown id is 404 before any worker')
})

t.test('four large bodies at once: all answered, queued behind the threads', async (t) => {
  const app = defaults
  const body = JSON.stringify({ mapping: 'echo', input: Array.from({ length: 40_000 }, () => ({})) })
  const answers = await Promise.all([0, 1, 2, 3].map(() => post(app, '/map', body)))
  for (const answer of answers) {
    t.equal(answer.status, 200)
    t.equal(answer.data.items.length, 40_000)
  }
})

t.test('an explicit document and its large input: evaluated in a worker from their text', async (t) => {
  const app = explicitInline
  const input = Array.from({ length: LARGE_BODY_VALUES }, (_, x) => ({ x }))
  const answer = await post(app, '/map', JSON.stringify({ mapping: WHERE.mapping, input }))
  t.equal(answer.status, 200)
  t.ok(answer.data.items.every((item: { where: string }) => item.where === 'worker'))
  const invalid = await post(app, '/map', JSON.stringify({ mapping: { mapping: { '/x': { source: '/a', transform: 'nope' } } }, input }))
  t.equal(invalid.status, 422, 'an invalid document kept as text: 422 with its report')
  t.equal(invalid.data.code, 'InvalidMappingDocument')
  const array = await post(app, '/map', JSON.stringify({ mapping: [1, 2], input }))
  t.equal(array.status, 400, 'a mapping that is an array: 400, as for a small body')
  t.equal(array.data.message, (await post(app, '/map', JSON.stringify({ mapping: [1, 2], input: 1 }))).data.message)
})

t.test('POST /validate of a large document: kept as text, validated in a worker', async (t) => {
  const app = defaults
  const inline = inlineOnly
  const document = chain(3000)
  const body = JSON.stringify({ mapping: document })
  t.ok(body.length > LARGE_BODY_CHARS)
  const answer = await post(app, '/validate', body)
  t.equal(answer.status, 200)
  t.strictSame(answer.data, (await post(inline, '/validate', body)).data, 'the report inline')
  const array = await post(app, '/validate', JSON.stringify({ mapping: Array.from({ length: LARGE_BODY_VALUES }, () => 0) }))
  t.equal(array.status, 400)
  t.equal(array.data.message, (await post(app, '/validate', JSON.stringify({ mapping: [0] }))).data.message, 'the message of a small body')
})

t.test('a long body that is not JSON, nests too deep or is poisoned: 400, as a short one', async (t) => {
  const app = defaults
  const items = Array.from({ length: 30_000 }, () => ({}))
  const long = JSON.stringify({ mapping: 'echo', input: items })
  for (const [name, text] of [
    ['a trailing comma', `${long.slice(0, -2)},]}`],
    ['cut short', long.slice(0, -1)],
    ['a control character in a string', long.replace('"echo"', '"ec\u0001ho"')],
    ['a bad escape', long.replace('"echo"', '"ec\\qho"')],
    ['a number without digits', `${long.slice(0, -2)},-]}`],
    ['trailing content', `${long} x`],
    ['a line break before the fault', `${long.slice(0, 100)}\n\n ${long.slice(100, -2)},}]}`],
    ['a long string with a bad escape at its end', JSON.stringify({ mapping: 'echo', input: 'x'.repeat(LARGE_BODY_CHARS * 4) }).replace(/x"\}$/, '\\x"}')],
    ['a long string cut short', JSON.stringify({ mapping: 'echo', input: 'x'.repeat(LARGE_BODY_CHARS * 4) }).slice(0, -2)],
  ] as const) {
    const answer = await post(app, '/map', text)
    t.equal(answer.status, 400, name)
    const problem = jsonSyntaxProblem(text)!
    t.equal(answer.data.message, `Body must be valid JSON (line ${problem.line}, column ${problem.column}): ${problem.description}`, `${name}: named where it stops`)
  }
  const deep = JSON.stringify({ mapping: 'echo', input: [...items, JSON.parse(`${'['.repeat(600)}${']'.repeat(600)}`)] })
  t.match((await post(app, '/map', deep)).data, { code: 'BadRequest', message: /nest deeper than 512/ })
  const poisoned = JSON.stringify({ mapping: 'echo', input: [...items, { a: 1 }] }).replace('{"a":1}', '{"__proto__":{"x":1}}')
  t.match((await post(app, '/map', poisoned)).data, { code: 'BadRequest', message: /__proto__/ }, 'a poisoned key inside the large input: refused in the worker')
  const escaped = JSON.stringify({ mapping: 'echo', input: [...items, { a: 1 }] }).replace('{"a":1}', '{"\\u005f_proto__":{"x":1}}')
  t.match((await post(app, '/map', escaped)).data, { code: 'BadRequest', message: /__proto__/ }, 'hidden behind an escape')
  const topLevel = `{"__proto__":{"x":1},${long.slice(1)}`
  t.match((await post(app, '/map', topLevel)).data, { code: 'BadRequest', message: /__proto__/ }, 'at the top')
  const array = await post(app, '/map', JSON.stringify(items))
  t.equal(array.status, 400, 'a top-level array')
  t.equal(array.data.message, (await post(app, '/map', '[{}]')).data.message, 'the message of a short one')
  const extra = await post(app, '/map', JSON.stringify({ mapping: 'echo', input: 1, junk: items }))
  t.equal(extra.status, 400, 'a member the body does not have, kept as text: refused by the schema')
  t.match(extra.data.message, /"junk"/)
  const fewValues = JSON.stringify({ mapping: 'echo', input: 'x'.repeat(LARGE_BODY_CHARS * 4) })
  t.equal((await post(app, '/map', fewValues)).data.echo.length, LARGE_BODY_CHARS * 4, 'a long body of few values: parsed at once')
})
