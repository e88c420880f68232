// The error table of http.md §3, row by row: status, code, exact message, the code's extra field,
// key order (code, message, extra, requestId), the requestId echoing X-Request-Id, Allow on 405,
// WWW-Authenticate on 401, and 5xx detail hidden under `errorDetail: minimal`, shown under `full`.
import t from 'tap'
import type { FastifyInstance, InjectOptions } from 'fastify'
import type { BuildConfig } from '../server.js'
import { createRequest } from '../extensions/request/index.js'
import { stockExtensions } from '../extensions/stock.js'
import { shapeError } from '../service/errors.js'

/** The stock surface with the upstreams of these tests (on 127.0.0.1) allowed. */
const LOOPBACK_ALLOWED = stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' })
import { ECHO, GENERATED_ID, JSON_TYPE, SECRET, STRICT, bearer, call, refusingOrigin, serve, shared, token, upstream } from './http-support.js'

interface Expected {
  readonly status: number
  readonly code: string
  readonly message: string
  /** The keys between message and requestId. */
  readonly extra?: readonly string[]
  readonly headers?: Readonly<Record<string, string>>
}

interface Row extends Expected {
  readonly row: string
  readonly build?: BuildConfig
  readonly request: InjectOptions
}

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/**
 * One server per build object, shared by every row and test that names the same object (a build
 * costs a few hundred milliseconds); no request here leaves anything behind for the next. Closed
 * when the file ends.
 */
const servers = new Map<BuildConfig | undefined, () => Promise<FastifyInstance>>()
function serverFor(build: BuildConfig | undefined): Promise<FastifyInstance> {
  let server = servers.get(build)
  if (server === undefined) servers.set(build, (server = shared(t, build)))
  return server()
}

async function expectError(t: Tap, build: BuildConfig | undefined, request: InjectOptions, expected: Expected): Promise<void> {
  const app = await serverFor(build)
  const response = await call(app, request)
  t.equal(response.statusCode, expected.status, 'status')
  t.equal(response.headers['content-type'], JSON_TYPE)
  t.same(Object.keys(response.data), ['code', 'message', ...(expected.extra ?? []), 'requestId'], 'key order')
  t.equal(response.data.code, expected.code, 'code')
  t.equal(response.data.message, expected.message, 'message')
  t.match(response.data.requestId, GENERATED_ID)
  t.equal(response.data.requestId, response.headers['x-request-id'], 'requestId is the X-Request-Id')
  for (const [name, value] of Object.entries(expected.headers ?? {})) t.equal(response.headers[name], value, name)
  if (expected.status !== 401) t.notOk(response.headers['www-authenticate'], 'WWW-Authenticate only on 401')
}

const BAD_MAPPING = '"mapping" must be a string naming a registered mapping, or a mapping document object'
const HIDDEN = 'An unexpected error occurred'
const ISSUER = 'https://issuer.test'
const AUDIENCE = 'mapper'
const AUTH = { secret: SECRET, issuer: ISSUER, audience: AUDIENCE }
/** The builds several rows and tests share (one server each). */
const AUTHENTICATED: BuildConfig = { options: { auth: AUTH } }
const EXPLICIT: BuildConfig = { options: { map: { explicit: true } } }
const PROMOTING: BuildConfig = { mappings: [STRICT], options: { map: { invalidStatus: 422 } } }
const signed = { iss: ISSUER, aud: AUDIENCE }
const now = Math.floor(Date.now() / 1000)
const withToken = (value: string): Record<string, string> => ({ authorization: `Bearer ${value}` })
const mapEcho: InjectOptions = { method: 'POST', url: '/map', payload: { mapping: 'echo', input: { a: 1 } } }

const explode = {
  mappings: [ECHO, { $id: 'boom', mapping: { '/x': { source: '/a', transform: 'explode' } } }],
  extensions: {
    transformers: {
      explode: () => {
        throw new Error('kaboom: the transformer failed')
      },
    },
  },
}

