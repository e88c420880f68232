// Bearer tokens (http.md §3, §5): the three key strategies' static forms (a shared secret, an SPKI
// public key), every refusal with its 401 message and `WWW-Authenticate: Bearer`, the attacks
// (unsigned tokens, algorithm confusion, forged signatures), time claims and clock skew, issuer and
// audience, the algorithm allowlist, and which paths authenticate before routing.
import t from 'tap'
import {
  SECRET,
  assertMapped,
  assertUnauthorized,
  call,
  ecKeys,
  edKeys,
  hmacToken,
  nowSeconds,
  rsaKeys,
  service,
  sharedServices,
  sign,
  unsignedToken,
} from './auth-support.js'

const rsa = rsaKeys()
const ec = ecKeys()

// Tests that need the same auth options share one service (a build costs a few hundred
// milliseconds): verifying a token with a secret or a public key keeps no state between requests.
const shared = sharedServices(t)

t.test('HS256 with a shared secret: a valid token reaches every authenticated endpoint', async (t) => {
  const app = await shared({ auth: { secret: SECRET } })
  const token = sign({ sub: 'alice' }, { key: SECRET })
  assertMapped(t, await call(app, { token }))
  t.equal((await call(app, { method: 'GET', url: '/mappings', token })).statusCode, 200)
  t.equal((await call(app, { method: 'GET', url: '/extensions', token })).statusCode, 200)
  const validated = await call(app, { url: '/validate', token, body: { mapping: 'echo' } })
  t.equal(validated.statusCode, 200)
  t.equal(validated.json().valid, true)
})

t.test('the scheme is case-insensitive; the token is what follows it', async (t) => {
  const app = await shared({ auth: { secret: SECRET } })
  const token = sign({ sub: 'alice' }, { key: SECRET })
  for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
    assertMapped(t, await call(app, { authorization: `${scheme} ${token}` }))
  }
  assertMapped(t, await call(app, { authorization: `Bearer   ${token}` }))
})

t.test('no token: 401 Missing bearer token, whatever else the request carries', async (t) => {
  const app = await shared({ auth: { secret: SECRET } })
  const token = sign({ sub: 'alice' }, { key: SECRET })
  assertUnauthorized(t, await call(app), 'Missing bearer token')
  assertUnauthorized(t, await call(app, { authorization: '' }), 'Missing bearer token')
  assertUnauthorized(t, await call(app, { authorization: 'Bearer' }), 'Missing bearer token')
  assertUnauthorized(t, await call(app, { authorization: 'Bearer ' }), 'Missing bearer token')
  assertUnauthorized(t, await call(app, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }), 'Missing bearer token')
  assertUnauthorized(t, await call(app, { authorization: token }), 'Missing bearer token')
  assertUnauthorized(t, await call(app, { authorization: `Token ${token}` }), 'Missing bearer token')
  assertUnauthorized(t, await call(app, { method: 'GET', url: '/mappings' }), 'Missing bearer token')
  assertUnauthorized(t, await call(app, { method: 'GET', url: '/extensions' }), 'Missing bearer token')
  assertUnauthorized(t, await call(app, { url: '/validate', body: { mapping: 'echo' } }), 'Missing bearer token')
})

t.test('malformed tokens: 401 Malformed token', async (t) => {
  const app = await shared({ auth: { secret: SECRET } })
  const good = sign({ sub: 'alice' }, { key: SECRET })
  const [header, payload, signature] = good.split('.') as [string, string, string]
  const notJson = Buffer.from('not json').toString('base64url')
  for (const token of [
    'not-a-jwt',
    'a.b',
    'a.b.c',
    `${header}.${payload}`,
    `${notJson}.${payload}.${signature}`,
    `${header}.${notJson}.${signature}`,
    `${header}.${Buffer.from('[1,2]').toString('base64url')}.${signature}`,
    `${header}.${payload}.${signature}.extra`,
  ]) {
    assertUnauthorized(t, await call(app, { token }), 'Malformed token')
  }
})

t.test('a bad signature: 401 Invalid token signature', async (t) => {
  const app = await shared({ auth: { secret: SECRET } })
  const forged = sign({ sub: 'alice' }, { key: 'another-secret-of-at-least-32-chars!' })
  assertUnauthorized(t, await call(app, { token: forged }), 'Invalid token signature')
  const [header, , signature] = sign({ sub: 'alice' }, { key: SECRET }).split('.') as [string, string, string]
  const tampered = `${header}.${Buffer.from(JSON.stringify({ sub: 'admin' })).toString('base64url')}.${signature}`
  assertUnauthorized(t, await call(app, { token: tampered }), 'Invalid token signature')
})

