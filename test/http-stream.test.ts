// POST /map/stream against a real listening server on 127.0.0.1, bodies sent from generators so no
// body is ever held whole: 200,000 records answered in order with bounded memory, a malformed line
// and a line over the per-line limit each answered by an error line naming it while the rest go
// on, answers arriving before the upload ends, async mappings answered in input order with
// bounded concurrency, a client that leaves, and the gates /map has (auth, claims, the explicit
// form, rate limiting) applied to the stream as a whole. Load shedding is off in these servers: a
// loaded machine's event-loop delay must not answer 503 for what these tests are about.
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import type { Plugin } from '../engine/index.js'
import { bearer, ECHO, originOf, SECRET, serve, STRICT, type Teardown } from './http-support.js'
import type { BuildConfig } from '../server.js'

/** A listening server (logging silenced, load shedding off) and its origin. */
async function listening(t: Teardown, build: BuildConfig = {}): Promise<{ app: FastifyInstance; origin: string }> {
  const app = await serve(t, { ...build, options: { underPressure: false, ...build.options } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, origin: originOf(app) }
}

/** The default options (ECHO registered): the tests that need nothing else share it. */
const plain = await listening(t)
/** A mapping whose each line fans out as far as its input says. */
const EACH = { $id: 'each', mapping: { '/out': { source: '/items', each: { '/v': '/v' } } } }
/**
 * Worker threads for registered mappings (with a fanOut budget of 10) and for explicit documents:
 * the tests of either share it, and its worker pool (seconds to start on a loaded machine). One
 * thread: a stream's concurrent lines wait for it in turn, and each thread started costs a second
 * or more of CPU.
 */
const isolated = await listening(t, { mappings: [ECHO, EACH], options: { limits: { fanOut: 10 }, isolation: { registered: true, threads: 1 }, map: { explicit: true } } })

/** Calls `onLine` with each line of a response as it arrives (nothing is kept). */
function eachLine(response: IncomingMessage, onLine: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let rest = ''
    response.setEncoding('utf8')
    response.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n')
      rest = lines.pop()!
      for (const line of lines) onLine(line)
    })
    response.on('end', () => {
      if (rest !== '') onLine(rest)
      resolve()
    })
    response.on('error', reject)
  })
}

/** POST a body read from `body` (a stream, never a whole string); resolves with the response as soon as it starts. */
function post(origin: string, path: string, body: Readable, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson', ...headers } }, resolve)
    request.on('error', reject)
    body.pipe(request)
  })
}

/** POST a small body and read the whole answer. */
async function send(origin: string, path: string, text: string, headers: Record<string, string> = {}): Promise<{ status: number; lines: any[]; headers: IncomingMessage['headers'] }> {
  const response = await post(origin, path, Readable.from([text]), headers)
  const lines: any[] = []
  await eachLine(response, (line) => lines.push(JSON.parse(line)))
  return { status: response.statusCode!, lines, headers: response.headers }
}

const COUNT = 200_000
const MALFORMED = 70_001
const TOO_LONG = 140_001
const LIMIT = 4096
/** Makes each record about 200 bytes, so the 200,000 weigh about 40 MB each way. */
const PADDING = 'p'.repeat(160)

/** The body of the large stream, 1,000 lines per chunk; line n (from 1) is record n - 1. */
async function * records(): AsyncGenerator<string> {
  let chunk = ''
  for (let i = 0; i < COUNT; i++) {
    const number = i + 1
    if (number === MALFORMED) chunk += '{"i": 70000, oops}\n'
    else if (number === TOO_LONG) chunk += `{"i":${i},"pad":"${'x'.repeat(LIMIT)}"}\n`
    else chunk += `{"i":${i},"pad":"${PADDING}"}\n`
    if (number % 1000 === 0) {
      yield chunk
      chunk = ''
    }
  }
  if (chunk !== '') yield chunk
}