const ROWS: Row[] = [
  {
    row: '400 BadRequest: malformed JSON',
    request: { method: 'POST', url: '/map', payload: '{ not json' },
    status: 400,
    code: 'BadRequest',
    message: 'Body must be valid JSON (line 1, column 3): unexpected "n"',
  },
  {
    row: '400 BadRequest: schema failure (mapping of another type)',
    request: { method: 'POST', url: '/map', payload: { mapping: 42 } },
    status: 400,
    code: 'BadRequest',
    message: BAD_MAPPING,
  },
  {
    row: '400 BadRequest: mapping missing',
    request: { method: 'POST', url: '/map', payload: { input: {} } },
    status: 400,
    code: 'BadRequest',
    message: BAD_MAPPING,
  },
  {
    row: '401 Unauthorized: Missing bearer token',
    build: AUTHENTICATED,
    request: mapEcho,
    status: 401,
    code: 'Unauthorized',
    message: 'Missing bearer token',
    headers: { 'www-authenticate': 'Bearer' },
  },
  {
    row: '401 Unauthorized: Malformed token',
    build: AUTHENTICATED,
    request: { ...mapEcho, headers: withToken('not-a-jwt') },
    status: 401,
    code: 'Unauthorized',
    message: 'Malformed token',
    headers: { 'www-authenticate': 'Bearer' },
  },
  {
    row: '401 Unauthorized: Invalid token signature',
    build: AUTHENTICATED,
    request: { ...mapEcho, headers: bearer({}, { ...signed, key: 'another-secret-that-is-long-enough-0123456789' }) },
    status: 401,
    code: 'Unauthorized',
    message: 'Invalid token signature',
    headers: { 'www-authenticate': 'Bearer' },
  },
  {
    row: '401 Unauthorized: Unsupported algorithm (outside the allowlist)',
    build: AUTHENTICATED,
    request: { ...mapEcho, headers: bearer({}, { ...signed, algorithm: 'HS384' }) },
    status: 401,
    code: 'Unauthorized',
    message: 'Unsupported algorithm',
    headers: { 'www-authenticate': 'Bearer' },
  },
  {
    row: '401 Unauthorized: Unsupported algorithm (alg none)',
    build: AUTHENTICATED,
    request: { ...mapEcho, headers: bearer({}, { ...signed, algorithm: 'none' }) },
    status: 401,
    code: 'Unauthorized',
    message: 'Unsupported algorithm',
    headers: { 'www-authenticate': 'Bearer' },
  },
  {
    row: '401 Unauthorized: Token expired',
    build: AUTHENTICATED,
    request: { ...mapEcho, headers: bearer({ exp: now - 600 }, signed) },
    status: 401,
    code: 'Unauthorized',
    message: 'Token expired',
    headers: { 'www-authenticate': 'Bearer' },
  },
  {
    row: '401 Unauthorized: Token not yet valid',
    build: AUTHENTICATED,
    request: { ...mapEcho, headers: bearer({ nbf: now + 3600 }, signed) },
    status: 401,
    code: 'Unauthorized',
    message: 'Token not yet valid',
    headers: { 'www-authenticate': 'Bearer' },
  },
  {
    row: '401 Unauthorized: Invalid issuer',
    build: AUTHENTICATED,
    request: { ...mapEcho, headers: bearer({}, { ...signed, iss: 'https://elsewhere.test' }) },
    status: 401,
    code: 'Unauthorized',
    message: 'Invalid issuer',
    headers: { 'www-authenticate': 'Bearer' },
  },
  {
    row: '401 Unauthorized: Invalid audience',
    build: AUTHENTICATED,
    request: { ...mapEcho, headers: bearer({}, { ...signed, aud: 'someone-else' }) },
    status: 401,
    code: 'Unauthorized',
    message: 'Invalid audience',
    headers: { 'www-authenticate': 'Bearer' },
  },
  {
    row: '403 Forbidden: claims for /map',
    build: { options: { auth: AUTH, map: { claims: { role: 'admin' } } } },
    request: { ...mapEcho, headers: bearer({ role: 'user' }, signed) },
    status: 403,
    code: 'Forbidden',
    message: 'Caller lacks the claims required for /map',
  },
  {
    row: '403 Forbidden: claims for /validate',
    build: { options: { auth: AUTH, validate: { claims: { role: 'admin' } } } },
    request: { method: 'POST', url: '/validate', payload: { mapping: 'echo' }, headers: bearer({ role: 'user' }, signed) },
    status: 403,
    code: 'Forbidden',
    message: 'Caller lacks the claims required for /validate',
  },
  {
    row: '403 Forbidden: claims for explicit mappings',
    build: { options: { auth: AUTH, map: { explicit: { claims: { scope: 'explicit' } } } } },
    request: { method: 'POST', url: '/map', payload: { mapping: { mapping: { '/a': '/a' } } }, headers: bearer({ scope: 'read' }, signed) },
    status: 403,
    code: 'Forbidden',
    message: 'Caller lacks the claims required for explicit mappings',
  },
  {
    row: '403 Forbidden: explicit form disabled',
    request: { method: 'POST', url: '/map', payload: { mapping: { mapping: { '/a': '/a' } } } },
    status: 403,
    code: 'Forbidden',
    message: "The explicit mapping form is not enabled on this deployment: the option map.explicit turns this on (in OPTIONS, OPTIONS_FILE or the plugin's options)",
  },
  {
    row: '404 NotFound: unknown route',
    request: { method: 'GET', url: '/nope' },
    status: 404,
    code: 'NotFound',
    message: 'No route for GET /nope',
  },
  {
    row: '404 NotFound: reserved write namespace',
    request: { method: 'POST', url: '/mappings/x', payload: {} },
    status: 404,
    code: 'NotFound',
    message: 'No route for POST /mappings/x',
  },
  {
    row: '404 NotFound: unknown registered id',
    request: { method: 'POST', url: '/map', payload: { mapping: 'nope' } },
    status: 404,
    code: 'NotFound',
    message: 'No mapping registered as "nope"',
  },
  {
    row: '405 MethodNotAllowed: Use POST',
    request: { method: 'GET', url: '/map' },
    status: 405,
    code: 'MethodNotAllowed',
    message: 'Use POST',
    headers: { allow: 'POST, OPTIONS' },
  },
  {
    row: '405 MethodNotAllowed: Use GET',
    request: { method: 'DELETE', url: '/mappings' },
    status: 405,
    code: 'MethodNotAllowed',
    message: 'Use GET',
    headers: { allow: 'GET, HEAD, OPTIONS' },
  },
  {
    row: '413 PayloadTooLarge: the default 1048576-byte limit',
    request: { method: 'POST', url: '/map', payload: `{"mapping":"echo","input":"${'x'.repeat(1048576)}"}` },
    status: 413,
    code: 'PayloadTooLarge',
    message: 'Request body exceeds the 1048576-byte limit',
  },
  {
    row: '422 InvalidMappingDocument: with the report',
    build: EXPLICIT,
    request: { method: 'POST', url: '/map', payload: { mapping: { mapping: { '/v': { source: '/v', as: 'integer' } } } } },
    status: 422,
    code: 'InvalidMappingDocument',
    message: 'The submitted mapping document is invalid',
    extra: ['report'],
  },
  {
    row: '422 ValidationError: invalidStatus 422, with errors',
    build: PROMOTING,
    request: { method: 'POST', url: '/map', payload: { mapping: 'strict', input: { name: 42 } } },
    status: 422,
    code: 'ValidationError',
    message: 'Mapping validation failed',
    extra: ['errors'],
  },
  {
    row: '409 ValidationError: the configured invalidStatus',
    build: { mappings: [STRICT], options: { map: { invalidStatus: 409 } } },
    request: { method: 'POST', url: '/map', payload: { mapping: 'strict', input: { name: 42 } } },
    status: 409,
    code: 'ValidationError',
    message: 'Mapping validation failed',
    extra: ['errors'],
  },
  {
    row: '500 InternalError: detail hidden with errorDetail minimal',
    build: explode,
    request: { method: 'POST', url: '/map', payload: { mapping: 'boom', input: { a: 1 } } },
    status: 500,
    code: 'InternalError',
    message: HIDDEN,
  },
  {
    row: '500 InternalError: detail shown with errorDetail full',
    build: { ...explode, options: { errorDetail: 'full' } },
    request: { method: 'POST', url: '/map', payload: { mapping: 'boom', input: { a: 1 } } },
    status: 500,
    code: 'InternalError',
    message: 'kaboom: the transformer failed',
  },
  {
    row: '503 Unavailable: detail hidden with errorDetail minimal',
    build: { options: { health: { mapping: 'nope' } } },
    request: { method: 'GET', url: '/health/mapping' },
    status: 503,
    code: 'Unavailable',
    message: HIDDEN,
  },
  {
    row: '503 Unavailable: detail shown with errorDetail full',
    build: { options: { health: { mapping: 'nope' }, errorDetail: 'full' } },
    request: { method: 'GET', url: '/health/mapping' },
    status: 503,
    code: 'Unavailable',
    message: 'Health canary "nope" is not a registered mapping',
  },
]

