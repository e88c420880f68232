// What every response and every request body share (http.md §2 and §4): X-Request-Id and its
// trust rule, no-store, JSON bodies whatever the Content-Type, the prototype-poisoning guard, the
// body limit with and without Content-Length (a chunked body over a real socket is cut off), the
// method rules (405 with Allow, OPTIONS, HEAD) and the reserved write namespace.
import net from 'node:net'
import t from 'tap'
import Fastify from 'fastify'
import mapperService from '../app.js'
import { MAX_BODY_DEPTH } from '../http/plugins/body.js'
import { frameworkErrorHandler } from '../http/plugins/errors.js'
import { ECHO, GENERATED_ID, JSON_TYPE, SECRET, call, originOf, serve, shared } from './http-support.js'

const mapEcho = (payload: string, headers: Record<string, string> = {}) => ({ method: 'POST' as const, url: '/map', payload, headers })
const ECHO_BODY = '{"mapping":"echo","input":{"a":1}}'

// Tests that need the same options share one server (a build costs a few hundred milliseconds);
// none of them changes anything a later one could see. A test with options of its own builds its own.
/** The default options, listening on 127.0.0.1 for the test that needs a real socket. */
const plain = shared(t, {}, { listen: true })
/** Authentication on. */
const secured = shared(t, { options: { auth: { secret: SECRET } } })

t.test('X-Request-Id and Cache-Control: no-store on every response, errors and OPTIONS included', async (t) => {
  const app = await secured()
  const requests = [
    { method: 'GET', url: '/health' },
    { method: 'GET', url: '/health/mapping' },
    { method: 'HEAD', url: '/health' },
    { method: 'GET', url: '/nope' },
    { method: 'GET', url: '/mappings' },
    { method: 'POST', url: '/map', payload: '{bad' },
    { method: 'GET', url: '/map' },
    { method: 'OPTIONS', url: '/map' },
    { method: 'OPTIONS', url: '/nope' },
    { method: 'GET', url: '/openapi.json' },
  ] as const
  const ids = new Set<string>()
  for (const request of requests) {
    const response = await app.inject(request)
    const id = response.headers['x-request-id']
    t.match(id, GENERATED_ID, `${request.method} ${request.url} → ${response.statusCode}`)
    t.equal(response.headers['cache-control'], 'no-store')
    if (response.body !== '') t.equal(response.headers['content-type'], JSON_TYPE)
    ids.add(String(id))
  }
  t.equal(ids.size, requests.length, 'a fresh id per request')
})

