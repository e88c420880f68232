// Claims (http.md §5) and the gates of §4: `map.claims` for both forms of /map,
// `map.explicit.claims` on top for the explicit form, `validate.claims` for /validate. AND across
// claims, any-of values, array claims in the token, `scope`/`scp` as space-separated lists; 403 with
// the exact messages; `context.identity` is the verified payload. Table-driven, as the spec is.
import t from 'tap'
import { claimsSatisfied } from '../http/plugins/auth/index.js'
import type { Claims } from '../config/options-schema.js'
import { SECRET, call, nowSeconds, service, sharedServices, sign, type Tap } from './auth-support.js'

type Identity = Record<string, unknown> | null

const MATCHING: Array<[name: string, claims: Claims | undefined, identity: Identity, expected: boolean]> = [
  ['no claims configured: anyone authenticated passes', undefined, { sub: 'a' }, true],
  ['no claims configured, no identity (auth off)', undefined, null, true],
  ['claims configured but no identity', { role: 'admin' }, null, false],
  ['an empty claims object asks for nothing', {}, { sub: 'a' }, true],
  ['scalar equals the one allowed value', { role: 'admin' }, { role: 'admin' }, true],
  ['scalar is not the allowed value', { role: 'admin' }, { role: 'user' }, false],
  ['claim missing from the token', { role: 'admin' }, { sub: 'a' }, false],
  ['scalar is one of the allowed values', { role: ['admin', 'editor'] }, { role: 'editor' }, true],
  ['scalar is none of the allowed values', { role: ['admin', 'editor'] }, { role: 'viewer' }, false],
  ['array claim: one element allowed', { role: 'editor' }, { role: ['viewer', 'editor'] }, true],
  ['array claim against a list: any element in the list', { groups: ['ops', 'dev'] }, { groups: ['sales', 'dev'] }, true],
  ['array claim: no element allowed', { role: 'editor' }, { role: ['viewer', 'guest'] }, false],
  ['empty array claim', { role: 'editor' }, { role: [] }, false],
  ['AND: every claim must match', { role: 'admin', tenant: 'acme' }, { role: 'admin', tenant: 'acme' }, true],
  ['AND: one claim failing fails all', { role: 'admin', tenant: 'acme' }, { role: 'admin', tenant: 'other' }, false],
  ['AND: one claim missing fails all', { role: 'admin', tenant: 'acme' }, { role: 'admin' }, false],
  ['scope: a space-separated string is a list', { scope: 'map:write' }, { scope: 'openid map:read map:write' }, true],
  ['scope: any of several allowed scopes', { scope: ['admin', 'validate'] }, { scope: 'profile validate' }, true],
  ['scope: no substring matching', { scope: 'map' }, { scope: 'map:read map:write' }, false],
  ['scope: the whole string is not one scope', { scope: 'map:read' }, { scope: 'openid  map:read ' }, true],
  ['scope as an array in the token', { scope: 'validate' }, { scope: ['map', 'validate'] }, true],
  ['scp splits on spaces too', { scp: 'Mapper.Write' }, { scp: 'Mapper.Read Mapper.Write' }, true],
  ['scp missing the scope', { scp: 'Mapper.Write' }, { scp: 'Mapper.Read' }, false],
  ['other claims never split on spaces', { role: 'admin' }, { role: 'admin user' }, false],
  ['other claims match a spaced value exactly', { name: 'Ada Lovelace' }, { name: 'Ada Lovelace' }, true],
  ['scope in the token does not satisfy scp', { scp: 'validate' }, { scope: 'validate' }, false],
  ['numbers match numbers', { level: [3, 4] }, { level: 4 }, true],
  ['a number is not its string', { level: 3 }, { level: '3' }, false],
  ['booleans match booleans', { email_verified: true }, { email_verified: true }, true],
  ['a boolean is not its string', { email_verified: true }, { email_verified: 'true' }, false],
  ['null in the token matches nothing', { role: 'admin' }, { role: null }, false],
  ['an object claim matches nothing', { role: 'admin' }, { role: { name: 'admin' } }, false],
  ['inherited members are not claims', { constructor: 'Object' }, {}, false],
  ['an own __proto__ claim is read as data', { __proto__: 'x' } as unknown as Claims, JSON.parse('{"__proto__":"x"}') as Identity, true],
]