for (const { row, build, request, ...expected } of ROWS) {
  t.test(row, (t) => expectError(t, build, request, expected))
}

t.test('422 InvalidMappingDocument: the report is the full validation report', async (t) => {
  const app = await serverFor(EXPLICIT)
  const response = await call(app, { method: 'POST', url: '/map', payload: { mapping: { mapping: { '/v': { source: '/v', as: 'integer' } } } } })
  t.same(response.data.report, {
    valid: false,
    errors: [{ rule: 'KW-pipeline-1', message: 'as must be string, number, boolean, or json', pointer: '/mapping/~1v/as', descriptor: 'integer' }],
    warnings: [],
  })
})

t.test('ValidationError: errors are the evaluation errors of the envelope', async (t) => {
  const plain = await serve(t, { mappings: [STRICT] })
  const envelope = (await call(plain, { method: 'POST', url: '/map', payload: { mapping: 'strict', input: { name: 42 } } })).data
  const promoting = await serverFor(PROMOTING)
  const refused = (await call(promoting, { method: 'POST', url: '/map', payload: { mapping: 'strict', input: { name: 42 } } })).data
  t.equal(envelope.valid, false)
  t.ok(envelope.errors.length > 0)
  t.same(refused.errors, envelope.errors)
})

t.test('422 RedirectRefused: the plugin message and the raw Location', async (t) => {
  const up = await upstream(t, (_req, res) => {
    res.statusCode = 301
    res.setHeader('location', '/article/')
    res.end()
  })
  const build: BuildConfig = {
    mappings: [{ $id: 'fetching', mapping: { '/data': { request: { origin: up.origin, pathname: '/article' } } } }],
    extensions: LOOPBACK_ALLOWED,
  }
  await expectError(t, build, { method: 'POST', url: '/map', payload: { mapping: 'fetching', input: {} } }, {
    status: 422,
    code: 'RedirectRefused',
    message: `Redirect refused: ${up.origin}/article responded 301 to /article/`,
    extra: ['location'],
  })
  const app = await serverFor(build)
  const response = await call(app, { method: 'POST', url: '/map', payload: { mapping: 'fetching', input: {} } })
  t.equal(response.data.location, '/article/')
  t.same(up.hits.slice(-1), ['GET /article'], 'the redirect was not followed')
})