t.test('alg none is never accepted: 401 Unsupported algorithm, against every strategy', async (t) => {
  const bySecret = await shared({ auth: { secret: SECRET } })
  const byKey = await shared({ auth: { publicKey: rsa.publicPem } })
  for (const app of [bySecret, byKey]) {
    assertUnauthorized(t, await call(app, { token: unsignedToken({ sub: 'admin' }) }), 'Unsupported algorithm')
    assertUnauthorized(t, await call(app, { token: unsignedToken({ sub: 'admin' }, 'AAAA') }), 'Unsupported algorithm')
    assertUnauthorized(t, await call(app, { token: unsignedToken({ sub: 'admin' }, '', 'None') }), 'Unsupported algorithm')
  }
  // A signed token stripped of its signature is as unsigned as alg none.
  const [header, payload] = sign({ sub: 'alice' }, { key: SECRET }).split('.') as [string, string]
  assertUnauthorized(t, await call(bySecret, { token: `${header}.${payload}.` }), 'Unsupported algorithm')
})

t.test('algorithm confusion: an HMAC token keyed with the public key PEM is refused', async (t) => {
  for (const options of [{ publicKey: rsa.publicPem }, { publicKey: rsa.publicPem, algorithm: 'RS256' }, { publicKey: ec.publicPem }]) {
    const app = await shared({ auth: options })
    const pem = options.publicKey
    for (const key of [pem, pem.trim(), Buffer.from(pem)]) {
      const token = hmacToken({ alg: 'HS256', typ: 'JWT' }, { sub: 'admin' }, key)
      assertUnauthorized(t, await call(app, { token }), 'Unsupported algorithm')
    }
  }
})

t.test('RS256 and ES256 with publicKey; a token by another key or of another family is refused', async (t) => {
  const byRsa = await shared({ auth: { publicKey: rsa.publicPem } })
  const byEc = await shared({ auth: { publicKey: ec.publicPem } })
  assertMapped(t, await call(byRsa, { token: sign({ sub: 'alice' }, { key: rsa.privatePem, algorithm: 'RS256' }) }))
  assertMapped(t, await call(byEc, { token: sign({ sub: 'alice' }, { key: ec.privatePem, algorithm: 'ES256' }) }))

  const otherRsa = rsaKeys()
  assertUnauthorized(t, await call(byRsa, { token: sign({ sub: 'alice' }, { key: otherRsa.privatePem, algorithm: 'RS256' }) }), 'Invalid token signature')
  assertUnauthorized(t, await call(byEc, { token: sign({ sub: 'alice' }, { key: ecKeys().privatePem, algorithm: 'ES256' }) }), 'Invalid token signature')
  // ES256 is on the default list, but not a family this RSA key can verify (and the reverse).
  assertUnauthorized(t, await call(byRsa, { token: sign({ sub: 'alice' }, { key: ec.privatePem, algorithm: 'ES256' }) }), 'Unsupported algorithm')
  assertUnauthorized(t, await call(byEc, { token: sign({ sub: 'alice' }, { key: rsa.privatePem, algorithm: 'RS256' }) }), 'Unsupported algorithm')
})

t.test('EdDSA (Ed25519) with publicKey, on the default list', async (t) => {
  const ed = edKeys()
  const app = await shared({ auth: { publicKey: ed.publicPem } })
  assertMapped(t, await call(app, { token: sign({ sub: 'alice' }, { key: ed.privatePem, algorithm: 'EdDSA' }) }))
  assertUnauthorized(t, await call(app, { token: sign({ sub: 'alice' }, { key: edKeys().privatePem, algorithm: 'EdDSA' }) }), 'Invalid token signature')
})