t.test('claim matching (claimsSatisfied)', async (t) => {
  for (const [name, claims, identity, expected] of MATCHING) {
    t.equal(claimsSatisfied(identity, claims), expected, name)
  }
})

const GATED = {
  auth: { secret: SECRET },
  map: { claims: { role: ['mapper', 'admin'] }, explicit: { claims: { scope: 'map:explicit' } } },
  validate: { claims: { scope: 'validate' } },
}

const EXPLICIT = { mapping: { '/copy': '/a' } }

/** The tests of GATED share one service (a build costs a few hundred milliseconds). */
const shared = sharedServices(t)

type Outcome = 200 | '/map' | 'explicit mappings' | '/validate'

// token payload → [registered /map, explicit /map, /validate]
const GATES: Array<[name: string, payload: Record<string, unknown>, expected: [Outcome, Outcome, Outcome]]> = [
  ['no claims at all', { sub: 'anon' }, ['/map', '/map', '/validate']],
  ['a mapper role: registered only', { role: 'mapper' }, [200, 'explicit mappings', '/validate']],
  ['a mapper role with the explicit scope', { role: 'mapper', scope: 'openid map:explicit' }, [200, 200, '/validate']],
  ['the explicit scope without a mapper role', { scope: 'map:explicit validate' }, ['/map', '/map', 200]],
  ['admin among roles, every scope', { role: ['guest', 'admin'], scope: 'validate map:explicit' }, [200, 200, 200]],
  ['validate scope only', { scope: 'validate' }, ['/map', '/map', 200]],
  ['a role not allowed', { role: 'viewer', scope: ['validate'] }, ['/map', '/map', 200]],
]

function assertOutcome(t: Tap, response: Awaited<ReturnType<typeof call>>, outcome: Outcome, label: string): void {
  if (outcome === 200) {
    t.equal(response.statusCode, 200, `${label}: 200 ${response.body}`)
    return
  }
  t.equal(response.statusCode, 403, `${label}: 403`)
  t.same(response.json(), { code: 'Forbidden', message: `Caller lacks the claims required for ${outcome}`, requestId: response.headers['x-request-id'] }, label)
  t.notOk(response.headers['www-authenticate'], `${label}: a 403 is not an authentication challenge`)
}

t.test('the gates of /map, explicit mappings and /validate', async (t) => {
  const app = await shared(GATED)
  for (const [name, payload, [registered, explicit, validate]] of GATES) {
    const token = sign(payload, { key: SECRET })
    assertOutcome(t, await call(app, { token, body: { mapping: 'echo', input: { a: 1 } } }), registered, `${name}, registered`)
    assertOutcome(t, await call(app, { token, body: { mapping: EXPLICIT, input: { a: 1 } } }), explicit, `${name}, explicit`)
    assertOutcome(t, await call(app, { url: '/validate', token, body: { mapping: 'echo' } }), validate, `${name}, validate`)
    // Listing needs authentication only.
    t.equal((await call(app, { method: 'GET', url: '/mappings', token })).statusCode, 200, `${name}, /mappings`)
    t.equal((await call(app, { method: 'GET', url: '/extensions', token })).statusCode, 200, `${name}, /extensions`)
  }
})

