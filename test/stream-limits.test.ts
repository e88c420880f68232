// POST /map/stream's bounds against a real listening server on 127.0.0.1 (options.stream): a
// stream that answers nothing within idleTimeout (blank lines are no progress) or runs past
// maxDurationMs is ended with a last error line and its connection closed; streams beyond
// maxStreams, or beyond maxStreamsPerClient from one address, are 503 with Retry-After; /health is
// answered while one chunk of 100,000 malformed lines is; the exact bytes (a byte order mark
// before an empty line, the limit with LF and CRLF, invalid UTF-8) and hostile lines are all 4xx
// lines, never 5xx; and a quiet stream whose client stays reads its answers intact. No timings
// are asserted: order and outcomes only, with bounded waits.
//
// The streams' tests run side by side (a parent test with `jobs`), each on a server of its own
// (the caps are counted per server, and each test's plugins count their own calls): most of them
// wait on a timer (an idleTimeout, a maxDurationMs, a plugin's pause) for seconds while using
// little CPU, and one after another those waits added up to most of the file's time.
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { resolveConfig } from '../config/resolve.js'
import type { Plugin } from '../engine/index.js'
import { originOf, serve, type Teardown } from './http-support.js'
import type { BuildConfig } from '../server.js'

/**
 * A listening server. Load shedding off: on a loaded machine a fresh process's first request may
 * be shed (503, event-loop delay) before any stream runs, and these tests are about streams.
 */
async function listening(t: Teardown, build: BuildConfig = {}): Promise<{ app: FastifyInstance; origin: string }> {
  const app = await serve(t, { ...build, options: { underPressure: false, ...build.options } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, origin: originOf(app) }
}

/** POST a body read from `body`; resolves with the response as soon as it starts. */
function post(origin: string, path: string, body: Readable, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson', ...headers } }, resolve)
    request.on('error', reject)
    body.on('error', () => {})
    body.pipe(request)
  })
}

/** Every line of a response, parsed, once it ends; `closed` tells whether its connection was closed after it. */
function lines(response: IncomingMessage, onLine: (line: any) => void = () => {}): Promise<{ lines: any[]; closed: Promise<void> }> {
  const closed = new Promise<void>((resolve) => response.socket.once('close', () => resolve()))
  return new Promise((resolve, reject) => {
    const all: any[] = []
    let rest = ''
    response.setEncoding('utf8')
    response.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n')
      rest = parts.pop()!
      for (const part of parts) {
        const line = JSON.parse(part)
        all.push(line)
        onLine(line)
      }
    })
    response.on('end', () => {
      if (rest !== '') all.push(JSON.parse(rest))
      resolve({ lines: all, closed })
    })
    response.on('error', reject)
    // Destroyed by the test: what came so far.
    response.on('close', () => resolve({ lines: all, closed }))
  })
}

