// Keys from a JWKS (http.md §5, `jwksUri`): a real key-set server on 127.0.0.1 serving JWKs with
// kids, at the well-known path or a custom one; RS256, ES256 and EdDSA keys; rotation (a kid served
// later is fetched and accepted, a removed or unknown kid is refused); the attacks, which never
// cause a fetch; one fetch for concurrent lookups; a key-set server that is down.
import t from 'tap'
import {
  assertMapped,
  assertUnauthorized,
  call,
  ecKeys,
  edKeys,
  hmacToken,
  jwk,
  jwksServer,
  nowSeconds,
  rsaKeys,
  service,
  sign,
  unsignedToken,
} from './auth-support.js'

const rsa = rsaKeys()
const ec = ecKeys()
/** Another RSA pair (a rotated-in key, an attacker's, a second candidate): made once, as a 2048-bit pair takes a while. */
const otherRsa = rsaKeys()

t.test('keys at /.well-known/jwks.json, chosen by kid: RS256 and ES256 (and EdDSA)', async (t) => {
  const jwks = await jwksServer(t)
  const ed = edKeys()
  jwks.keys = [jwk(rsa, 'rsa-1', 'RS256'), jwk(ec, 'ec-1'), jwk(ed, 'ed-1')]
  const app = await service(t, { auth: { jwksUri: `${jwks.origin}/.well-known/jwks.json` } })
  assertMapped(t, await call(app, { token: sign({ sub: 'alice' }, { key: rsa.privatePem, algorithm: 'RS256', kid: 'rsa-1' }) }))
  assertMapped(t, await call(app, { token: sign({ sub: 'alice' }, { key: ec.privatePem, algorithm: 'ES256', kid: 'ec-1' }) }))
  assertMapped(t, await call(app, { token: sign({ sub: 'alice' }, { key: ed.privatePem, algorithm: 'EdDSA', kid: 'ed-1' }) }))
  t.same(jwks.hits, ['/.well-known/jwks.json'], 'one fetch serves every kid of the set')

  const claims = { sub: 'alice', role: 'reader', exp: nowSeconds() + 600 }
  const identity = await call(app, { body: { mapping: 'whoami' }, token: sign(claims, { key: rsa.privatePem, algorithm: 'RS256', kid: 'rsa-1', noTimestamp: true }) })
  t.same(identity.json(), { identity: claims, valid: true, errors: [] })
})

t.test('a custom jwksUri path is fetched as given', async (t) => {
  const jwks = await jwksServer(t, '/tenants/acme/keys.json')
  jwks.keys = [jwk(rsa, 'k1')]
  const app = await service(t, { auth: { jwksUri: `${jwks.origin}/tenants/acme/keys.json`, issuer: 'https://idp.example', audience: 'mapper' } })
  assertMapped(t, await call(app, { token: sign({ iss: 'https://idp.example', aud: 'mapper' }, { key: rsa.privatePem, algorithm: 'RS256', kid: 'k1' }) }))
  assertUnauthorized(t, await call(app, { token: sign({ iss: 'https://idp.example', aud: 'web' }, { key: rsa.privatePem, algorithm: 'RS256', kid: 'k1' }) }), 'Invalid audience')
  assertUnauthorized(t, await call(app, { token: sign({ iss: 'https://idp.example', aud: 'mapper', exp: nowSeconds() - 60 }, { key: rsa.privatePem, algorithm: 'RS256', kid: 'k1' }) }), 'Token expired')
  t.same(jwks.hits, ['/tenants/acme/keys.json'])
})

t.test('rotation: a kid served later is accepted; a removed kid and an unknown kid are refused', async (t) => {
  const jwks = await jwksServer(t)
  const next = otherRsa
  jwks.keys = [jwk(rsa, 'old')]
  const app = await service(t, { auth: { jwksUri: `${jwks.origin}/.well-known/jwks.json` } })
  const byOld = sign({ sub: 'alice' }, { key: rsa.privatePem, algorithm: 'RS256', kid: 'old' })
  const byNew = sign({ sub: 'alice' }, { key: next.privatePem, algorithm: 'RS256', kid: 'new' })
  assertMapped(t, await call(app, { token: byOld }))
  t.equal(jwks.hits.length, 1)

  // The provider publishes the new key and drops the old one.
  jwks.keys = [jwk(next, 'new')]
  assertMapped(t, await call(app, { token: byNew }))
  t.equal(jwks.hits.length, 2, 'the unknown kid made the set be fetched again')
  assertMapped(t, await call(app, { token: byNew }))
  t.equal(jwks.hits.length, 2, 'then it is cached')

  assertUnauthorized(t, await call(app, { token: byOld }), 'Invalid token signature')
  const unknown = sign({ sub: 'alice' }, { key: next.privatePem, algorithm: 'RS256', kid: 'never-published' })
  assertUnauthorized(t, await call(app, { token: unknown }), 'Invalid token signature')
  const fetches = jwks.hits.length
  for (let i = 0; i < 5; i++) {
    assertUnauthorized(t, await call(app, { token: sign({ sub: 'x' }, { key: next.privatePem, algorithm: 'RS256', kid: `made-up-${i}` }) }), 'Invalid token signature')
  }
  t.equal(jwks.hits.length, fetches, 'made-up kids do not make the service fetch the set again and again')
  assertMapped(t, await call(app, { token: byNew }))
})