t.test('claims are checked before the registry is consulted: an unknown id is 403, not 404', async (t) => {
  const app = await shared(GATED)
  const outsider = sign({ sub: 'x' }, { key: SECRET })
  assertOutcome(t, await call(app, { token: outsider, body: { mapping: 'no-such-mapping' } }), '/map', 'unknown id')
  assertOutcome(t, await call(app, { url: '/validate', token: outsider, body: { mapping: 'no-such-mapping' } }), '/validate', 'unknown id')
  const mapper = sign({ role: 'mapper', scope: 'validate' }, { key: SECRET })
  t.equal((await call(app, { token: mapper, body: { mapping: 'no-such-mapping' } })).statusCode, 404)
  t.equal((await call(app, { url: '/validate', token: mapper, body: { mapping: 'no-such-mapping' } })).statusCode, 404)
})

t.test('postures: registered-only, explicit for named callers, validate but never evaluate', async (t) => {
  const registeredOnly = await service(t, { auth: { secret: SECRET }, map: { claims: { scope: 'map' } } })
  const caller = sign({ sub: 'svc', scope: 'map' }, { key: SECRET })
  t.equal((await call(registeredOnly, { token: caller })).statusCode, 200)
  const explicitOff = await call(registeredOnly, { token: caller, body: { mapping: EXPLICIT } })
  t.equal(explicitOff.statusCode, 403)
  t.equal(explicitOff.json().message, "The explicit mapping form is not enabled on this deployment: the option map.explicit turns this on (in OPTIONS, OPTIONS_FILE or the plugin's options)")

  const namedCallers = await service(t, { auth: { secret: SECRET }, map: { explicit: { claims: { sub: ['ci-bot', 'author'] } } } })
  t.equal((await call(namedCallers, { token: sign({ sub: 'ci-bot' }, { key: SECRET }), body: { mapping: EXPLICIT, input: { a: 2 } } })).json().copy, 2)
  assertOutcome(t, await call(namedCallers, { token: sign({ sub: 'someone' }, { key: SECRET }), body: { mapping: EXPLICIT } }), 'explicit mappings', 'not named')
  t.equal((await call(namedCallers, { token: sign({ sub: 'someone' }, { key: SECRET }) })).statusCode, 200, 'registered stays open')

  // Validation is open to authors; nothing they submit is ever evaluated.
  const validateOnly = await service(t, { auth: { secret: SECRET }, validate: { claims: { role: 'author' } }, map: { claims: { role: 'service' } } })
  const author = sign({ role: 'author' }, { key: SECRET })
  const report = await call(validateOnly, { url: '/validate', token: author, body: { mapping: EXPLICIT } })
  t.equal(report.statusCode, 200)
  t.equal(report.json().valid, true)
  assertOutcome(t, await call(validateOnly, { token: author, body: { mapping: EXPLICIT } }), '/map', 'author evaluating')
  assertOutcome(t, await call(validateOnly, { token: author }), '/map', 'author evaluating a registered mapping')
})

t.test('context.identity is the verified payload, in registered and explicit mappings', async (t) => {
  const app = await service(t, { auth: { secret: SECRET, issuer: 'idp' }, map: { explicit: true } })
  const payload = { sub: 'alice', iss: 'idp', role: ['a', 'b'], nested: { tenant: 'acme' }, scope: 'x y', exp: nowSeconds() + 600 }
  const token = sign(payload, { key: SECRET, noTimestamp: true })
  t.same((await call(app, { token, body: { mapping: 'whoami' } })).json(), { identity: payload, valid: true, errors: [] })
  const explicit = await call(app, { token, body: { mapping: { mapping: { '/who': { whoami: { pointer: '/sub' } }, '/tenant': { whoami: { pointer: '/nested/tenant' } } } } } })
  t.same(explicit.json(), { who: 'alice', tenant: 'acme', valid: true, errors: [] })

  const withTimes = sign({ sub: 'bob', iss: 'idp' }, { key: SECRET })
  const identity = (await call(app, { token: withTimes, body: { mapping: 'whoami' } })).json().identity as Record<string, unknown>
  t.equal(identity.sub, 'bob')
  t.type(identity.iat, 'number', 'the whole payload, registered claims included')
})