async function send(origin: string, path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<{ status: number; lines: any[]; headers: IncomingMessage['headers'] }> {
  const response = await post(origin, path, Readable.from([typeof body === 'string' ? Buffer.from(body) : body]), headers)
  return { status: response.statusCode!, lines: (await lines(response)).lines, headers: response.headers }
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** A body that sends `first`, then `every` forever every `ms` until destroyed. */
function trickle(first: string, every: string, ms: number): Readable {
  const state = { stopped: false }
  const body = Readable.from(
    (async function * () {
      yield first
      for (;;) {
        await pause(ms)
        if (state.stopped) return
        yield every
      }
    })()
  )
  body.once('close', () => (state.stopped = true))
  return body
}

t.test('options.stream: defaults, idleTimeout following server.requestTimeout, and bounds checked at start', async (t) => {
  t.strictSame(resolveConfig({}).stream, { idleTimeout: 30000, maxDurationMs: 3_600_000, maxStreams: 64, maxStreamsPerClient: 8 })
  t.equal(resolveConfig({ server: { requestTimeout: 5000, headersTimeout: 5000 } }).stream.idleTimeout, 5000)
  t.strictSame(resolveConfig({ stream: { idleTimeout: 1000, maxDurationMs: 0, maxStreams: 3, maxStreamsPerClient: 1 } }).stream, { idleTimeout: 1000, maxDurationMs: 0, maxStreams: 3, maxStreamsPerClient: 1 })
  for (const [stream, path] of [
    [{ maxStreams: 0 }, /^options\.stream\.maxStreams/],
    [{ maxStreamsPerClient: 1.5 }, /^options\.stream\.maxStreamsPerClient/],
    [{ idleTimeout: 10 }, /^options\.stream\.idleTimeout/],
    [{ maxDurationMs: -1 }, /^options\.stream\.maxDurationMs/],
    [{ other: 1 }, /^options\.stream/],
  ] as const) {
    t.throws(() => resolveConfig({ stream } as never), { message: path }, JSON.stringify(stream))
  }
})

// All at once: the waits overlap (see the header); the CPU-heavy ones (the 100,000 lines, the
// worker thread of the hostile lines) run beside them rather than after them.
t.test('streams against servers of their own, side by side', { jobs: 8 }, async (t) => {
  t.test('a stream that answers nothing within idleTimeout is ended with a last error line and closed; blank lines are no progress', async (t) => {
    const { origin } = await listening(t, { options: { stream: { idleTimeout: 300 } } })
    const body = trickle('{"a":1}\n', '\n', 30)
    const response = await post(origin, '/map/stream?mapping=echo', body)
    t.equal(response.statusCode, 200)
    const { lines: answered, closed } = await lines(response)
    body.destroy()
    t.strictSame(answered[0], { echo: { a: 1 }, valid: true, errors: [] })
    t.equal(answered.length, 2, 'the answer, then the last line')
    t.match(answered[1], { status: 408, error: { code: 'StreamIdle', message: 'No line was answered within 300 ms: the stream is ended', requestId: response.headers['x-request-id'] } })
    t.ok(answered[1].line > 1, `numbered as the first line left unanswered (${answered[1].line})`)
    await closed
    t.pass('the connection is closed')

    // Malformed lines are answered (by error lines): they are progress of their own. 60 lines 30 ms
    // apart outlast the idleTimeout almost twice; a second is room for a loaded machine's pauses.
    const patient = await listening(t, { options: { stream: { idleTimeout: 1000 } } })
    const garbage = trickle('x\n', 'x\n', 30)
    let seen = 0
    const kept = await post(patient.origin, '/map/stream?mapping=echo', garbage)
    const reading = lines(kept, () => seen++)
    for (let tries = 0; tries < 500; tries++) {
      if (seen >= 60) break
      await pause(20)
    }
    garbage.destroy()
    kept.destroy()
    const { lines: got } = await reading
    t.ok(got.length >= 60, `60 error lines, over more than idleTimeout (${got.length})`)
    t.ok(got.every((line) => line.error.code === 'BadRequest'), 'none of them the end of the stream')
  })

  t.test('a stream that runs past maxDurationMs is ended with a last error line and closed, however busy', async (t) => {
    const { origin } = await listening(t, { options: { stream: { idleTimeout: 60_000, maxDurationMs: 500 } } })
    const body = trickle('{"i":0}\n', '{"i":1}\n', 20)
    const response = await post(origin, '/map/stream?mapping=echo', body)
    const { lines: answered, closed } = await lines(response)
    body.destroy()
    const last = answered.at(-1)
    t.ok(answered.length > 2, `lines answered until then (${answered.length - 1})`)
    t.ok(answered.slice(0, -1).every((line) => line.valid === true), 'each an envelope')
    t.match(last, { line: answered.length, status: 408, error: { code: 'StreamTooLong', message: 'The stream reached its maximum duration of 500 ms: it is ended' } })
    await closed
    t.pass('the connection is closed')
  })

  t.test('streams beyond maxStreams, or beyond maxStreamsPerClient from one address, are 503 with Retry-After', async (t) => {
    const { origin } = await listening(t, { options: { errorDetail: 'full', stream: { maxStreams: 2, maxStreamsPerClient: 1 }, server: { trustProxy: true } } })
    /** An admitted stream kept open: its first line answered, its body still open. */
    const open = async (client: string): Promise<{ body: Readable; response: IncomingMessage }> => {
      const body = new Readable({ read() {} })
      body.push('{"open":1}\n')
      const response = await post(origin, '/map/stream?mapping=echo', body, { 'x-forwarded-for': client })
      t.equal(response.statusCode, 200, `admitted from ${client}`)
      await new Promise((resolve) => response.once('data', resolve))
      return { body, response }
    }
    const a = await open('10.0.0.1')
    const sameClient = await send(origin, '/map/stream?mapping=echo', '{}\n', { 'x-forwarded-for': '10.0.0.1' })
    t.equal(sameClient.status, 503)
    t.match(sameClient.lines[0], { code: 'Unavailable', message: '1 streams are already open from this client address; retry later' })
    t.equal(sameClient.headers['retry-after'], '5')
    const b = await open('10.0.0.2')
    const third = await send(origin, '/map/stream?mapping=echo', '{}\n', { 'x-forwarded-for': '10.0.0.3' })
    t.equal(third.status, 503)
    t.match(third.lines[0], { code: 'Unavailable', message: '2 streams are already open; retry later' })
    t.equal(third.headers['retry-after'], '5')
    t.equal((await fetch(`${origin}/health`)).status, 200, 'the rest of the service is not held')

    // A stream that ends gives its place back.
    a.body.push(null)
    await lines(a.response)
    let again = await send(origin, '/map/stream?mapping=echo', '{"x":1}\n', { 'x-forwarded-for': '10.0.0.1' })
    for (let tries = 0; again.status === 503 && tries < 50; tries++) {
      await pause(20)
      again = await send(origin, '/map/stream?mapping=echo', '{"x":1}\n', { 'x-forwarded-for': '10.0.0.1' })
    }
    t.equal(again.status, 200)
    t.strictSame(again.lines, [{ echo: { x: 1 }, valid: true, errors: [] }])
    // A client that leaves gives its place back too.
    b.response.destroy()
    b.body.destroy()
    let after = await send(origin, '/map/stream?mapping=echo', '{}\n', { 'x-forwarded-for': '10.0.0.2' })
    for (let tries = 0; after.status === 503 && tries < 50; tries++) {
      await pause(20)
      after = await send(origin, '/map/stream?mapping=echo', '{}\n', { 'x-forwarded-for': '10.0.0.2' })
    }
    t.equal(after.status, 200)
  })

  t.test('/health is answered while one chunk of 100,000 malformed lines is being answered', async (t) => {
    const { origin } = await listening(t, { options: { server: { requestTimeout: 120_000 } } })
    // 100,000 lines are still a hundred slices or more (at most 1,024 lines each), a turn of the
    // loop between two; 400,000 cost four times the CPU (about 10 µs a line, served and read) for
    // the same answer. /health is asked once first, so the client's first fetch (undici loading)
    // is not what the stream races.
    const total = 100_000
    t.equal((await fetch(`${origin}/health`)).status, 200, 'answered before the stream')
    const response = await post(origin, '/map/stream?mapping=echo', Readable.from([Buffer.from('x\n'.repeat(total))]))
    let answered = 0
    let atHealth = -1
    let health: Promise<void> | undefined
    const done = lines(response, () => {
      answered++
      health ??= fetch(`${origin}/health`).then((reply) => {
        t.equal(reply.status, 200)
        atHealth = answered
      })
    })
    const { lines: all } = await done
    await health
    t.equal(all.length, total, 'one error line per line')
    t.match(all[0], { line: 1, status: 400, error: { code: 'BadRequest', message: 'Line 1 must be valid JSON (column 1): unexpected "x"' } })
    t.ok(atHealth > 0 && atHealth < total, `/health answered after ${atHealth} of ${total} lines, before the stream's end`)
  })

  t.test('exact bytes over HTTP: a BOM before an empty first line, the limit with LF and CRLF, invalid UTF-8', async (t) => {
    const limit = 64
    const { origin } = await listening(t, { options: { maxBodyBytes: limit } })
    const bom = await send(origin, '/map/stream?mapping=echo', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('\n{"a":1}\n')]))
    t.strictSame(bom.lines, [{ echo: { a: 1 }, valid: true, errors: [] }], 'no error line for the empty first line')
    const header = await send(origin, '/map/stream', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('\r\n{"mapping":"echo"}\r\n{"b":2}\r\n')]))
    t.equal(header.status, 200)
    t.strictSame(header.lines, [{ echo: { b: 2 }, valid: true, errors: [] }], 'the header line after a BOM and an empty line')

    const exact = `"${'x'.repeat(limit - 2)}"`
    const over = `"${'x'.repeat(limit - 1)}"`
    for (const ending of ['\n', '\r\n']) {
      const { lines: answered } = await send(origin, '/map/stream?mapping=echo', `${exact}${ending}${over}${ending}`)
      t.strictSame(answered[0], { echo: 'x'.repeat(limit - 2), valid: true, errors: [] }, `${JSON.stringify(ending)}: exactly ${limit} bytes pass`)
      t.match(answered[1], { line: 2, status: 413, error: { code: 'PayloadTooLarge', message: `Line 2 exceeds the ${limit}-byte limit (${limit + 1} bytes)` } }, `${JSON.stringify(ending)}: ${limit + 1} bytes do not`)
    }

    const utf8 = await send(origin, '/map/stream?mapping=echo', Buffer.concat([Buffer.from('"é"\n{}\n"'), Buffer.from([0xc3, 0x28]), Buffer.from('"\n"ok"\n')]))
    t.equal(utf8.lines.length, 4)
    t.strictSame(utf8.lines[0], { echo: 'é', valid: true, errors: [] })
    t.match(utf8.lines[2], { line: 3, status: 400, error: { code: 'BadRequest', message: 'Line 3 is not valid UTF-8' } })
    t.strictSame(utf8.lines[3], { echo: 'ok', valid: true, errors: [] })
    const badHeader = await send(origin, '/map/stream', Buffer.concat([Buffer.from('{"mapping":"'), Buffer.from([0xff]), Buffer.from('"}\n{}\n')]))
    t.equal(badHeader.status, 400)
    t.match(badHeader.lines[0], { code: 'BadRequest', message: 'Line 1 is not valid UTF-8' })
  })

  t.test('hostile lines are answered 4xx, never 5xx', async (t) => {
    // The explicit stream's lines in worker threads, as by default, on one thread: its concurrent
    // lines took two, each a second or more of CPU to start.
    const { origin } = await listening(t, { options: { maxBodyBytes: 4096, errorDetail: 'full', map: { explicit: true }, isolation: { threads: 1 } } })
    const hostile = [
      '{"__proto__":{"polluted":1}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '{"a":"\\u0000\\ud800"}',
      `${'['.repeat(2000)}${']'.repeat(2000)}`,
      '1e999999',
      '\u0000',
      '{"a":1}\u0000',
      'nul',
      '"\\x"',
      `"${'y'.repeat(5000)}"`,
      '\u2028',
      '\ufeff{"a":1}',
      '[1,2,3]',
    ]
    for (const path of ['/map/stream?mapping=echo', '/map/stream']) {
      const lead = path.endsWith('echo') ? '' : `${JSON.stringify({ mapping: { mapping: { '/e': '/' } } })}\n`
      const { status, lines: answered } = await send(origin, path, `${lead}${hostile.join('\n')}\n`)
      t.equal(status, 200)
      t.equal(answered.length, hostile.length)
      const statuses = answered.map((line) => line.status ?? 200)
      t.ok(statuses.every((code) => code < 500), `${path}: ${statuses.join(' ')}`)
    }
    t.equal(({} as Record<string, unknown>).polluted, undefined)
  })

  t.test('a quiet stream whose client stays: the probes for a departed client leave its answers intact', async (t) => {
    let calls = 0
    // Line 2 takes a while: the stream is quiet for many ticks, probed each one.
    const slow: Plugin = async (_options, value) => {
      calls++
      if (value === 2) await pause(2200)
      return value
    }
    const { origin } = await listening(t, {
      mappings: [{ $id: 'slow', mapping: { '/v': { source: '/v', slow: {} } } }],
      extensions: { plugins: { slow } },
      options: { isolation: false, stream: { idleTimeout: 10_000 } },
    })
    const body = '{"v":1}\n{"v":2}\n{"v":3}\n'
    // The two clients at once, each on its own stream: their quiet spells overlap rather than add up.
    // fetch (undici) reads the same chunked body as node:http.
    const [viaHttp, [viaFetch, fetched]] = await Promise.all([
      send(origin, '/map/stream?mapping=slow&concurrency=1', body),
      fetch(`${origin}/map/stream?mapping=slow&concurrency=1`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body }).then(async (response) => [response, await response.text()] as const),
    ])
    t.strictSame(viaHttp.lines, [1, 2, 3].map((v) => ({ v, valid: true, errors: [] })), 'node:http reads every line intact')
    t.equal(viaFetch.status, 200)
    t.equal(fetched, [1, 2, 3].map((v) => `${JSON.stringify({ v, valid: true, errors: [] })}\n`).join(''), 'fetch reads every byte intact')
    t.equal(calls, 6)
  })

  t.test('through inject (no socket to end or probe): a stream that goes idle still ends with its last line', async (t) => {
    // Line 1 is answered within the idle timeout even on a machine busy with the suite (at 200 ms
    // it once was not, and the stream ended naming line 1); line 2 waits three times as long.
    const wait: Plugin = async (_options, value) => {
      if (value === 2) await pause(3000)
      return value
    }
    const app = await serve(t, {
      mappings: [{ $id: 'wait', mapping: { '/v': { source: '/v', wait: {} } } }],
      extensions: { plugins: { wait } },
      options: { underPressure: false, isolation: false, stream: { idleTimeout: 1000 } },
    })
    const response = await app.inject({ method: 'POST', url: '/map/stream?mapping=wait&concurrency=1', headers: { 'content-type': 'application/x-ndjson' }, payload: '{"v":1}\n{"v":2}\n{"v":3}\n' })
    t.equal(response.statusCode, 200)
    const answered = response.body.trim().split('\n').map((line) => JSON.parse(line))
    t.strictSame(answered[0], { v: 1, valid: true, errors: [] })
    t.match(answered[1], { line: 2, status: 408, error: { code: 'StreamIdle' } }, 'line 2 was still waiting: the last line names it')
    t.equal(answered.length, 2)
  })
})
