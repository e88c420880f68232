// Requests Node's HTTP parser refuses before any route sees them (http.md §3), on a real listening
// server: headers over maxHeaderSize → 431 HeadersTooLarge, a malformed request → 400 BadRequest,
// each with the error body, a fresh X-Request-Id and `Connection: close`; the log line holds the
// error code only, so the raw request (a bearer token in it) never reaches the log, even at trace.
import t from 'tap'
import { capturedLog } from './log-support.js'
import { GENERATED_ID, JSON_TYPE, SECRET, token } from './http-support.js'
import { listening, rawExchange } from './transport-support.js'

t.test('headers over the limit: 431 with the error body; the bearer token never reaches the log, at trace', async (t) => {
  const { logger, text, lines } = capturedLog('trace')
  const { port } = await listening(t, { options: { auth: { secret: SECRET } }, logger })
  const jwt = token({ sub: 'alice' })
  const padding = 'p'.repeat(20000)
  const response = await rawExchange(t, port, `GET /mappings HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${jwt}\r\nX-Padding: ${padding}\r\n\r\n`)
  t.equal(response.status, 431)
  t.match(response.headers, { 'content-type': JSON_TYPE, 'x-request-id': GENERATED_ID, connection: 'close', 'cache-control': 'no-store' })
  t.strictSame(JSON.parse(response.body), {
    code: 'HeadersTooLarge',
    message: 'Request headers exceed the 16384-byte limit',
    requestId: response.headers['x-request-id'],
  })

  const output = text()
  t.notOk(output.includes(jwt), 'not the token')
  for (const segment of jwt.split('.')) t.notOk(output.includes(segment), 'not any segment of it')
  t.notOk(output.includes(SECRET), 'not the secret')
  t.notOk(/bearer/i.test(output), 'no Authorization value at all')
  t.notOk(output.includes('ppppp') || /x-padding/i.test(output), 'no other header either')
  t.notOk(output.includes('rawPacket'), 'not the raw packet, even as bytes')
  const logged = lines().filter((line) => line.msg === 'client error')
  t.equal(logged.length, 1, 'one line')
  t.strictSame(
    { ...logged[0], time: undefined, pid: undefined, hostname: undefined },
    { level: 30, time: undefined, pid: undefined, hostname: undefined, requestId: response.headers['x-request-id'], status: 431, code: 'HeadersTooLarge', error: 'HPE_HEADER_OVERFLOW', msg: 'client error' },
    'the line holds the codes and the request id, nothing else'
  )
})

t.test('maxHeaderSize is configurable: over it 431 naming the limit, under it served', async (t) => {
  const { port } = await listening(t, { options: { server: { maxHeaderSize: 2048 } } })
  const over = await rawExchange(t, port, `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'p'.repeat(3000)}\r\n\r\n`)
  t.equal(over.status, 431)
  t.equal(JSON.parse(over.body).message, 'Request headers exceed the 2048-byte limit')
  const under = await rawExchange(t, port, `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'p'.repeat(1500)}\r\n\r\n`)
  t.equal(under.status, 200)
})

t.test('a malformed request: 400 BadRequest with the error body and the configured id prefix', async (t) => {
  const { logger, text, lines } = capturedLog('trace')
  const { port } = await listening(t, { options: { requestIdPrefix: 'edge-' }, logger })
  const malformed = [
    ['an invalid method', 'G@T /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
    ['a header without a colon', 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization Bearer leaked-if-logged\r\n\r\n'],
    ['two Content-Length values that disagree', 'POST /map HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'],
    ['a bad chunk size', 'POST /map HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'],
  ] as const
  for (const [what, request] of malformed) {
    const response = await rawExchange(t, port, request)
    t.equal(response.status, 400, what)
    t.match(response.headers, { 'x-request-id': /^edge-[0-9a-f]{16}$/, connection: 'close' }, what)
    t.strictSame(JSON.parse(response.body), { code: 'BadRequest', message: 'Malformed HTTP request', requestId: response.headers['x-request-id'] }, what)
  }
  t.notOk(text().includes('leaked-if-logged'), 'the raw request is never logged')
  t.equal(lines().filter((line) => line.msg === 'client error').length, malformed.length, 'one line each')
})
