// POST /validate (http.md §4): a submitted document against this instance (registry plus its own
// members, screens included) or a registered id; always 200 with { valid, errors, warnings } and,
// when it has one, the static expansion bound; 404
// for an unknown id, 400 only for a malformed request; never gated by map.explicit.
import fc from 'fast-check'
import t from 'tap'
import { ECHO, GREETINGS, SECRET, bearer, call, serve, shared } from './http-support.js'

const validate = (payload: unknown) => ({ method: 'POST' as const, url: '/validate', payload: payload as object })
const CLEAN = { valid: true, errors: [], warnings: [] }
/** A clean report whose document enters `levels` mapping levels on any input. */
const clean = (levels: number) => ({ ...CLEAN, expansion: levels })

/**
 * The tests without options of their own share one server, and so one worker pool for the submitted
 * documents (a build costs a few hundred milliseconds, a worker a second more); validating leaves
 * nothing behind. Its registry holds what the registered-id test validates.
 */
const instance = shared(t, { mappings: [ECHO, { $id: 'base', mapping: { '/a': '/a' } }, { $id: 'derived', $extend: 'base', mapping: { '/b': '/b' } }] })

t.test('a valid document: 200 with a clean report, explicit form off', async (t) => {
  const app = await instance()
  for (const mapping of [GREETINGS, { mapping: { '/text': '/message' } }, { '/text': '/message' }]) {
    const response = await call(app, validate({ mapping }))
    t.equal(response.statusCode, 200)
    t.same(response.data, clean(1))
    t.same(Object.keys(response.data), ['valid', 'errors', 'warnings', 'expansion'])
  }
})

t.test('an invalid document is data at 200 with the full report', async (t) => {
  const app = await instance()
  const response = await call(app, validate({ mapping: { mapping: { '/slug': { source: '/title', transform: 'slugify' } } } }))
  t.equal(response.statusCode, 200)
  t.equal(response.body, '{"valid":false,"errors":[{"rule":"KW-transform-1","message":"slugify matches no registered transformer","pointer":"/mapping/~1slug/transform","descriptor":"slugify"}],"warnings":[]}')
  const wrongType = await call(app, validate({ mapping: { mapping: 42 } }))
  t.equal(wrongType.statusCode, 200)
  t.equal(wrongType.data.valid, false)
  t.ok(wrongType.data.errors.length > 0)
})

t.test('instance level: installed names and the document members are reachable', async (t) => {
  const app = await serve(t, { mappings: [ECHO], extensions: { transformers: { slugify: (value: unknown) => value } } })
  t.same((await call(app, validate({ mapping: { mapping: { '/slug': { source: '/title', transform: 'slugify' } } } }))).data, clean(1))
  t.same((await call(app, validate({ mapping: { mapping: { '/inner': 'echo' } } }))).data, clean(2), 'an installed mapping')
  const members = { mappings: { b: { $id: 'b', mapping: { '/y': '/y' } }, a: { $id: 'a', mapping: { '/x': 'b', '/z': 'b' } } } }
  t.same((await call(app, validate({ mapping: members }))).data, clean(3), 'a sibling member, named twice')
  const missing = await call(app, validate({ mapping: { mapping: { '/x': 'missing' } } }))
  t.same(missing.data, {
    valid: false,
    errors: [{ rule: 'REG-1', message: 'missing matches no registered mapping', pointer: '/mapping/~1x', descriptor: 'missing' }],
    warnings: [],
  })
})

t.test('the screens report at 200: REG-6, DOC-6 and the pattern screen', async (t) => {
  const app = await instance()
  const forbidden = await call(app, { method: 'POST', url: '/validate', payload: '{"mapping":{"mappings":{"a":{"$id":"constructor","mapping":{}}}}}' })
  t.equal(forbidden.statusCode, 200)
  t.same(forbidden.data, {
    valid: false,
    errors: [{ rule: 'REG-6', message: '"constructor" is not allowed as a mapping $id', pointer: '/mappings/a/$id', descriptor: 'constructor' }],
    warnings: [],
  })
  let deep: unknown = { '/x': '/y' }
  for (let level = 0; level < 150; level++) deep = { '/x': { mapping: deep } }
  const tooDeep = await call(app, validate({ mapping: { mapping: deep } }))
  t.equal(tooDeep.statusCode, 200)
  t.equal(tooDeep.data.valid, false)
  t.equal(tooDeep.data.errors[0].rule, 'DOC-6')
  const redos = await call(app, validate({ mapping: { mapping: { '/out': { source: '/s', pattern: '(a+)+$' } } } }))
  t.equal(redos.statusCode, 200)
  t.equal(redos.data.errors[0].rule, 'KW-pattern-2')
})

t.test('a registered id: its flattened document is validated; unknown ids are 404', async (t) => {
  const app = await instance()
  t.same((await call(app, validate({ mapping: 'echo' }))).data, clean(1))
  t.same((await call(app, validate({ mapping: 'derived' }))).data, clean(1))
  for (const id of ['nope', '__proto__', 'toString']) {
    const response = await call(app, validate({ mapping: id }))
    t.equal(response.statusCode, 404)
    t.equal(response.data.code, 'NotFound')
    t.equal(response.data.message, `No mapping registered as "${id}"`)
  }
})