t.test('200,000 records are answered in order, a bad line and a line over the limit each by an error line, in bounded memory', async (t) => {
  const { origin } = await listening(t, {
    mappings: [{ $id: 'rec', mapping: { '/n': '/i', '/size': { source: '/pad', transform: 'length' } } }],
    extensions: { transformers: { length: (value: unknown) => (typeof value === 'string' ? value.length : null) } },
    options: { maxBodyBytes: LIMIT, isolation: false, server: { requestTimeout: 120_000 } },
  })
  globalThis.gc?.()
  const before = process.memoryUsage().rss
  let peak = before
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 25)
  t.teardown(() => clearInterval(sampler))

  const response = await post(origin, '/map/stream?mapping=rec', Readable.from(records()))
  t.equal(response.statusCode, 200)
  t.equal(response.headers['content-type'], 'application/x-ndjson; charset=utf-8')
  t.equal(response.headers['cache-control'], 'no-store')
  const requestId = response.headers['x-request-id']
  let answers = 0
  let outOfOrder = 0
  const errors: any[] = []
  const spots: Record<number, unknown> = {}
  await eachLine(response, (text) => {
    answers++
    const answer = JSON.parse(text)
    if ('error' in answer) {
      errors.push(answer)
      return
    }
    // Answer k (from 1) is line k, record k - 1.
    if (answer.n !== answers - 1) outOfOrder++
    if (answers === 1 || answers === 100_000 || answers === COUNT) spots[answers] = answer
  })
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage().rss)

  t.equal(answers, COUNT, 'one answer per line')
  t.equal(outOfOrder, 0, 'every envelope in its line\'s place')
  t.strictSame(spots, {
    1: { n: 0, size: 160, valid: true, errors: [] },
    100000: { n: 99_999, size: 160, valid: true, errors: [] },
    [COUNT]: { n: COUNT - 1, size: 160, valid: true, errors: [] },
  })
  t.equal(errors.length, 2)
  t.match(errors[0], { line: MALFORMED, status: 400, error: { code: 'BadRequest', message: `Line ${MALFORMED} must be valid JSON (column 14): unexpected "o"`, requestId } })
  t.match(errors[1], { line: TOO_LONG, status: 413, error: { code: 'PayloadTooLarge', message: `Line ${TOO_LONG} exceeds the ${LIMIT}-byte limit (${LIMIT + 21} bytes)`, requestId } })
  const grown = (peak - before) / 2 ** 20
  t.ok(grown < 150, `the process grew by ${grown.toFixed(1)} MB (at most 150) for about 40 MB each way`)
})