t.test('request ids: the configured prefix; an incoming id is ignored unless trusted', async (t) => {
  const prefixed = await serve(t, { options: { requestIdPrefix: 'svc-' } })
  const response = await call(prefixed, { method: 'GET', url: '/nope', headers: { 'x-request-id': 'client-id' } })
  t.match(response.headers['x-request-id'], /^svc-[0-9a-f]{16}$/)
  t.equal(response.data.requestId, response.headers['x-request-id'])

  const trusting = await serve(t, { options: { trustRequestId: true } })
  const idOf = async (incoming: string): Promise<string> =>
    String((await trusting.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': incoming } })).headers['x-request-id'])
  for (const good of ['abc', 'trace-1.2:3_x', 'A'.repeat(128)]) t.equal(await idOf(good), good, `trusted: ${good.slice(0, 20)}`)
  for (const bad of ['', 'has space', 'semi;colon', 'A'.repeat(129), 'ünï']) t.match(await idOf(bad), GENERATED_ID, `replaced: ${JSON.stringify(bad.slice(0, 20))}`)
  t.match(String((await trusting.inject({ method: 'GET', url: '/health' })).headers['x-request-id']), GENERATED_ID, 'generated when absent')
})

t.test('bodies are JSON whatever the Content-Type, or without one', async (t) => {
  const app = await plain()
  const types = [undefined, 'application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'json', '']
  for (const type of types) {
    const response = await call(app, mapEcho(ECHO_BODY, type === undefined ? {} : { 'content-type': type }))
    t.equal(response.statusCode, 200, `Content-Type ${JSON.stringify(type)}`)
    t.same(response.data, { echo: { a: 1 }, valid: true, errors: [] })
  }
  t.equal((await call(app, mapEcho(`\ufeff${ECHO_BODY}`))).statusCode, 200, 'a leading byte order mark')
})

t.test('a long body is read from its bytes as a short one is: marks, characters of several bytes, blanks', async (t) => {
  const app = await plain()
  // 30,000 characters of three bytes each: long in bytes (90 KB), short in characters.
  const wide = '€'.repeat(30_000)
  const wideBody = `{"mapping":"echo","input":{"s":"${wide}"}}`
  const answered = await call(app, mapEcho(`\ufeff${wideBody}`))
  t.equal(answered.statusCode, 200, 'a byte order mark and 90 KB of three-byte characters')
  t.equal((answered.data as { echo: { s: string } }).echo.s, wide, 'every character as sent')
  // Long in characters too: 200,000 of them.
  const long = 'é'.repeat(200_000)
  const longAnswer = await call(app, mapEcho(`\ufeff{"mapping":"echo","input":{"s":"${long}"}}`))
  t.equal(longAnswer.statusCode, 200)
  t.equal((longAnswer.data as { echo: { s: string } }).echo.s, long)
  const blank = await call(app, mapEcho(' '.repeat(200_000)))
  t.equal(blank.statusCode, 400, 'a long body of blanks: 400')
  t.match(blank.data, { code: 'BadRequest', message: 'Body must be valid JSON' })
  const broken = await call(app, mapEcho(`{"mapping":"echo","input":{"s":"${long}"}`))
  t.equal(broken.statusCode, 400, 'a long body cut short: 400')
  t.match(broken.data, { code: 'BadRequest' })
})

t.test('a body whose bytes are not UTF-8 is refused, never decoded with replacement characters', async (t) => {
  const app = await plain()
  const NOT_UTF8 = { code: 'BadRequest', message: 'Body must be valid JSON: its bytes are not UTF-8' }
  const bytes = (...parts: Array<string | number[]>): Buffer => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))))
  const cases: Array<[string, Buffer]> = [
    ['a byte that begins no character', bytes('{"mapping":"echo","input":{"s":"', [0xff], '"}}')],
    ['a continuation byte alone', bytes('{"mapping":"echo","input":{"s":"', [0x80], '"}}')],
    ['a character encoded in too many bytes', bytes('{"mapping":"echo","input":{"s":"', [0xc0, 0xaf], '"}}')],
    ['a surrogate half', bytes('{"mapping":"echo","input":{"s":"', [0xed, 0xa0, 0x80], '"}}')],
    ['a character cut short at the end', bytes('{"mapping":"echo","input":{"s":"x"}} ', [0xe2, 0x82])],
    ['a long body, the bad byte near its end', bytes('{"mapping":"echo","input":{"s":"', 'é'.repeat(150_000), [0xfe], '"}}')],
    ['a long body, the bad byte at its start', bytes([0xff], '{"mapping":"echo","input":{"s":"', 'x'.repeat(300_000), '"}}')],
  ]
  for (const [name, payload] of cases) {
    for (const url of ['/map', '/validate']) {
      const response = await call(app, { method: 'POST', url, payload, headers: { 'content-type': 'application/json' } })
      t.equal(response.statusCode, 400, `${url}: ${name}`)
      t.match(response.data, NOT_UTF8)
    }
  }
})

t.test('a body in many chunks, characters cut between them, is decoded whole', async (t) => {
  const app = await plain()
  // 1,000-byte chunks through a socket: every third chunk boundary falls inside a three-byte
  // character, a four-byte one, or between the two; the body is long enough to be decoded in
  // several slices (DECODE_SLICE_BYTES).
  const text = '€😀'.repeat(30_000)
  const body = Buffer.from(`{"mapping":"echo","input":{"s":"${text}"}}`)
  const { hostname: host, port } = new URL(originOf(app))
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(Number(port), host)
    const received: Buffer[] = []
    socket.on('data', (chunk: Buffer) => received.push(chunk))
    socket.on('end', () => resolve(Buffer.concat(received).toString('utf8')))
    socket.on('error', reject)
    socket.setNoDelay(true)
    socket.write(`POST /map HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`)
    let at = 0
    const send = (): void => {
      // A few chunks per turn, each written on its own, so the server reads them apart.
      for (let i = 0; i < 8 && at < body.length; i++, at += 1000) socket.write(body.subarray(at, at + 1000))
      if (at < body.length) setTimeout(send, 1)
    }
    send()
  })
  t.match(answer, /^HTTP\/1\.1 200 /, 'answered 200')
  const json = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { echo: { s: string } }
  t.equal(json.echo.s, text, 'every character as sent')
})