t.test('the algorithm allowlist', async (t) => {
  const hs384Only = await shared({ auth: { secret: SECRET, algorithm: ['HS384'] } })
  assertUnauthorized(t, await call(hs384Only, { token: sign({ sub: 'alice' }, { key: SECRET, algorithm: 'HS256' }) }), 'Unsupported algorithm')
  assertMapped(t, await call(hs384Only, { token: sign({ sub: 'alice' }, { key: SECRET, algorithm: 'HS384' }) }))

  const listed = await shared({ auth: { secret: SECRET, algorithm: 'HS256, HS512' } })
  assertMapped(t, await call(listed, { token: sign({ sub: 'alice' }, { key: SECRET, algorithm: 'HS256' }) }))
  assertMapped(t, await call(listed, { token: sign({ sub: 'alice' }, { key: SECRET, algorithm: 'HS512' }) }))
  assertUnauthorized(t, await call(listed, { token: sign({ sub: 'alice' }, { key: SECRET, algorithm: 'HS384' }) }), 'Unsupported algorithm')

  const defaults = await shared({ auth: { secret: SECRET } })
  assertUnauthorized(t, await call(defaults, { token: sign({ sub: 'alice' }, { key: SECRET, algorithm: 'HS512' }) }), 'Unsupported algorithm')

  const rs256Only = await shared({ auth: { publicKey: ec.publicPem, algorithm: ['ES256'] } })
  assertMapped(t, await call(rs256Only, { token: sign({ sub: 'alice' }, { key: ec.privatePem, algorithm: 'ES256' }) }))
})

t.test('time claims: expired and not yet valid tokens', async (t) => {
  const app = await shared({ auth: { secret: SECRET } })
  const now = nowSeconds()
  assertUnauthorized(t, await call(app, { token: sign({ sub: 'a', exp: now - 60 }, { key: SECRET }) }), 'Token expired')
  assertUnauthorized(t, await call(app, { token: sign({ sub: 'a', exp: now - 5 }, { key: SECRET }) }), 'Token expired')
  assertUnauthorized(t, await call(app, { token: sign({ sub: 'a', nbf: now + 600 }, { key: SECRET }) }), 'Token not yet valid')
  assertMapped(t, await call(app, { token: sign({ sub: 'a', exp: now + 600, nbf: now - 60 }, { key: SECRET }) }))
  // exp is required by default (auth.requireExp): a token without it would never expire.
  assertUnauthorized(t, await call(app, { token: sign({ sub: 'a' }, { key: SECRET, noTimestamp: true, noExpiry: true }) }), 'Token has no expiry')
})

// Token lifetime (http.md §5, README "Token lifetime"): auth.requireExp (default true) and
// auth.maxAge, counted from iat. Each row: the auth options, the token's time claims (seconds from
// now; null leaves the claim out), and the answer.
const LIFETIMES: Array<[name: string, auth: Record<string, unknown>, claims: { exp?: number | null; iat?: number | null }, expected: string | null]> = [
  ['default: a token without exp', {}, { exp: null }, 'Token has no expiry'],
  ['default: without exp or iat', {}, { exp: null, iat: null }, 'Token has no expiry'],
  ['default: with exp', {}, { exp: 600 }, null],
  ['default: an old iat is no matter without maxAge', {}, { exp: 600, iat: -30 * 86400 }, null],
  ['requireExp false: a token without exp', { requireExp: false }, { exp: null }, null],
  ['requireExp false: an expired exp is still enforced', { requireExp: false }, { exp: -60 }, 'Token expired'],
  ['maxAge 1h: issued 30 minutes ago', { maxAge: '1h' }, { exp: 3600, iat: -1800 }, null],
  ['maxAge 1h: issued two hours ago, exp still ahead', { maxAge: '1h' }, { exp: 3600, iat: -7200 }, 'Token expired'],
  ['maxAge 1h: no iat', { maxAge: '1h' }, { exp: 3600, iat: null }, 'Token has no issue time'],
  ['maxAge 1h: iat ten minutes ahead', { maxAge: '1h' }, { exp: 3600, iat: 600 }, 'Token not yet valid'],
  ['maxAge 1h, clockSkew 30: iat ten seconds ahead', { maxAge: '1h', clockSkew: 30 }, { exp: 3600, iat: 10 }, null],
  ['maxAge 60 (seconds), requireExp false: no exp, issued now', { maxAge: 60, requireExp: false }, { exp: null, iat: 0 }, null],
  ['maxAge 60 (seconds), requireExp false: no exp, issued two minutes ago', { maxAge: 60, requireExp: false }, { exp: null, iat: -120 }, 'Token expired'],
]

t.test('token lifetime: requireExp and maxAge', async (t) => {
  for (const [name, auth, claims, expected] of LIFETIMES) {
    const app = await shared({ auth: { secret: SECRET, ...auth } })
    const now = nowSeconds()
    const payload: Record<string, unknown> = { sub: 'a' }
    if (claims.exp !== null && claims.exp !== undefined) payload.exp = now + claims.exp
    if (claims.iat !== null && claims.iat !== undefined) payload.iat = now + claims.iat
    // fast-jwt signs the payload's iat, or now when it has none; noTimestamp leaves iat out.
    const token = sign(payload, { key: SECRET, noTimestamp: claims.iat === null, noExpiry: true })
    const response = await call(app, { token })
    if (expected === null) {
      t.equal(response.statusCode, 200, `${name}: accepted`)
    } else {
      t.equal(response.json().message, expected, `${name}: ${expected}`)
      assertUnauthorized(t, response, expected)
    }
  }
})