// The tests after the first run side by side (none counts what another does: each asserts on a
// server of its own, or on answers the shared ones give it alone), so their waits (an upload
// outlasting requestTimeout, a client that left, a worker thread starting) overlap. The first runs
// alone: it bounds the growth of the whole process's memory.
t.test('the other streams, side by side', { jobs: 11 }, async (t) => {
  t.test('answers start before the upload ends: the first lines are answered while the rest is unsent', async (t) => {
    const { origin } = plain
    const body = new Readable({ read() {} })
    body.push('{"a":1}\n{"a":2}\n\n{"a":3}\n')
    const response = await post(origin, '/map/stream?mapping=echo', body)
    t.equal(response.statusCode, 200)
    const seen: any[] = []
    let third: () => void
    const threeAnswered = new Promise<void>((resolve) => (third = resolve))
    const done = eachLine(response, (line) => {
      seen.push(JSON.parse(line))
      if (seen.length === 3) third()
    })
    await threeAnswered
    t.strictSame(seen.map((envelope) => envelope.echo), [{ a: 1 }, { a: 2 }, { a: 3 }], 'three answers (the empty line skipped) before the rest is sent')
    body.push('{"a":4}\r\n"last, with no newline"')
    body.push(null)
    await done
    t.strictSame(seen.slice(3).map((envelope) => envelope.echo), [{ a: 4 }, 'last, with no newline'])
  })

  t.test('a stream may upload for longer than server.requestTimeout; a /map body may not', async (t) => {
    // The upload (eight lines 50 ms apart) takes twice requestTimeout, which Node checks every 50 ms
    // here (a quarter of headersTimeout): a stream held to it would be cut off halfway. The idle
    // rule is given its own, long timeout (by default it is requestTimeout): this test is about
    // requestTimeout, and on a machine busy with the suite a gap between two lines may pass 200 ms.
    const { origin } = await listening(t, { options: { server: { requestTimeout: 200, headersTimeout: 200 }, stream: { idleTimeout: 30_000 } } })
    const body = Readable.from((async function * () {
      for (let i = 0; i < 8; i++) {
        yield `{"i":${i}}\n`
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })())
    const response = await post(origin, '/map/stream?mapping=echo', body)
    const answers: any[] = []
    await eachLine(response, (line) => answers.push(JSON.parse(line)))
    t.equal(response.statusCode, 200)
    t.strictSame(answers.map((answer) => answer.echo?.i ?? answer), [0, 1, 2, 3, 4, 5, 6, 7], 'every line answered after 0.4 s of upload')

    const slow = new Readable({ read() {} })
    slow.push('{"mapping":"echo",')
    const refused = await post(origin, '/map', slow, { 'content-type': 'application/json' })
    t.equal(refused.statusCode, 408)
    slow.destroy()
  })

  t.test('an async mapping runs lines concurrently (bounded) and answers in input order; a failing line is an error line', async (t) => {
    let inFlight = 0
    let most = 0
    const wait: Plugin = async (_options, value) => {
      inFlight++
      most = Math.max(most, inFlight)
      // Later lines finish first: the order of the answers is the stream's, not the plugins'.
      await new Promise((resolve) => setTimeout(resolve, 20 - ((value as number) % 10) * 2))
      inFlight--
      if (value === 13) throw new Error('thirteen')
      return value
    }
    const { origin } = await listening(t, {
      mappings: [{ $id: 'slow', mapping: { '/v': { source: '/v', wait: {} } } }],
      extensions: { plugins: { wait } },
      options: { isolation: false, errorDetail: 'full' },
    })
    const body = Array.from({ length: 40 }, (_, v) => `{"v":${v}}\n`).join('')
    const { status, lines } = await send(origin, '/map/stream?mapping=slow&concurrency=5', body)
    t.equal(status, 200)
    t.equal(lines.length, 40)
    t.strictSame(
      lines.map((line) => line.v ?? line.line),
      Array.from({ length: 40 }, (_, v) => (v === 13 ? 14 : v)),
      'in order; line 14 (v 13) is its error line'
    )
    t.match(lines[13], { line: 14, status: 500, error: { code: 'InternalError', message: 'thirteen' } })
    t.ok(most > 1 && most <= 5, `at most 5 in flight (${most})`)

    most = 0
    const serial = await send(origin, '/map/stream?mapping=slow&concurrency=1', '{"v":1}\n{"v":2}\n{"v":3}\n')
    t.strictSame(serial.lines.map((line) => line.v), [1, 2, 3])
    t.equal(most, 1, 'concurrency=1: one at a time')
    t.equal((await send(origin, '/map/stream?mapping=slow&concurrency=17', '')).status, 400, 'concurrency is at most 16')
  })

  t.test('each line is one evaluation on the mapping\'s own budgets: the line that passes one is a 422 line, inline and in worker threads', async (t) => {
    for (const isolation of [false, { registered: true }] as const) {
      const { origin } = isolation === false ? await listening(t, { mappings: [EACH], options: { limits: { fanOut: 10 }, isolation } }) : isolated
      const items = (n: number): string => JSON.stringify({ items: Array.from({ length: n }, (_, v) => ({ v })) })
      const { status, lines } = await send(origin, '/map/stream?mapping=each', `${items(2)}\n${items(50)}\n${items(3)}\n`)
      t.equal(status, 200)
      t.strictSame(lines[0], { out: [{ v: 0 }, { v: 1 }], valid: true, errors: [] })
      t.match(lines[1], { line: 2, status: 422, error: { code: 'BudgetExceeded', budget: 'fanOut', limit: 10 } })
      t.strictSame(lines[2], { out: [{ v: 0 }, { v: 1 }, { v: 2 }], valid: true, errors: [] }, `the next line has the whole budget again (isolation ${JSON.stringify(isolation)})`)
    }
  })

  t.test('a client that leaves stops the stream: no more lines are read or evaluated', async (t) => {
    let calls = 0
    const counted: Plugin = async (_options, value) => {
      calls++
      await new Promise((resolve) => setTimeout(resolve, 5))
      return value
    }
    const { origin } = await listening(t, {
      mappings: [{ $id: 'counted', mapping: { '/v': { source: '/v', counted: {} } } }],
      extensions: { plugins: { counted } },
      options: { isolation: false },
    })
    let sent = 0
    const body = Readable.from((async function * () {
      for (;;) {
        sent++
        yield `{"v":${sent}}\n`
        await new Promise((resolve) => setTimeout(resolve, 1))
      }
    })())
    const response = await post(origin, '/map/stream?mapping=counted&concurrency=2', body)
    await new Promise<void>((resolve) => {
      response.on('data', () => resolve())
    })
    response.destroy()
    body.destroy()
    await new Promise((resolve) => setTimeout(resolve, 100))
    const after = calls
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.ok(after > 0)
    t.equal(calls, after, `no evaluation after the client left (${after} made)`)
  })

  t.test('the stream is refused whole, before any answer, as /map would refuse it', async (t) => {
    // One server for both halves: map.invalidStatus changes only what a valid: false envelope answers.
    const { origin } = await listening(t, { mappings: [ECHO, STRICT], options: { map: { invalidStatus: 409 } } })
    const unknown = await send(origin, '/map/stream?mapping=nope', '{}\n')
    t.equal(unknown.status, 404)
    t.match(unknown.lines[0], { code: 'NotFound', message: 'No mapping registered as "nope"' })
    t.equal(unknown.headers['content-type'], 'application/json; charset=utf-8')
    const noHeader = await send(origin, '/map/stream', '{"a":1}\n')
    t.equal(noHeader.status, 400)
    t.match(noHeader.lines[0], { code: 'BadRequest', message: /^With no "mapping" in the query, the first line must be/ })
    t.equal((await send(origin, '/map/stream', '')).status, 400, 'an empty body names no mapping')
    const named = await send(origin, '/map/stream', '\n{"mapping":"echo"}\n{"a":1}\n')
    t.equal(named.status, 200, 'the first line may name a registered mapping')
    t.strictSame(named.lines, [{ echo: { a: 1 }, valid: true, errors: [] }])
    t.equal((await send(origin, '/map/stream?other=1', '')).status, 400, 'an unknown query member')

    // map.invalidStatus: a valid: false envelope is an error line with that status, as /map answers it.
    const promoted = await send(origin, '/map/stream?mapping=strict', '{"name":"ok"}\n{"name":5}\n')
    t.strictSame(promoted.lines[0], { name: 'ok', valid: true, errors: [] })
    t.match(promoted.lines[1], { line: 2, status: 409, error: { code: 'ValidationError', message: 'Mapping validation failed', errors: [{}] } })
  })

  t.test('the explicit form: a first line with the document, gated by map.explicit and its claims', async (t) => {
    const document = JSON.stringify({ mapping: { mapping: { '/y': '/x' } } })
    const off = plain
    const refused = await send(off.origin, '/map/stream', `${document}\n{"x":1}\n`)
    t.equal(refused.status, 403)
    t.match(refused.lines[0], { code: 'Forbidden', message: "The explicit mapping form is not enabled on this deployment: the option map.explicit turns this on (in OPTIONS, OPTIONS_FILE or the plugin's options)" })

    const on = isolated
    const ok = await send(on.origin, '/map/stream', `${document}\n{"x":1}\n{"x":2}\n`)
    t.equal(ok.status, 200)
    t.strictSame(ok.lines, [{ y: 1, valid: true, errors: [] }, { y: 2, valid: true, errors: [] }])
    const invalid = await send(on.origin, '/map/stream', `${JSON.stringify({ mapping: { mapping: { '/y': { source: 5 } } } })}\n{"x":1}\n`)
    t.equal(invalid.status, 422)
    t.match(invalid.lines[0], { code: 'InvalidMappingDocument', report: { valid: false } })

    // The gate is the subject: the admitted document runs inline (isolation: false), sparing a worker
    // pool of its own; the one above ran in worker threads.
    const gated = await listening(t, { options: { auth: { secret: SECRET }, map: { explicit: { claims: { role: 'author' } } }, isolation: false } })
    const caller = bearer({ sub: 'a', role: 'reader' })
    t.equal((await send(gated.origin, '/map/stream?mapping=echo', '{}\n', caller)).status, 200, 'registered: no explicit claims needed')
    const lacking = await send(gated.origin, '/map/stream', `${document}\n{"x":1}\n`, caller)
    t.equal(lacking.status, 403)
    t.match(lacking.lines[0], { code: 'Forbidden', message: 'Caller lacks the claims required for explicit mappings' })
    t.equal((await send(gated.origin, '/map/stream', `${document}\n{"x":1}\n`, bearer({ sub: 'b', role: 'author' }))).status, 200)
  })

  t.test('auth and claims: the same as /map, checked before the body is read', async (t) => {
    const { origin } = await listening(t, { options: { auth: { secret: SECRET }, map: { claims: { scope: 'map' } } } })
    const anonymous = await send(origin, '/map/stream?mapping=echo', '{}\n')
    t.equal(anonymous.status, 401)
    t.equal(anonymous.headers['www-authenticate'], 'Bearer')
    const lacking = await send(origin, '/map/stream?mapping=echo', '{}\n', bearer({ sub: 'a', scope: 'read' }))
    t.equal(lacking.status, 403)
    t.match(lacking.lines[0], { code: 'Forbidden', message: 'Caller lacks the claims required for /map/stream' })
    const allowed = await send(origin, '/map/stream?mapping=echo', '{"a":1}\n', bearer({ sub: 'a', scope: 'read map' }))
    t.equal(allowed.status, 200)
    t.strictSame(allowed.lines, [{ echo: { a: 1 }, valid: true, errors: [] }])
  })

  t.test('rate limiting: a stream takes one token, however many lines it carries', async (t) => {
    const { origin } = await listening(t, { options: { rateLimit: { max: 2, timeWindow: 60_000 } } })
    const many = Array.from({ length: 500 }, (_, i) => `{"i":${i}}\n`).join('')
    const first = await send(origin, '/map/stream?mapping=echo', many)
    t.equal(first.status, 200)
    t.equal(first.lines.length, 500)
    t.equal((await send(origin, '/map/stream?mapping=echo', many)).status, 200)
    const third = await send(origin, '/map/stream?mapping=echo', many)
    t.equal(third.status, 429)
    t.match(third.lines[0], { code: 'TooManyRequests' })
    t.ok(third.headers['retry-after'] !== undefined)
  })

  t.test('metrics: lines, error lines by code and bytes are counted; each line is an evaluation', async (t) => {
    const { origin } = await listening(t, { options: { maxBodyBytes: 64 } })
    const body = `{"a":1}\n{bad\n{"a":"${'x'.repeat(100)}"}\n{"a":2}\n`
    const { lines } = await send(origin, '/map/stream?mapping=echo', body)
    t.equal(lines.length, 4)
    const text = await (await fetch(`${origin}/metrics`)).text()
    const value = (series: string): number => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1])
    t.equal(value('mapper_stream_lines_total{mapping="echo",result="envelope"}'), 2)
    t.equal(value('mapper_stream_lines_total{mapping="echo",result="error"}'), 2)
    t.equal(value('mapper_stream_line_errors_total{mapping="echo",code="BadRequest"}'), 1)
    t.equal(value('mapper_stream_line_errors_total{mapping="echo",code="PayloadTooLarge"}'), 1)
    t.equal(value('mapper_stream_bytes_total{direction="in"}'), Buffer.byteLength(body))
    t.ok(value('mapper_stream_bytes_total{direction="out"}') > 0)
    t.equal(value('mapper_evaluations_total{mapping="echo",result="valid"}'), 2)
    t.equal(value('http_requests_total{method="POST",route="/map/stream",status="200"}'), 1)
  })

  t.test('/map is unchanged: JSON bodies, whatever the Content-Type', async (t) => {
    const { origin } = plain
    const response = await fetch(`${origin}/map`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: '{"mapping":"echo","input":1}' })
    t.equal(response.status, 200)
    t.strictSame(await response.json(), { echo: 1, valid: true, errors: [] })
  })
})