t.test('long bodies arriving together are each answered as they would be alone', async (t) => {
  const app = await plain()
  // Twenty-four bodies of 200 to 600 KB at once, whose work goes on a slice per turn in turn: each
  // gets its own answer (the scheduler hands no body another's text or outcome).
  const long = (i: number): string => `{"mapping":"echo","input":{"i":${i},"s":"${'y'.repeat(200_000 + 16_000 * i)}"}}`
  const kinds = [
    (i: number) => ({ payload: long(i), expect: 200 }),
    (i: number) => ({ payload: long(i).slice(0, -1), expect: 400 }),
    (i: number) => ({ payload: Buffer.concat([Buffer.from(long(i).slice(0, -2)), Buffer.from([0xff]), Buffer.from('}}')]), expect: 400 }),
    (i: number) => ({ payload: `${'['.repeat(MAX_BODY_DEPTH)}${long(i)}${']'.repeat(MAX_BODY_DEPTH)}`, expect: 400 }),
  ]
  const requests = Array.from({ length: 24 }, (_, i) => ({ i, ...kinds[i % kinds.length]!(i) }))
  const answers = await Promise.all(requests.map(({ payload }) => call(app, { method: 'POST', url: '/map', payload, headers: { 'content-type': 'application/json' } })))
  for (const [index, answer] of answers.entries()) {
    const { i, expect } = requests[index]!
    t.equal(answer.statusCode, expect, `body ${i}: ${expect}`)
    if (expect === 200) t.equal((answer.data as { echo: { i: number; s: string } }).echo.s.length, 200_000 + 16_000 * i, `body ${i}: its own text`)
    if (expect === 200) t.equal((answer.data as { echo: { i: number } }).echo.i, i)
  }
  t.match(answers[1]!.data, { message: /^Body must be valid JSON/ })
  t.match(answers[2]!.data, { message: 'Body must be valid JSON: its bytes are not UTF-8' })
  t.match(answers[3]!.data, { message: /^Body must not nest deeper than/ })
})

