// The extension interfaces (language.md §12): registration rules, what extensions see on the
// context, re-entrant evaluation (EXT-4), the diagnostic mode for unknown names (GET-5).
import t from 'tap'
import { Mapper, evaluate, type EvaluationContext } from '../engine/index.js'

t.test('registration refuses plugins named like keywords and non-functions', async (t) => {
  t.throws(() => new Mapper({}, { plugins: { source: async () => 1 } }), {
    message: 'Plugin "source" cannot be registered: "source" is a keyword of the mapping language',
  })
  t.throws(() => new Mapper({}, { transformers: { x: 'nope' as never } }), { message: 'transformers "x" must be a function' })
})

t.test('extensions see the context: scopes, paths, identity, signal', async (t) => {
  const seen: Array<Record<string, unknown>> = []
  const controller = new AbortController()
  const mapper = new Mapper({}, {
    plugins: {
      look: async (_options, value, context: EvaluationContext) => {
        seen.push({
          value,
          source: context.source,
          paths: context.paths,
          identity: context.identity,
          aborted: context.signal?.aborted,
          output: structuredClone(context.output),
        })
        return value
      },
    },
  })
  await mapper.map(
    { mapping: { '/first': { constant: 1 }, '/rows': { source: '/items', each: { '/v': { source: '/n', look: {} } } } } },
    { items: [{ n: 'a' }, { n: 'b' }] },
    { identity: { sub: 'alice' }, signal: controller.signal, input: 'ignored: shared fields are never overridden' }
  )
  t.same(seen, [
    { value: 'a', source: { n: 'a' }, paths: { source: '/items/0/n', target: '/' }, identity: { sub: 'alice' }, aborted: false, output: { first: 1 } },
    { value: 'b', source: { n: 'b' }, paths: { source: '/items/1/n', target: '/' }, identity: { sub: 'alice' }, aborted: false, output: { first: 1 } },
  ])
})

t.test('re-entrant evaluation shares roots, registries and errors but has its own scopes (EXT-4)', async (t) => {
  const mapper = new Mapper(
    { mappings: { m: { $id: 'mapping:Params', mapping: { '/id': '/ref/id', '/kind': { constant: 'book' } } } } },
    {
      plugins: {
        build: async (options: { body: unknown }, value, context) => {
          const body = await context.evaluateMapping(options.body as never, { source: value })
          const fromRoot = await context.evaluate({ input: '/top' })
          return { body, fromRoot, targetUntouched: structuredClone(context.target) }
        },
        check: async (_options, value, context) => {
          await context.evaluate({ source: '/x', required: true }, { source: {} })
          return value
        },
      },
    }
  )
  const envelope = await mapper.map(
    { mapping: { '/pre': { constant: 0 }, '/req': { source: '/item', build: { body: { mapping: 'mapping:Params' } } } } },
    { top: 'T', item: { ref: { id: 9 } } }
  )
  t.same(envelope, {
    pre: 0,
    req: { body: { id: 9, kind: 'book' }, fromRoot: 'T', targetUntouched: { pre: 0 } },
    valid: true,
    errors: [],
  })
  const failed = await mapper.map({ mapping: { '/a': { constant: 1, check: {} }, '/b': { constant: 2 } } }, {})
  t.same(failed, { valid: false, errors: [{ source: '/x', required: true, message: 'required value' }] }, 'inner errors join the shared list')
})

t.test('unknown init and transform names: skipped by default, reported in the diagnostic mode', async (t) => {
  const descriptor = { source: '/s', init: 'nope', transform: ['trim', { nada: 1 }] }
  const skip: unknown[] = []
  t.equal(await evaluate(descriptor, { input: { s: ' x ' }, errors: skip as never, transformers: { trim: (v) => String(v).trim() } }), 'x')
  t.same(skip, [])
  const report: unknown[] = []
  await evaluate(descriptor, { input: { s: ' x ' }, errors: report as never, unknownNames: 'error', transformers: { trim: (v) => String(v).trim() } })
  t.same(report, [
    { source: '/s', init: 'nope', message: 'nope matches no registered initializer' },
    { source: '/s', transform: 'nada', message: 'nada matches no registered transformer' },
  ])
})

t.test('a thrown extension error escapes the invocation as an exception', async (t) => {
  const mapper = new Mapper({}, { transformers: { boom: () => { throw new Error('transformer exploded') } } })
  await t.rejects(mapper.map({ mapping: { '/a': { source: '/a', transform: 'boom' } } }, { a: 1 }), { message: 'transformer exploded' })
})

t.test('plugin options are the document\'s, read-only', async (t) => {
  const mapper = new Mapper({}, {
    plugins: {
      mutate: async (options: Record<string, unknown>, value) => {
        options.sneaky = true
        return value
      },
    },
  })
  await t.rejects(mapper.map({ mapping: { '/a': { source: '/a', mutate: { k: 1 } } } }, { a: 1 }), TypeError)
})

t.test('stdout prints through the configured sink and never changes the result', async (t) => {
  const lines: string[] = []
  const mapper = new Mapper({}, {}, { stdout: (line) => lines.push(line) })
  const envelope = await mapper.map({ stdout: '/o', mapping: { '/o': { constant: { k: 1 } } } }, {})
  t.same(envelope, { o: { k: 1 }, valid: true, errors: [] })
  t.same(lines, ['{\n  "k": 1\n}'])
})