t.test('422 DestinationRefused: the stock request plugin never reaches a private address by default', async (t) => {
  const up = await upstream(t, (_req, res) => res.end('{}'))
  const build: BuildConfig = { mappings: [{ $id: 'fetching', mapping: { '/data': { request: { origin: up.origin, pathname: '/secret' } } } }] }
  await expectError(t, build, { method: 'POST', url: '/map', payload: { mapping: 'fetching', input: {} } }, { status: 422, code: 'DestinationRefused', message: 'Refused destination 127.0.0.1: a private network address (denyPrivateNetworks)' })
  t.same(up.hits, [], 'no connection reached the upstream')
})

t.test('500 InternalError: an upstream connection refused', async (t) => {
  const origin = await refusingOrigin()
  const build: BuildConfig = { mappings: [{ $id: 'fetching', mapping: { '/data': { request: { origin, pathname: '/' } } } }], extensions: LOOPBACK_ALLOWED }
  await expectError(t, build, { method: 'POST', url: '/map', payload: { mapping: 'fetching', input: {} } }, { status: 500, code: 'InternalError', message: HIDDEN })
})

t.test('500 InternalError: an upstream timeout', async (t) => {
  // The upstream never answers; the plugin's own deadline gives up.
  const up = await upstream(t, () => {})
  const build: BuildConfig = {
    mappings: [{ $id: 'fetching', mapping: { '/data': { request: { origin: up.origin, pathname: '/slow' } } } }],
    extensions: { ...stockExtensions(), plugins: { request: createRequest({ allowHeaders: [], timeoutMs: 100 }) } },
  }
  await expectError(t, build, { method: 'POST', url: '/map', payload: { mapping: 'fetching', input: {} } }, { status: 500, code: 'InternalError', message: HIDDEN })
})