t.test('an empty, absent or malformed body: 400 Body must be valid JSON, with where it stops being JSON', async (t) => {
  const app = await plain()
  const cases: Array<[string, { payload?: string; headers?: Record<string, string> }, string]> = [
    ['no body', {}, ''],
    ['empty, typed as JSON', { payload: '', headers: { 'content-type': 'application/json' } }, ''],
    ['empty, untyped', { payload: '' }, ''],
    ['whitespace', { payload: '  \n ' }, ''],
    ['truncated', { payload: '{"mapping":' }, ' (line 1, column 12): unexpected end of input'],
    ['not JSON', { payload: '{ not json' }, ' (line 1, column 3): unexpected "n"'],
    ['trailing garbage', { payload: `${ECHO_BODY} x` }, ` (line 1, column ${ECHO_BODY.length + 2}): unexpected "x"`],
    ['on a later line', { payload: '{\n  "mapping": "echo",\n  "input": {"a": 1,}\n}' }, ' (line 3, column 20): unexpected "}"'],
    ['form encoded', { payload: 'mapping=echo', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, ' (line 1, column 1): unexpected "m"'],
  ]
  for (const [name, request, where] of cases) {
    for (const url of ['/map', '/validate']) {
      const response = await call(app, { method: 'POST', url, ...request })
      t.equal(response.statusCode, 400, `${url}: ${name}`)
      t.same(response.data, { code: 'BadRequest', message: `Body must be valid JSON${where}`, requestId: response.headers['x-request-id'] })
    }
  }
})

t.test('a body member the endpoint does not have is 400 naming it and the members it has', async (t) => {
  const app = await plain()
  const cases: Array<[string, string, string]> = [
    ['/map', '{"mapping":"echo","inptu":{"a":1}}', 'Body member "inptu" is not one of "mapping", "input", "explain"'],
    ['/map', '{"mapping":"echo","input":{},"explian":true}', 'Body member "explian" is not one of "mapping", "input", "explain"'],
    ['/validate', '{"mapping":"echo","input":{}}', 'Body member "input" is not one of "mapping"'],
    ['/map', `{"mapping":"echo","${'k'.repeat(1000)}":1}`, `Body member "${'k'.repeat(64)}…" is not one of "mapping", "input", "explain"`],
  ]
  for (const [url, payload, message] of cases) {
    const response = await call(app, { method: 'POST', url, payload })
    t.equal(response.statusCode, 400, `${url} ${payload.slice(0, 40)}`)
    t.same(response.data, { code: 'BadRequest', message, requestId: response.headers['x-request-id'] })
  }
  t.equal((await call(app, { method: 'POST', url: '/map', payload: '{"mapping":"echo","input":{"a":1}}' })).statusCode, 200, 'the members it has still pass')
})

t.test('prototype poisoning: __proto__ or constructor.prototype keys are 400, however spelled', async (t) => {
  const app = await serve(t, { options: { map: { explicit: true } } })
  const poisoned = [
    '{"mapping":"echo","__proto__":{"polluted":1}}',
    '{"mapping":"echo","input":{"deep":{"__proto__":{"polluted":1}}}}',
    '{"mapping":"echo","input":{"constructor":{"prototype":{"polluted":1}}}}',
    '{"mapping":{"mapping":{"/x":"/y"},"__proto__":{"polluted":1}}}',
    '{"mapping":"echo","\\u005f_proto__":{"polluted":1}}',
    '{"mapping":"echo","input":{"\\u0063onstructor":{"prototype":{"polluted":1}}}}',
  ]
  for (const payload of poisoned) {
    const response = await call(app, mapEcho(payload))
    t.equal(response.statusCode, 400, payload)
    t.equal(response.data.code, 'BadRequest')
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched')
  const harmless = [
    ['{"mapping":"echo","input":{"constructor":{"name":1}}}', { echo: { constructor: { name: 1 } }, valid: true, errors: [] }],
    ['{"mapping":"echo","input":{"key":"__proto__"}}', { echo: { key: '__proto__' }, valid: true, errors: [] }],
    ['{"mapping":"echo","input":{"caf\\u00e9":"\\u00e9"}}', { echo: { café: 'é' }, valid: true, errors: [] }],
  ] as const
  for (const [payload, expected] of harmless) {
    const response = await call(app, mapEcho(payload))
    t.equal(response.statusCode, 200, payload)
    t.same(response.data, expected)
  }
})

t.test('a body over maxBodyBytes with Content-Length: 413 on every route that reads one', async (t) => {
  const app = await serve(t, { options: { maxBodyBytes: 64 } })
  const fits = `{"mapping":"echo","input":"${'x'.repeat(64 - 29)}"}`
  t.equal(Buffer.byteLength(fits), 64)
  t.equal((await call(app, mapEcho(fits))).statusCode, 200, 'exactly the limit is fine')
  const over = `{"mapping":"echo","input":"${'x'.repeat(64 - 28)}"}`
  for (const url of ['/map', '/validate']) {
    const response = await call(app, { method: 'POST', url, payload: over })
    t.equal(response.statusCode, 413, url)
    t.same(response.data, { code: 'PayloadTooLarge', message: 'Request body exceeds the 64-byte limit', requestId: response.headers['x-request-id'] })
  }
})

t.test('a chunked body over maxBodyBytes: 413 before the body is all sent (real socket)', async (t) => {
  const app = await serve(t, { options: { maxBodyBytes: 4096 } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = new URL(originOf(app))
  const socket = net.connect(Number(port), '127.0.0.1')
  t.teardown(() => socket.destroy())
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  let response = ''
  let closed = false
  socket.on('data', (data: Buffer) => (response += data.toString('latin1')))
  socket.on('close', () => (closed = true))
  socket.on('error', () => (closed = true))
  socket.write('POST /map HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n')
  const chunk = 'x'.repeat(1024)
  const limit = 100
  let sent = 0
  // Up to 100 KiB, one chunk at a time, stopping as soon as the server has answered.
  // `closed` is set by the socket's close and error handlers.
  // eslint-disable-next-line no-unmodified-loop-condition
  while (sent < limit && !response.includes('\r\n\r\n') && !closed) {
    socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
    sent++
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  // eslint-disable-next-line no-unmodified-loop-condition
  for (let wait = 0; wait < 200 && !/\r\n\r\n[\s\S]*\}/.test(response) && !closed; wait++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.match(response, /^HTTP\/1\.1 413 /, 'answered 413')
  t.ok(sent < limit, `the server answered after ${sent} of ${limit} chunks, without the terminating chunk`)
  t.match(response.toLowerCase(), /x-request-id: req_[0-9a-f]{16}/)
  const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4))
  t.same(Object.keys(body), ['code', 'message', 'requestId'])
  t.equal(body.message, 'Request body exceeds the 4096-byte limit')
})

t.test('405 with Allow for every other method on a known path', async (t) => {
  const app = await plain()
  const paths: Array<[string, 'GET' | 'POST']> = [
    ['/health', 'GET'],
    ['/health/mapping', 'GET'],
    ['/map', 'POST'],
    ['/validate', 'POST'],
    ['/mappings', 'GET'],
    ['/extensions', 'GET'],
    ['/openapi.json', 'GET'],
  ]
  for (const [url, served] of paths) {
    const others = (['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'TRACE'] as const).filter((m) => m !== served && !(served === 'GET' && m === 'HEAD'))
    for (const method of others) {
      const response = await app.inject({ method, url, payload: method === 'TRACE' || method === 'GET' || method === 'HEAD' ? undefined : '{}' })
      t.equal(response.statusCode, 405, `${method} ${url}`)
      t.equal(response.headers.allow, served === 'GET' ? 'GET, HEAD, OPTIONS' : `${served}, OPTIONS`, 'the same Allow as OPTIONS gives')
      if (method !== 'HEAD') t.same(JSON.parse(response.body), { code: 'MethodNotAllowed', message: `Use ${served}`, requestId: response.headers['x-request-id'] })
    }
  }
})

t.test('OPTIONS: 204 with Allow on known paths, never authenticated; 404 on unknown ones', async (t) => {
  const app = await secured()
  const allow: Record<string, string> = {
    '/health': 'GET, HEAD, OPTIONS',
    '/health/mapping': 'GET, HEAD, OPTIONS',
    '/map': 'POST, OPTIONS',
    '/map/echo': 'POST, OPTIONS',
    '/validate': 'POST, OPTIONS',
    '/mappings': 'GET, HEAD, OPTIONS',
    '/mappings/echo/schema': 'GET, HEAD, OPTIONS',
    '/extensions': 'GET, HEAD, OPTIONS',
    '/openapi.json': 'GET, HEAD, OPTIONS',
  }
  for (const [url, methods] of Object.entries(allow)) {
    const response = await app.inject({ method: 'OPTIONS', url })
    t.equal(response.statusCode, 204, url)
    t.equal(response.headers.allow, methods)
    t.equal(response.body, '')
    t.notOk(response.headers['access-control-allow-origin'], 'no CORS headers when CORS is off')
  }
  for (const url of ['/nope', '/mappings/x', '/map/echo/x']) {
    const response = await call(app, { method: 'OPTIONS', url })
    t.equal(response.statusCode, 404, url)
    t.equal(response.data.message, `No route for OPTIONS ${url}`)
  }
})

t.test('HEAD on a GET route: the GET headers without a body', async (t) => {
  const app = await plain()
  for (const url of ['/health', '/health/mapping', '/mappings', '/extensions']) {
    const get = await app.inject({ method: 'GET', url })
    const head = await app.inject({ method: 'HEAD', url })
    t.equal(head.statusCode, 200, url)
    t.equal(head.body, '')
    t.equal(head.headers['content-type'], get.headers['content-type'])
    t.equal(head.headers['cache-control'], 'no-store')
    t.match(head.headers['x-request-id'], GENERATED_ID)
  }
})

t.test('the reserved write namespace: /mappings/<anything> is 404, /mappings itself is 405 Allow GET', async (t) => {
  const app = await plain()
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
    for (const url of ['/mappings/x', '/mappings/echo', '/mappings/a/b']) {
      const response = await call(app, { method, url, payload: '{}' })
      t.equal(response.statusCode, 404, `${method} ${url}`)
      t.same(response.data, { code: 'NotFound', message: `No route for ${method} ${url}`, requestId: response.headers['x-request-id'] })
    }
    const exact = await call(app, { method, url: '/mappings', payload: '{}' })
    t.equal(exact.statusCode, 405, `${method} /mappings`)
    t.equal(exact.headers.allow, 'GET, HEAD, OPTIONS')
    t.equal(exact.data.message, 'Use GET')
  }
  t.same((await call(app, { method: 'GET', url: '/mappings' })).data, { echo: ECHO }, 'nothing was written')
})

t.test('unknown routes: 404 with the path without its query; 401 first when auth is on', async (t) => {
  const open = await plain()
  const response = await call(open, { method: 'GET', url: '/nope?token=secret' })
  t.equal(response.statusCode, 404)
  t.equal(response.data.message, 'No route for GET /nope')
  const authenticating = await secured()
  for (const request of [{ method: 'GET', url: '/nope' }, { method: 'DELETE', url: '/mappings/x' }, { method: 'GET', url: '/map' }] as const) {
    const anonymous = await call(authenticating, request)
    t.equal(anonymous.statusCode, 401, `${request.method} ${request.url}`)
    t.equal(anonymous.data.message, 'Missing bearer token')
  }
})

t.test('GET /openapi.json: public, and absent with openapi: false', async (t) => {
  const app = await secured()
  const response = await call(app, { method: 'GET', url: '/openapi.json' })
  t.equal(response.statusCode, 200)
  t.equal(response.data.openapi, '3.1.0')
  const off = await serve(t, { options: { openapi: false } })
  t.equal((await call(off, { method: 'GET', url: '/openapi.json' })).statusCode, 404)
  t.equal((await call(off, { method: 'OPTIONS', url: '/openapi.json' })).statusCode, 404)
})

t.test('over a real socket: headers, bodies and HEAD as a client sees them', async (t) => {
  const app = await plain()
  const origin = originOf(app)
  const signal = (): AbortSignal => AbortSignal.timeout(10000)
  const mapped = await fetch(`${origin}/map`, { method: 'POST', body: ECHO_BODY, signal: signal() })
  t.equal(mapped.status, 200)
  t.equal(mapped.headers.get('content-type'), JSON_TYPE)
  t.equal(mapped.headers.get('cache-control'), 'no-store')
  t.match(mapped.headers.get('x-request-id'), GENERATED_ID)
  t.equal(await mapped.text(), '{"echo":{"a":1},"valid":true,"errors":[]}')
  const head = await fetch(`${origin}/health`, { method: 'HEAD', signal: signal() })
  t.equal(head.status, 200)
  t.equal(await head.text(), '')
  const wrong = await fetch(`${origin}/map`, { method: 'PUT', body: '{}', signal: signal() })
  t.equal(wrong.status, 405)
  t.equal(wrong.headers.get('allow'), 'POST, OPTIONS')
  const preflight = await fetch(`${origin}/validate`, { method: 'OPTIONS', signal: signal() })
  t.equal(preflight.status, 204)
  t.match(preflight.headers.get('x-request-id'), GENERATED_ID)
})

t.test('a URL that does not decode: the error body with X-Request-Id (frameworkErrorHandler)', async (t) => {
  const app = Fastify({ frameworkErrors: frameworkErrorHandler({ maxBodyBytes: 1048576, errorDetail: 'minimal' }) })
  await app.register(mapperService, { mappings: [ECHO], options: { logging: { level: 'silent' } } })
  t.teardown(() => app.close())
  const response = await call(app, { method: 'GET', url: '/health/%zz' })
  t.equal(response.statusCode, 404)
  t.match(response.headers['x-request-id'], /^req-\d+$|^req_[0-9a-f]{16}$/)
  t.same(Object.keys(response.data), ['code', 'message', 'requestId'])
  t.equal(response.data.message, 'No route for GET /health/%zz')
  t.equal(response.data.requestId, response.headers['x-request-id'])
  t.equal(response.headers['cache-control'], 'no-store')
})

t.test('buildServer answers a URL that does not decode with the error body', async (t) => {
  const app = await plain()
  const response = await call(app, { method: 'GET', url: '/%zz' })
  t.equal(response.statusCode, 404)
  t.match(response.headers['x-request-id'], GENERATED_ID)
  t.same(response.data, { code: 'NotFound', message: 'No route for GET /%zz', requestId: response.headers['x-request-id'] })
})