t.test('clockSkew is in seconds and tolerates a slightly expired (or early) token, no more', async (t) => {
  const app = await shared({ auth: { secret: SECRET, clockSkew: 30 } })
  const now = nowSeconds()
  assertMapped(t, await call(app, { token: sign({ sub: 'a', exp: now - 5 }, { key: SECRET }) }))
  assertMapped(t, await call(app, { token: sign({ sub: 'a', nbf: now + 5 }, { key: SECRET }) }))
  assertUnauthorized(t, await call(app, { token: sign({ sub: 'a', exp: now - 300 }, { key: SECRET }) }), 'Token expired')
  assertUnauthorized(t, await call(app, { token: sign({ sub: 'a', nbf: now + 300 }, { key: SECRET }) }), 'Token not yet valid')
})

t.test('issuer: one or a list; a wrong or missing iss is 401 Invalid issuer', async (t) => {
  const one = await shared({ auth: { secret: SECRET, issuer: 'https://idp.example' } })
  assertMapped(t, await call(one, { token: sign({ iss: 'https://idp.example' }, { key: SECRET }) }))
  assertUnauthorized(t, await call(one, { token: sign({ iss: 'https://evil.example' }, { key: SECRET }) }), 'Invalid issuer')
  assertUnauthorized(t, await call(one, { token: sign({ iss: 'https://idp.example/' }, { key: SECRET }) }), 'Invalid issuer')
  assertUnauthorized(t, await call(one, { token: sign({ sub: 'no-issuer' }, { key: SECRET }) }), 'Invalid issuer')
  assertUnauthorized(t, await call(one, { token: sign({ iss: ['https://idp.example'] }, { key: SECRET }) }), 'Invalid issuer')

  const list = await shared({ auth: { secret: SECRET, issuer: ['https://a.example', 'https://b.example'] } })
  assertMapped(t, await call(list, { token: sign({ iss: 'https://b.example' }, { key: SECRET }) }))
  assertUnauthorized(t, await call(list, { token: sign({ iss: 'https://c.example' }, { key: SECRET }) }), 'Invalid issuer')
})

t.test('audience: one or a list, matched against a string or array aud; wrong or missing is 401 Invalid audience', async (t) => {
  const one = await shared({ auth: { secret: SECRET, audience: 'mapper' } })
  assertMapped(t, await call(one, { token: sign({ aud: 'mapper' }, { key: SECRET }) }))
  assertMapped(t, await call(one, { token: sign({ aud: ['other', 'mapper'] }, { key: SECRET }) }))
  assertUnauthorized(t, await call(one, { token: sign({ aud: 'other' }, { key: SECRET }) }), 'Invalid audience')
  assertUnauthorized(t, await call(one, { token: sign({ aud: ['x', 'y'] }, { key: SECRET }) }), 'Invalid audience')
  assertUnauthorized(t, await call(one, { token: sign({ sub: 'no-audience' }, { key: SECRET }) }), 'Invalid audience')

  const both = await shared({ auth: { secret: SECRET, issuer: 'idp', audience: ['mapper', 'api'] } })
  assertMapped(t, await call(both, { token: sign({ iss: 'idp', aud: 'api' }, { key: SECRET }) }))
  assertUnauthorized(t, await call(both, { token: sign({ iss: 'idp', aud: 'web' }, { key: SECRET }) }), 'Invalid audience')
})