t.test('503 Unavailable: every canary message, shown with errorDetail full', async (t) => {
  const extensions = {
    plugins: {
      hang: (_options: unknown, _value: unknown, context: { signal?: AbortSignal }) =>
        new Promise((resolve) => context.signal?.addEventListener('abort', () => resolve(null), { once: true })),
      fail: async () => {
        throw new Error('the canary plugin failed')
      },
    },
  }
  const mappings = [{ $id: 'hanging', mapping: { '/x': { constant: 1, hang: {} } } }, { $id: 'failing', mapping: { '/x': { constant: 1, fail: {} } } }]
  const health = { method: 'GET', url: '/health/mapping' } as const
  await expectError(t, { mappings, extensions, options: { errorDetail: 'full', health: { mapping: 'hanging', timeout: 50 } } }, health, {
    status: 503,
    code: 'Unavailable',
    message: 'Mapping-path health check timed out after 50 ms',
  })
  await expectError(t, { mappings, extensions, options: { errorDetail: 'full', health: { mapping: 'failing' } } }, health, {
    status: 503,
    code: 'Unavailable',
    message: 'Mapping-path health check failed',
  })
})

t.test('every error response carries X-Request-Id and no-store, also with a trusted incoming id', async (t) => {
  const app = await serve(t, { options: { trustRequestId: true } })
  const response = await call(app, { method: 'GET', url: '/nope', headers: { 'x-request-id': 'client-chosen.42' } })
  t.equal(response.headers['x-request-id'], 'client-chosen.42')
  t.equal(response.data.requestId, 'client-chosen.42')
  t.equal(response.headers['cache-control'], 'no-store')
  t.same(Object.keys(response.data), ['code', 'message', 'requestId'])
})

t.test('a valid token passes every check the 401 rows fail', async (t) => {
  const app = await serverFor(AUTHENTICATED)
  const response = await call(app, { ...mapEcho, headers: withToken(token({ sub: 'alice' }, signed)) })
  t.equal(response.statusCode, 200)
  t.same(response.data, { echo: { a: 1 }, valid: true, errors: [] })
})

t.test('a schema failure is answered with a message naming the failing field', async (t) => {
  const failure = (instancePath: string, message: string) => ({ validation: [{ instancePath, message, keyword: '', schemaPath: '', params: {} }], validationContext: 'body' })
  const schema = { type: 'object', required: ['mapping'] }
  t.equal(shapeError(failure('/mapping', 'Expected union value'), 1024, schema).message, BAD_MAPPING, 'mapping: its own message')
  t.equal(shapeError(failure('', 'Expected object'), 1024, schema).message, BAD_MAPPING, 'not an object: the first required field is missing')
  t.same(shapeError(failure('/input', 'Expected string'), 1024, schema), { status: 400, code: 'BadRequest', message: '"input" is invalid: expected string', extra: {} })
  t.equal(shapeError(failure('/a~1b/0', 'Expected number'), 1024, schema).message, '"a/b" is invalid: expected number', 'the top-level field, unescaped')
  t.equal(shapeError(failure('', 'Expected object'), 1024, { type: 'object' }).message, 'Body must be a JSON object')
})
