// Slow and idle clients against a real listening server (options.server): headers trickled slower
// than headersTimeout, a body slower than requestTimeout, a silent connection past
// connectionTimeout and an idle keep-alive connection are all closed; connections beyond
// maxConnections are closed as they arrive; the server keeps serving. The timeouts are short so the
// test is quick (a few hundred milliseconds: each test waits for one of them to pass); every wait is
// bounded generously, and no duration is asserted as performance. Load shedding is off: a loaded
// machine's event-loop delay must not answer 503 for what these tests are about.
import t from 'tap'
import { GENERATED_ID } from './http-support.js'
import { listening, open, rawExchange, responseOn, within } from './transport-support.js'

t.setTimeout(120000)

// Node checks the request and headers timeouts every headersTimeout / 4 (server.ts): 100 ms here.
const SHORT = { requestTimeout: 600, headersTimeout: 400, keepAliveTimeout: 300 }
const HEALTH = 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
/** Far longer than any timeout configured here: the server must cut the connection first. */
const SLOW_TEXT = 'x'.repeat(100)

t.test('slow and idle clients are cut off; the server keeps serving', async (t) => {
  const { app, port } = await listening(t, { options: { server: SHORT, underPressure: false } })

  t.test('headers sent one byte at a time, slower than headersTimeout: 408 and closed', async (t) => {
    const connection = await open(t, port)
    connection.send('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ')
    const sent = connection.trickle(SLOW_TEXT, 150)
    const { received } = await within('the connection closed', 10000, connection.ended)
    t.ok((await sent) < SLOW_TEXT.length, 'cut off before the client finished its headers')
    const response = await responseOn(connection)
    t.equal(response.status, 408)
    t.match(response.headers, { connection: 'close', 'content-type': 'application/json; charset=utf-8', 'x-request-id': GENERATED_ID })
    t.strictSame(JSON.parse(response.body), { code: 'RequestTimeout', message: 'The request was not received in time', requestId: response.headers['x-request-id'] })
    t.ok(received.startsWith('HTTP/1.1 408 '), 'nothing but the 408 was sent')
  })

  t.test('a body trickled slower than requestTimeout: 408 and closed', async (t) => {
    const connection = await open(t, port)
    connection.send('POST /map HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n')
    const sent = connection.trickle(SLOW_TEXT, 150)
    await within('the connection closed', 10000, connection.ended)
    t.ok((await sent) < SLOW_TEXT.length, 'cut off before the client finished its body')
    const response = await responseOn(connection)
    t.equal(response.status, 408)
    t.equal(JSON.parse(response.body).code, 'RequestTimeout')
    t.equal(response.headers.connection, 'close')
  })

  t.test('a connection that opens and sends nothing is closed after headersTimeout', async (t) => {
    const connection = await open(t, port)
    const { received } = await within('the connection closed', 10000, connection.ended)
    t.match(received, /^HTTP\/1\.1 408 /, 'a 408, as for any request not received in time')
  })

  t.test('an idle keep-alive connection is closed after keepAliveTimeout', async (t) => {
    const connection = await open(t, port)
    connection.send(HEALTH)
    const response = await responseOn(connection)
    t.equal(response.status, 200)
    t.not(response.headers.connection, 'close', 'the response keeps the connection open')
    t.equal(connection.closed(), false, 'open right after the response')
    const { received } = await within('the idle connection closed', 10000, connection.ended)
    t.equal(received.split('HTTP/1.1 ').length - 1, 1, 'nothing more was sent before it closed')
  })

  t.test('a keep-alive connection is served again before keepAliveTimeout', async (t) => {
    const connection = await open(t, port)
    connection.send(HEALTH)
    t.equal((await responseOn(connection)).status, 200)
    connection.send(HEALTH)
    await within('the second response', 10000, (async () => {
      while (connection.received().split('HTTP/1.1 200').length < 3) await new Promise((resolve) => setTimeout(resolve, 10))
    })())
    t.pass('two responses on one connection')
    connection.socket.destroy()
  })

  t.test('afterwards, GET /health still answers 200', async (t) => {
    const response = await rawExchange(t, port, HEALTH)
    t.equal(response.status, 200)
    t.equal(JSON.parse(response.body).status, 'ok')
    t.equal(app.server.listening, true)
  })
})

t.test('connectionTimeout: a connection silent in both directions is closed, even within requestTimeout', async (t) => {
  const { port } = await listening(t, { options: { server: { requestTimeout: 60000, headersTimeout: 60000, connectionTimeout: 300 }, underPressure: false } })
  const connection = await open(t, port)
  connection.send('POST /map HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"map')
  // Far below the request and headers timeouts: only the silence can close it.
  await within('the silent connection closed', 20000, connection.ended)
  t.pass('closed')
  const response = await rawExchange(t, port, HEALTH)
  t.equal(response.status, 200, 'the server still serves')
})

t.test('maxConnections: a connection beyond the cap is closed as it arrives; capacity returns', async (t) => {
  // Long timeouts: the held connections must outlive the test, not be cut while it runs.
  const { app, port } = await listening(t, { options: { server: { maxConnections: 3, requestTimeout: 60000, headersTimeout: 60000 }, underPressure: false } })
  const connections = (): Promise<number> => new Promise((resolve, reject) => app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))))
  const until = (what: string, probe: () => Promise<boolean>): Promise<void> =>
    within(what, 10000, (async () => {
      while (!(await probe())) await new Promise((resolve) => setTimeout(resolve, 20))
    })())

  const held = []
  for (let i = 0; i < 3; i += 1) {
    const connection = await open(t, port)
    // A request begun and not finished: the connection is in use.
    connection.send('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    held.push(connection)
  }
  await until('the server holds three connections', async () => (await connections()) === 3)

  const refused = await open(t, port)
  refused.send(HEALTH)
  const { received } = await within('the fourth connection closed', 10000, refused.ended)
  t.equal(received, '', 'closed without a response')
  t.equal(await connections(), 3, 'still three connections')

  held[0]!.send('\r\n')
  t.equal((await responseOn(held[0]!)).status, 200, 'a held connection is still served')

  for (const connection of held) connection.socket.destroy()
  await until('the held connections are gone', async () => (await connections()) === 0)
  t.equal((await rawExchange(t, port, HEALTH)).status, 200, 'a new connection is served once there is room')
})