t.test('public paths need no token: /health, /health/mapping, /openapi.json, OPTIONS', async (t) => {
  const app = await shared({ auth: { secret: SECRET } })
  t.same((await call(app, { method: 'GET', url: '/health' })).json(), { status: 'ok' })
  t.equal((await call(app, { method: 'HEAD', url: '/health' })).statusCode, 200)
  const canary = await call(app, { method: 'GET', url: '/health/mapping' })
  t.equal(canary.statusCode, 200)
  t.equal(canary.json().mapping, 'echo')
  const openapi = await call(app, { method: 'GET', url: '/openapi.json' })
  t.equal(openapi.statusCode, 200)
  t.same(openapi.json().components.securitySchemes.bearer, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
  for (const url of ['/map', '/validate', '/mappings', '/extensions', '/health']) {
    const preflight = await call(app, { method: 'OPTIONS', url })
    t.equal(preflight.statusCode, 204, `OPTIONS ${url}`)
    t.ok(preflight.headers.allow, `OPTIONS ${url} has Allow`)
  }
  // A bad token on a public path is ignored, not refused.
  t.equal((await call(app, { method: 'GET', url: '/health', token: 'garbage' })).statusCode, 200)
})

t.test('with auth on, the route map is hidden from anonymous callers', async (t) => {
  const app = await shared({ auth: { secret: SECRET } })
  const token = sign({ sub: 'alice' }, { key: SECRET })
  assertUnauthorized(t, await call(app, { method: 'GET', url: '/nope' }), 'Missing bearer token')
  assertUnauthorized(t, await call(app, { method: 'POST', url: '/admin/users' }), 'Missing bearer token')
  assertUnauthorized(t, await call(app, { method: 'GET', url: '/nope', token: 'garbage' }), 'Malformed token')
  assertUnauthorized(t, await call(app, { method: 'GET', url: '/map' }), 'Missing bearer token')
  assertUnauthorized(t, await call(app, { method: 'DELETE', url: '/mappings/echo' }), 'Missing bearer token')

  const unknown = await call(app, { method: 'GET', url: '/nope?x=1', token })
  t.equal(unknown.statusCode, 404)
  t.same(unknown.json(), { code: 'NotFound', message: 'No route for GET /nope', requestId: unknown.headers['x-request-id'] })
  t.notOk(unknown.headers['www-authenticate'])
  // OPTIONS is never authenticated, so an unknown path answers 404 to it (http.md §12).
  t.equal((await call(app, { method: 'OPTIONS', url: '/nope' })).statusCode, 404)
  const wrongMethod = await call(app, { method: 'GET', url: '/map', token })
  t.equal(wrongMethod.statusCode, 405)
  t.equal(wrongMethod.headers.allow, 'POST, OPTIONS')
})

t.test('with auth off, nothing authenticates and identity is null', async (t) => {
  const app = await shared({})
  const mapped = await call(app, { body: { mapping: 'whoami' } })
  t.same(mapped.json(), { identity: null, valid: true, errors: [] })
  t.equal((await call(app, { method: 'GET', url: '/nope' })).statusCode, 404)
  // A token is ignored, not verified.
  t.equal((await call(app, { token: 'garbage' })).statusCode, 200)
})

t.test('a real listening server: 401 with WWW-Authenticate on the wire, then 200 and 404 with a token', async (t) => {
  // Its own service: this one listens.
  const app = await service(t, { auth: { publicKey: ec.publicPem, issuer: 'idp', audience: 'mapper' } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const origin = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
  const token = sign({ sub: 'alice', iss: 'idp', aud: 'mapper', exp: nowSeconds() + 600 }, { key: ec.privatePem, algorithm: 'ES256' })
  const post = (headers: Record<string, string>): Promise<Response> =>
    fetch(`${origin}/map`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ mapping: 'whoami' }),
      signal: AbortSignal.timeout(10000),
    })

  const anonymous = await post({})
  t.equal(anonymous.status, 401)
  t.equal(anonymous.headers.get('www-authenticate'), 'Bearer')
  t.match(anonymous.headers.get('content-type'), /^application\/json/)
  const body = (await anonymous.json()) as Record<string, unknown>
  t.same(body, { code: 'Unauthorized', message: 'Missing bearer token', requestId: anonymous.headers.get('x-request-id') })

  const lower = await post({ authorization: `bearer ${token}` })
  t.equal(lower.status, 200)
  t.same(((await lower.json()) as { identity: Record<string, unknown> }).identity, JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()))

  const expired = await post({ authorization: `Bearer ${sign({ iss: 'idp', aud: 'mapper', exp: nowSeconds() - 60 }, { key: ec.privatePem, algorithm: 'ES256' })}` })
  t.equal(expired.status, 401)
  t.equal(expired.headers.get('www-authenticate'), 'Bearer')
  t.equal(((await expired.json()) as { message: string }).message, 'Token expired')

  const unknown = await fetch(`${origin}/nope`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10000) })
  t.equal(unknown.status, 404)
  await unknown.arrayBuffer()
  const health = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(10000) })
  t.equal(health.status, 200)
  await health.arrayBuffer()
})
