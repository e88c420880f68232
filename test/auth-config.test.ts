// Auth configuration (http.md §5, §8): every mistake fails startup with a ConfigError naming the
// setting — from resolveConfig (the shape, and claims without auth) or the auth plugin's own
// resolveAuthOptions (everything else about options.auth), and from buildServer alike, where the
// plugin checks options.auth as it is registered — never a server that refuses everyone or accepts
// anyone; and what a correct configuration resolves to.
import { generateKeyPairSync } from 'node:crypto'
import Fastify from 'fastify'
import t from 'tap'
import { ConfigError, resolveConfig } from '../config/resolve.js'
import { authPlugin } from '../http/plugins/auth/index.js'
import { MIN_SECRET_LENGTH, resolveAuthOptions, type AuthConfig } from '../http/plugins/auth/options.js'
import { buildServer } from '../server.js'
import { SECRET, assertMapped, call, ecKeys, edKeys, quietLogger, rsaKeys, service, sign } from './auth-support.js'

const rsa = rsaKeys()
const ec = ecKeys()
const pemOf = (type: 'ec', curve: string): string =>
  generateKeyPairSync(type, { namedCurve: curve }).publicKey.export({ type: 'spki', format: 'pem' }).toString()

const FAILURES: Array<[name: string, options: Record<string, unknown>, message: RegExp]> = [
  ['no key strategy', { auth: {} }, /^options\.auth must name exactly one key strategy: secret, publicKey or jwksUri$/],
  ['settings but no key strategy', { auth: { issuer: 'idp', audience: 'mapper' } }, /^options\.auth must name exactly one key strategy/],
  ['secret and publicKey', { auth: { secret: SECRET, publicKey: rsa.publicPem } }, /^options\.auth must name exactly one key strategy, not secret and publicKey$/],
  ['secret and jwksUri', { auth: { secret: SECRET, jwksUri: 'https://idp.example/jwks.json' } }, /not secret and jwksUri$/],
  ['all three', { auth: { secret: SECRET, publicKey: rsa.publicPem, jwksUri: 'https://idp.example/jwks.json' } }, /not secret and publicKey and jwksUri$/],
  ['a secret one character short', { auth: { secret: 'x'.repeat(MIN_SECRET_LENGTH - 1) } }, /^options\.auth\.secret must be at least 32 characters$/],
  ['a short secret', { auth: { secret: 'changeme' } }, /^options\.auth\.secret/],
  ['an HMAC algorithm with publicKey', { auth: { publicKey: rsa.publicPem, algorithm: 'HS256' } }, /^options\.auth\.algorithm: HS256 with options\.auth\.publicKey/],
  ['an HMAC algorithm among others with publicKey', { auth: { publicKey: rsa.publicPem, algorithm: ['RS256', 'HS512'] } }, /^options\.auth\.algorithm: HS512 with options\.auth\.publicKey/],
  ['an HMAC algorithm with jwksUri', { auth: { jwksUri: 'https://idp.example/jwks.json', algorithm: 'RS256, HS256' } }, /^options\.auth\.algorithm: HS256 with options\.auth\.jwksUri/],
  ['RS256 with a secret', { auth: { secret: SECRET, algorithm: 'RS256' } }, /^options\.auth\.algorithm: RS256 cannot be verified with a shared secret/],
  ['ES256 among HMAC with a secret', { auth: { secret: SECRET, algorithm: ['HS256', 'ES256'] } }, /^options\.auth\.algorithm: ES256 cannot be verified with a shared secret/],
  ['the none algorithm', { auth: { secret: SECRET, algorithm: 'none' } }, /^options\.auth\.algorithm: "none" \(unsigned tokens\) is never accepted$/],
  ['the none algorithm in a list', { auth: { publicKey: rsa.publicPem, algorithm: ['RS256', 'none'] } }, /^options\.auth\.algorithm: "none"/],
  ['the None algorithm, any case', { auth: { jwksUri: 'https://idp.example/jwks.json', algorithm: 'RS256,None' } }, /^options\.auth\.algorithm: "none"/],
  ['an unknown algorithm', { auth: { secret: SECRET, algorithm: 'HS1024' } }, /^options\.auth\.algorithm: unsupported algorithm HS1024/],
  ['an algorithm list of only commas', { auth: { secret: SECRET, algorithm: ' , ' } }, /^options\.auth\.algorithm must name at least one algorithm$/],
  ['an empty algorithm array', { auth: { secret: SECRET, algorithm: [] } }, /^options\.auth\.algorithm/],
  ['a publicKey that is not PEM', { auth: { publicKey: 'not a key' } }, /^options\.auth\.publicKey must be a public key in SPKI PEM form$/],
  ['a truncated PEM', { auth: { publicKey: rsa.publicPem.slice(0, 120) } }, /^options\.auth\.publicKey must be a public key in SPKI PEM form$/],
  ['a certificate-shaped PEM of garbage', { auth: { publicKey: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n' } }, /^options\.auth\.publicKey must be/],
  ['a private key as publicKey', { auth: { publicKey: rsa.privatePem } }, /^options\.auth\.publicKey holds a private key/],
  ['an unsupported curve', { auth: { publicKey: pemOf('ec', 'secp256k1') } }, /^options\.auth\.publicKey: the EC secp256k1 key is not supported/],
  ['a P-384 key with the default algorithms', { auth: { publicKey: pemOf('ec', 'P-384') } }, /^options\.auth\.algorithm: RS256, ES256, EdDSA cannot be verified with the EC secp384r1 key in options\.auth\.publicKey \(it verifies ES384\)$/],
  ['an RSA key with ES256 only', { auth: { publicKey: rsa.publicPem, algorithm: 'ES256' } }, /^options\.auth\.algorithm: ES256 cannot be verified with the RSA key in options\.auth\.publicKey \(it verifies RS256, RS384, RS512, PS256, PS384, PS512\)$/],
  ['a jwksUri that is not a URL', { auth: { jwksUri: 'idp.example/jwks.json' } }, /^options\.auth\.jwksUri must be an http\(s\) URL$/],
  ['a file: jwksUri', { auth: { jwksUri: 'file:///etc/jwks.json' } }, /^options\.auth\.jwksUri must be an http\(s\) URL$/],
  ['an ftp: jwksUri', { auth: { jwksUri: 'ftp://idp.example/jwks.json' } }, /^options\.auth\.jwksUri must be an http\(s\) URL$/],
  ['a jwksUri with credentials', { auth: { jwksUri: 'https://user:pass@idp.example/jwks.json' } }, /^options\.auth\.jwksUri must not carry credentials$/],
  ['an empty jwksUri', { auth: { jwksUri: '' } }, /^options\.auth\.jwksUri/],
  ['an unknown auth key', { auth: { secret: SECRET, algorithms: ['HS256'] } }, /^options\.auth/],
  ['clockSkew as a string', { auth: { secret: SECRET, clockSkew: '30' } }, /^options\.auth\.clockSkew/],
  ['a negative clockSkew', { auth: { secret: SECRET, clockSkew: -1 } }, /^options\.auth\.clockSkew/],
  ['requireExp as a string', { auth: { secret: SECRET, requireExp: 'false' } }, /^options\.auth\.requireExp/],
  ['a maxAge of zero', { auth: { secret: SECRET, maxAge: 0 } }, /^options\.auth\.maxAge must be a whole number of seconds or a duration such as "90s", "15m", "1h" or "7d", from 1 second to 365 days \(got 0\)$/],
  ['a negative maxAge', { auth: { secret: SECRET, maxAge: -60 } }, /^options\.auth\.maxAge must be/],
  ['a fractional maxAge', { auth: { secret: SECRET, maxAge: 1.5 } }, /^options\.auth\.maxAge must be/],
  ['a maxAge over a year', { auth: { secret: SECRET, maxAge: '366d' } }, /^options\.auth\.maxAge must be .* \(got "366d"\)$/],
  ['a maxAge in an unknown unit', { auth: { secret: SECRET, maxAge: '1w' } }, /^options\.auth\.maxAge must be/],
  ['a maxAge with a fraction', { auth: { secret: SECRET, maxAge: '1.5h' } }, /^options\.auth\.maxAge must be/],
  ['an empty maxAge', { auth: { secret: SECRET, maxAge: '' } }, /^options\.auth\.maxAge must be/],
  ['a maxAge of another type', { auth: { secret: SECRET, maxAge: true } }, /^options\.auth\.maxAge/],
  ['an empty issuer list', { auth: { secret: SECRET, issuer: [] } }, /^options\.auth\.issuer/],
  ['an audience of another type', { auth: { secret: SECRET, audience: 42 } }, /^options\.auth\.audience/],
  ['map.claims without auth', { map: { claims: { role: 'admin' } } }, /^options\.map\.claims needs options\.auth/],
  ['map.explicit.claims without auth', { map: { explicit: { claims: { sub: 'ci' } } } }, /^options\.map\.explicit\.claims needs options\.auth/],
  ['validate.claims without auth', { validate: { claims: { scope: 'validate' } } }, /^options\.validate\.claims needs options\.auth/],
  ['an empty claims object without auth', { validate: { claims: {} } }, /^options\.validate\.claims needs options\.auth/],
  ['a claim value of another type', { auth: { secret: SECRET }, map: { claims: { role: { any: 'admin' } } } }, /^options\.map\.claims/],
  ['an empty claim value list', { auth: { secret: SECRET }, map: { claims: { role: [] } } }, /^options\.map\.claims/],
]

/**
 * What start-up makes of the options' auth (app.ts): resolveConfig checks the options, then the auth
 * plugin resolves options.auth as resolveConfig handed it on. Null: auth off.
 */
function authOf(options: unknown): AuthConfig | null {
  const given = resolveConfig(options).auth
  return given === null ? null : resolveAuthOptions(given)
}

t.test('resolveConfig, then the plugin\'s resolveAuthOptions, refuse each mistake with a ConfigError naming the setting', async (t) => {
  for (const [name, options, message] of FAILURES) {
    t.throws(() => authOf(options), message, name)
    try {
      authOf(options)
    } catch (error) {
      t.ok(error instanceof ConfigError, `${name}: a ConfigError`)
    }
  }
})

t.test('buildServer fails the start the same way, before anything listens', async (t) => {
  for (const [name, options, message] of FAILURES) {
    const error = await buildServer({ options, logger: quietLogger() }).then(
      async (app) => {
        await app.close()
        return undefined
      },
      (error: unknown) => error
    )
    t.ok(error instanceof ConfigError, `${name}: a ConfigError`)
    t.match((error as Error | undefined)?.message, message, name)
  }
})

t.test('the plugin checks options.auth as it is registered: a mistake fails registration with the ConfigError', async (t) => {
  const short = { secret: 'x'.repeat(MIN_SECRET_LENGTH - 1) }
  const message = 'options.auth.secret must be at least 32 characters'
  t.strictSame(resolveConfig({ auth: short }).auth, short, 'resolveConfig checks the shape only, and hands options.auth on as given')
  await t.rejects(buildServer({ options: { auth: short }, logger: quietLogger() }), { name: 'ConfigError', message }, 'buildServer: the service\'s registration fails')
  const bare = Fastify({ loggerInstance: quietLogger() })
  t.teardown(() => bare.close())
  const error = await bare.register(authPlugin, { auth: short }).ready().then(() => undefined, (error: unknown) => error)
  t.ok(error instanceof ConfigError, 'the plugin alone, on a bare instance: a ConfigError')
  t.equal((error as Error | undefined)?.message, message, 'the same one line')
})

t.test('what a correct configuration resolves to', async (t) => {
  t.equal(authOf({}), null, 'no auth option: auth off')
  t.same(authOf({ auth: { secret: SECRET } }), {
    strategy: 'secret',
    key: SECRET,
    algorithms: ['HS256'],
    issuer: undefined,
    audience: undefined,
    clockSkew: 0,
    requireExp: true,
    maxAge: undefined,
  })
  t.same(authOf({ auth: { secret: 'y'.repeat(MIN_SECRET_LENGTH), algorithm: ' HS512 ,HS384,HS512' } })?.algorithms, ['HS512', 'HS384'], 'comma list, trimmed, once each')
  t.same(authOf({ auth: { publicKey: rsa.publicPem } })?.algorithms, ['RS256'], 'an RSA key: the RSA family of the defaults')
  t.same(authOf({ auth: { publicKey: ec.publicPem } })?.algorithms, ['ES256'])
  t.same(authOf({ auth: { publicKey: edKeys().publicPem } })?.algorithms, ['EdDSA'])
  t.same(authOf({ auth: { publicKey: rsa.publicPem, algorithm: 'RS256, PS256, ES256' } })?.algorithms, ['RS256', 'PS256'])
  const jwks = authOf({ auth: { jwksUri: 'https://idp.example/keys', issuer: ['a', 'b'], audience: 'mapper', clockSkew: 30 } })
  t.same(jwks, {
    strategy: 'jwksUri',
    key: 'https://idp.example/keys',
    algorithms: ['RS256', 'ES256', 'EdDSA'],
    issuer: ['a', 'b'],
    audience: 'mapper',
    clockSkew: 30,
    requireExp: true,
    maxAge: undefined,
  })
  t.equal(authOf({ auth: { secret: SECRET, requireExp: false } })?.requireExp, false)
  const maxAges: Array<[given: number | string, seconds: number]> = [
    [90, 90],
    ['90', 90],
    ['90s', 90],
    ['15m', 900],
    ['1h', 3600],
    [' 1 h ', 3600],
    ['7d', 604800],
    ['365d', 31536000],
    [31536000, 31536000],
  ]
  for (const [given, seconds] of maxAges) {
    t.equal(authOf({ auth: { secret: SECRET, maxAge: given } })?.maxAge, seconds, `maxAge ${JSON.stringify(given)} is ${seconds} s`)
  }
  const gated = resolveConfig({ auth: { secret: SECRET }, map: { claims: { role: 'a' }, explicit: { claims: { sub: 'b' } } }, validate: { claims: {} } })
  t.same(gated.map, {
    invalidStatus: undefined,
    claims: { role: 'a' },
    explicit: { claims: { sub: 'b' }, stdout: false, cacheBytes: 1048576 },
    explain: { claims: { sub: 'b' } },
  })
  t.same(gated.validate, { claims: {}, strict: false })
})

t.test('a secret of exactly 32 characters starts and verifies', async (t) => {
  const secret = 'z'.repeat(MIN_SECRET_LENGTH)
  const app = await service(t, { auth: { secret } })
  assertMapped(t, await call(app, { token: sign({ sub: 'a' }, { key: secret }) }))
})

t.test('a P-384 key with ES384 configured starts and verifies', async (t) => {
  const p384 = ecKeys('P-384')
  const app = await service(t, { auth: { publicKey: p384.publicPem, algorithm: 'ES384' } })
  assertMapped(t, await call(app, { token: sign({ sub: 'a' }, { key: p384.privatePem, algorithm: 'ES384' }) }))
})

t.test('a PKCS#1 RSA public key is accepted as well', async (t) => {
  const pkcs1 = rsa.publicKey.export({ type: 'pkcs1', format: 'pem' }).toString()
  const app = await service(t, { auth: { publicKey: pkcs1 } })
  assertMapped(t, await call(app, { token: sign({ sub: 'a' }, { key: rsa.privatePem, algorithm: 'RS256' }) }))
})