t.test('concurrent first requests share one fetch', async (t) => {
  const jwks = await jwksServer(t)
  jwks.keys = [jwk(ec, 'k')]
  const app = await service(t, { auth: { jwksUri: `${jwks.origin}/.well-known/jwks.json` } })
  const token = sign({ sub: 'alice' }, { key: ec.privatePem, algorithm: 'ES256', kid: 'k' })
  const responses = await Promise.all(Array.from({ length: 8 }, () => call(app, { token })))
  for (const response of responses) assertMapped(t, response)
  t.equal(jwks.hits.length, 1)
})

t.test('a token signed by another key under a known kid is a bad signature', async (t) => {
  const jwks = await jwksServer(t)
  jwks.keys = [jwk(rsa, 'k1'), jwk(ec, 'e1')]
  const app = await service(t, { auth: { jwksUri: `${jwks.origin}/.well-known/jwks.json` } })
  assertUnauthorized(t, await call(app, { token: sign({ sub: 'mallory' }, { key: otherRsa.privatePem, algorithm: 'RS256', kid: 'k1' }) }), 'Invalid token signature')
  // The RSA key under k1 cannot verify an ES256 token, whoever signed it.
  assertUnauthorized(t, await call(app, { token: sign({ sub: 'mallory' }, { key: ec.privatePem, algorithm: 'ES256', kid: 'k1' }) }), 'Invalid token signature')
})

t.test('attacks never reach the key set: alg none, HMAC with the public key, unlisted algorithms', async (t) => {
  const jwks = await jwksServer(t)
  jwks.keys = [jwk(rsa, 'k1')]
  const app = await service(t, { auth: { jwksUri: `${jwks.origin}/.well-known/jwks.json`, algorithm: ['RS256'] } })
  assertUnauthorized(t, await call(app, { token: unsignedToken({ sub: 'admin' }) }), 'Unsupported algorithm')
  assertUnauthorized(t, await call(app, { token: unsignedToken({ sub: 'admin' }, 'AAAA') }), 'Unsupported algorithm')
  const n = String(jwk(rsa, 'k1').n)
  for (const key of [rsa.publicPem, n, JSON.stringify(jwk(rsa, 'k1'))]) {
    assertUnauthorized(t, await call(app, { token: hmacToken({ alg: 'HS256', kid: 'k1' }, { sub: 'admin' }, key) }), 'Unsupported algorithm')
  }
  assertUnauthorized(t, await call(app, { token: sign({ sub: 'admin' }, { key: ec.privatePem, algorithm: 'ES256', kid: 'k1' }) }), 'Unsupported algorithm')
  assertUnauthorized(t, await call(app), 'Missing bearer token')
  assertUnauthorized(t, await call(app, { token: 'not.a.jwt' }), 'Malformed token')
  t.same(jwks.hits, [], 'nothing was fetched')
})

t.test('keys that cannot sign are ignored: use enc, an alg the key does not have, a kid-less key among several', async (t) => {
  const jwks = await jwksServer(t)
  const other = otherRsa
  jwks.keys = [{ ...jwk(rsa, 'enc-key'), use: 'enc' }, jwk(ec, 'es384-labelled', 'ES384'), { ...jwk(other, 'x'), kid: undefined }, jwk(rsa, 'sig-key')]
  const app = await service(t, { auth: { jwksUri: `${jwks.origin}/.well-known/jwks.json` } })
  assertUnauthorized(t, await call(app, { token: sign({}, { key: rsa.privatePem, algorithm: 'RS256', kid: 'enc-key' }) }), 'Invalid token signature')
  assertUnauthorized(t, await call(app, { token: sign({}, { key: ec.privatePem, algorithm: 'ES256', kid: 'es384-labelled' }) }), 'Invalid token signature')
  assertMapped(t, await call(app, { token: sign({}, { key: rsa.privatePem, algorithm: 'RS256', kid: 'sig-key' }) }))
  // Without a kid the key must be the only candidate; here two RSA keys are.
  assertUnauthorized(t, await call(app, { token: sign({}, { key: other.privatePem, algorithm: 'RS256' }) }), 'Invalid token signature')
})

t.test('a token without kid against a set of one key', async (t) => {
  const jwks = await jwksServer(t)
  jwks.keys = [jwk(ec, 'only')]
  const app = await service(t, { auth: { jwksUri: `${jwks.origin}/.well-known/jwks.json` } })
  assertMapped(t, await call(app, { token: sign({ sub: 'alice' }, { key: ec.privatePem, algorithm: 'ES256' }) }))
})

t.test('a key-set server that is down or lacks the set: 500, never a 200', async (t) => {
  const jwks = await jwksServer(t)
  const wrongPath = await service(t, { auth: { jwksUri: `${jwks.origin}/missing.json` } })
  const token = sign({ sub: 'alice' }, { key: rsa.privatePem, algorithm: 'RS256', kid: 'k1' })
  const failed = await call(wrongPath, { token })
  t.equal(failed.statusCode, 500)
  t.same(failed.json(), { code: 'InternalError', message: 'An unexpected error occurred', requestId: failed.headers['x-request-id'] })

  // Nothing listens on port 1 of 127.0.0.1: the connection is refused.
  const refused = await service(t, { auth: { jwksUri: 'http://127.0.0.1:1/.well-known/jwks.json' } })
  t.equal((await call(refused, { token })).statusCode, 500)
})