t.test('a malformed request is 400', async (t) => {
  const app = await instance()
  for (const body of [{}, { mapping: 42 }, { mapping: null }, { mapping: ['echo'] }, [], 'echo']) {
    const response = await call(app, { method: 'POST', url: '/validate', payload: JSON.stringify(body) })
    t.equal(response.statusCode, 400, JSON.stringify(body))
    t.equal(response.data.code, 'BadRequest')
  }
  const broken = await call(app, { method: 'POST', url: '/validate', payload: '{"mapping":' })
  t.equal(broken.data.message, 'Body must be valid JSON (line 1, column 12): unexpected end of input')
})

t.test('gated only by validate.claims: not by map.claims nor map.explicit', async (t) => {
  // The gates are the subject: the admitted document is validated inline (isolation: false), sparing
  // a worker pool of its own; the shared server's tests validate in worker threads.
  const app = await serve(t, { options: { auth: { secret: SECRET }, map: { claims: { role: 'admin' } }, validate: { claims: { role: ['admin', 'validator'] } }, isolation: false } })
  const validator = bearer({ role: 'validator' })
  t.equal((await call(app, { ...validate({ mapping: GREETINGS }), headers: validator })).statusCode, 200)
  t.equal((await call(app, { method: 'POST', url: '/map', payload: { mapping: GREETINGS }, headers: validator })).statusCode, 403)
  const user = await call(app, { ...validate({ mapping: GREETINGS }), headers: bearer({ role: 'user' }) })
  t.equal(user.statusCode, 403)
  t.equal(user.data.message, 'Caller lacks the claims required for /validate')
  t.equal((await call(app, validate({ mapping: GREETINGS }))).statusCode, 401, 'authenticated')
})

t.test('other methods: 405 Use POST', async (t) => {
  const app = await instance()
  const response = await call(app, { method: 'GET', url: '/validate' })
  t.equal(response.statusCode, 405)
  t.equal(response.data.message, 'Use POST')
  t.equal(response.headers.allow, 'POST, OPTIONS')
})

t.test('any JSON document gets a well-formed report at 200, never a server error', async (t) => {
  const app = await instance()
  await fc.assert(
    // Bodies with prototype keys are refused before validation (http-common covers them).
    fc.asyncProperty(fc.jsonValue({ maxDepth: 5 }).filter((value) => !/__proto__|prototype/.test(JSON.stringify(value))), async (value) => {
      for (const mapping of [{ mapping: value }, { mappings: { m: value } }]) {
        const response = await app.inject(validate({ mapping }))
        if (response.statusCode !== 200) throw new Error(`${response.statusCode} for ${JSON.stringify(mapping)}: ${response.body}`)
        const report = JSON.parse(response.body)
        if (report.valid !== (report.errors.length === 0)) throw new Error(`valid does not match errors: ${response.body}`)
        for (const entry of [...report.errors, ...report.warnings]) {
          if (Object.keys(entry).join() !== 'rule,message,pointer,descriptor') throw new Error(`entry keys: ${JSON.stringify(entry)}`)
        }
      }
    }),
    { numRuns: 150 }
  )
  t.pass('150 documents')
})

t.test('validate.strict: warnings are errors in /validate, an explicit /map refuses them, a registered one does not start', async (t) => {
  const misspelt = { mapping: { '/a': { sourc: '/b' } } }
  const lenient = await serve(t, { options: { map: { explicit: {} }, isolation: false } })
  const warned = await call(lenient, validate({ mapping: misspelt }))
  t.equal(warned.data.valid, true, 'without strict: a warning')
  t.match(warned.data.warnings, [{ rule: 'KW-2', pointer: '/mapping/~1a/sourc' }])
  const copied = await call(lenient, { method: 'POST', url: '/map', payload: { mapping: misspelt, input: { b: 1 } } })
  t.equal(copied.statusCode, 200, 'and /map runs it (the misspelt key is inert)')

  for (const isolation of [false, undefined]) {
    const strict = await serve(t, { options: { map: { explicit: {} }, validate: { strict: true }, ...(isolation === false ? { isolation } : {}) } })
    const report = await call(strict, validate({ mapping: misspelt }))
    t.equal(report.statusCode, 200)
    t.same(report.data, { valid: false, errors: [{ rule: 'KW-2', message: 'sourc matches no keyword or registered extension (did you mean source?)', pointer: '/mapping/~1a/sourc', descriptor: '/b' }], warnings: [] })
    const refused = await call(strict, { method: 'POST', url: '/map', payload: { mapping: misspelt, input: { b: 1 } } })
    t.equal(refused.statusCode, 422, `isolation ${String(isolation)}: refused`)
    t.equal(refused.data.code, 'InvalidMappingDocument')
    t.match(JSON.stringify(refused.data), /KW-2/)
    const fine = await call(strict, { method: 'POST', url: '/map', payload: { mapping: { mapping: { '/a': { source: '/b' } } }, input: { b: 1 } } })
    t.same(fine.data, { a: 1, valid: true, errors: [] }, 'a clean document still runs')
  }

  await t.rejects(serve(t, { mappings: [{ $id: 'typo', mapping: { '/a': { sourc: '/b' } } }], options: { validate: { strict: true } } }), /mapping "typo" .*is invalid: first at .*KW-2 at \/mapping\/~1a\/sourc/)
  const started = await serve(t, { mappings: [{ $id: 'typo', mapping: { '/a': { sourc: '/b' } } }] })
  t.equal((await call(started, { method: 'POST', url: '/map', payload: { mapping: 'typo', input: {} } })).statusCode, 200, 'without strict it starts, with a warning in the log')
})
