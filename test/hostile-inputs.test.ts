// Hostile inputs, table-driven, through real listening servers on 127.0.0.1: each row is one attack
// (a pathological pattern, a budget bomb, a deep body, a forged log line, a leaked token, a
// server-side request to a private address, a slow client, an upstream bomb) and the answer it gets
// today. Every row checks the status, the error body `{ code, message, ..., requestId }` with
// `requestId` equal to the X-Request-Id header, and that its server still answers GET /health with
// 200 afterwards; the last test asks every server once more after all the rows have run.
//
// Startup attacks (a FIFO as MAPPINGS, a module whose top-level await never settles, …) are
// covered by test/startup-hangs.test.ts and are not repeated here.
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { stockExtensions } from '../extensions/stock.js'
import { buildServer, type BuildConfig } from '../server.js'
import { ECHO, GENERATED_ID, upstream, type Upstream } from './http-support.js'
import { open, parseResponse, rawExchange, within } from './transport-support.js'
import { capturedLog } from './log-support.js'

/** One answer as read off the wire: its status, X-Request-Id header and body text. */
interface Answer {
  readonly status: number
  readonly requestId: string | undefined
  readonly text: string
}

/** What a row expects of its answer. */
interface Expectation {
  readonly status: number
  /** The error body's code (every non-2xx answer must carry the error body). */
  readonly code?: string
  /** A slow-client row may find its connection closed instead of answered. */
  readonly orClosed?: boolean
  /** Row-specific checks on the parsed body (and whatever else the row observed). */
  readonly check?: (t: Test, body: any) => void
}

interface Outcome {
  /** The answer, or 'closed' when the server closed the connection without one. */
  readonly answer: Answer | 'closed'
  readonly expect: Expectation
}

interface Ctx {
  readonly t: Test
  readonly app: FastifyInstance
  readonly origin: string
  readonly port: number
  /** POST a JSON value (or raw text, sent as it is) with fetch. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Answer>
}

interface Row {
  readonly name: string
  /** The server the row runs against (one of SERVERS; `default` unless told). */
  readonly server?: ServerName
  run(ctx: Ctx): Promise<Outcome>
}

/** A row's whole bound: none of them should come anywhere near it (a bound, not a timing claim). */
const ROW_BOUND_MS = 15000
/**
 * The bound on one pattern row's answer. A backtracking engine would take about ten seconds on row
 * 1a and minutes on row 1b; the linear engine answers in milliseconds. The server runs in this
 * process, so a backtracking match would block this timer too: it would fire, and fail the row,
 * as soon as the match let go of the event loop.
 */
const PATTERN_BOUND_MS = 5000

// ---------------------------------------------------------------------------------------------
// Documents and helpers

const EXPLICIT = { logging: { level: 'silent' }, map: { explicit: true } } as const

const EMAIL = { $id: 'email', mapping: { '/e': { source: '/s', pattern: '^\\S+@\\S+\\.\\S+$' } } }
/** Recursive through its input: one level of `c` per level of the input. */
const NODE = { $id: 'node', mapping: { '/v': '/v', '/c': { source: '/c', mapping: 'node' } } }
const WORD = { $id: 'word', mapping: { '/w': { source: '/s', pattern: '^[a-z]+$' } } }

/** A registered mapping fetching `origin/x` with the stock `request` plugin. */
const fetching = (id: string, origin: string) => ({ $id: id, mapping: { '/d': { request: { origin, pathname: '/x' } } } })

/** A mapping document nesting `levels` mapping levels (two body levels each). */
function deepDocument(levels: number): unknown {
  let deep: unknown = { '/x': '/y' }
  for (let level = 0; level < levels; level++) deep = { '/x': { mapping: deep } }
  return { mapping: deep }
}

/** An input nesting `levels` objects through `c`. */
function chain(levels: number): unknown {
  let value: Record<string, unknown> = { v: levels }
  for (let level = levels - 1; level >= 0; level--) value = { v: level, c: value }
  return value
}

const stdoutLog = capturedLog('debug')
const traceLog = capturedLog('trace')
const xmlLog = capturedLog('error')

/** The upstreams some servers fetch from; set when those servers are built. */
const upstreams: { canary?: Upstream; xml?: Upstream } = {}

/** An XML body of `<a>` elements nested XML_DEPTH deep (1.4 MB, within the 10 MiB response cap). */
const XML_DEPTH = 200_000
const deepXml = `<?xml version="1.0"?>${'<a>'.repeat(XML_DEPTH)}${'</a>'.repeat(XML_DEPTH)}`

const BEARER_SECRET = 'secret-token-' + 'k'.repeat(24) + '-do-not-log'

// ---------------------------------------------------------------------------------------------
// The servers, built once each (on first use) and closed when the whole file ends.

const SERVERS = {
  /** Explicit documents on; the documents the rows register. */
  default: async (): Promise<BuildConfig> => ({ mappings: [ECHO, EMAIL, NODE], options: EXPLICIT }),
  /** A small patternInput budget for registered mappings. */
  patternInput: async (): Promise<BuildConfig> => ({ mappings: [WORD], options: { ...EXPLICIT, limits: { patternInput: 1000 } } }),
  /** `stdout` allowed in explicit documents; the log captured at debug level. */
  stdout: async (): Promise<BuildConfig> => ({ logger: stdoutLog.logger, options: { map: { explicit: { stdout: true } } } }),
  /** The log captured at trace level. */
  trace: async (): Promise<BuildConfig> => ({ mappings: [ECHO], logger: traceLog.logger, options: EXPLICIT }),
  /** Authentication on. */
  auth: async (): Promise<BuildConfig> => ({ mappings: [ECHO], options: { logging: { level: 'silent' }, auth: { secret: 'x'.repeat(40) } } }),
  /** The stock request plugin as shipped (private destinations refused, nothing allowed). */
  ssrf: async (top: Test): Promise<BuildConfig> => {
    const canary = await upstream(top, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"reached":true}')
    })
    upstreams.canary = canary
    const port = new URL(canary.origin).port
    return {
      mappings: [
        fetching('fetch', canary.origin),
        fetching('fetch-localhost', `http://localhost:${port}`),
        fetching('fetch-v6-loopback', `http://[::1]:${port}`),
        fetching('fetch-short', `http://127.1:${port}`),
        fetching('fetch-decimal', `http://2130706433:${port}`),
        fetching('fetch-mapped', `http://[::ffff:127.0.0.1]:${port}`),
      ],
      // Explicitly the stock surface with no allowed hosts, whatever this process's environment says.
      extensions: stockExtensions({}),
      options: { logging: { level: 'silent' } },
    }
  },
  /** Short transport timeouts (short enough that the slow-client row waits half a second, not seconds). */
  slow: async (): Promise<BuildConfig> => ({ mappings: [ECHO], options: { logging: { level: 'silent' }, server: { headersTimeout: 250, requestTimeout: 500 } } }),
  /** The stock request plugin allowed to reach a local upstream answering a deeply nested XML body. */
  xml: async (top: Test): Promise<BuildConfig> => {
    const xml = await upstream(top, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/xml' })
      res.end(deepXml)
    })
    upstreams.xml = xml
    return { mappings: [fetching('fetch', xml.origin)], extensions: stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' }), logger: xmlLog.logger }
  },
} satisfies Record<string, (top: Test) => Promise<BuildConfig>>

type ServerName = keyof typeof SERVERS

const built = new Map<ServerName, Promise<FastifyInstance>>()

function serverFor(name: ServerName): Promise<FastifyInstance> {
  let app = built.get(name)
  if (app === undefined) {
    app = (async () => {
      const build = await SERVERS[name](t)
      const { options = {}, ...rest } = build
      const made = await buildServer({ ...rest, options: { logging: { level: 'silent' }, ...options } })
      t.teardown(() => made.close())
      await made.listen({ port: 0, host: '127.0.0.1' })
      return made
    })()
    built.set(name, app)
  }
  return app
}

async function answerOf(response: Response): Promise<Answer> {
  return { status: response.status, requestId: response.headers.get('x-request-id') ?? undefined, text: await response.text() }
}

function contextFor(t: Test, app: FastifyInstance): Ctx {
  const port = (app.server.address() as AddressInfo).port
  const origin = `http://127.0.0.1:${port}`
  return {
    t,
    app,
    origin,
    port,
    async post(path, body, headers = {}) {
      const text = typeof body === 'string' ? body : JSON.stringify(body)
      return answerOf(await fetch(`${origin}${path}`, { method: 'POST', body: text, headers: { 'content-type': 'application/json', ...headers } }))
    },
  }
}

async function health(app: FastifyInstance): Promise<number> {
  const port = (app.server.address() as AddressInfo).port
  return (await fetch(`http://127.0.0.1:${port}/health`)).status
}

/** The answer of a raw exchange, as the rows compare it. */
function fromRaw(parsed: { status: number; headers: Record<string, string>; body: string }): Answer {
  return { status: parsed.status, requestId: parsed.headers['x-request-id'], text: parsed.body }
}

const firstError = (body: any): any => body?.report?.errors?.[0]

/** A row's outcome: its answer, the status it must have, the error code its body must carry, and more checks. */
function expecting(answer: Answer | 'closed', status: number, code?: string, check?: Expectation['check']): Outcome {
  return { answer, expect: { status, ...(code === undefined ? {} : { code }), ...(check === undefined ? {} : { check }) } }
}

// ---------------------------------------------------------------------------------------------
// The table

const rows: Row[] = [
  // 1. Patterns: every accepted pattern runs on V8's linear-time engine.
  {
    name: '1a ReDoS ^(a|a)*$ on 30 a and "!" (explicit)',
    async run({ post }) {
      const answer = await within('the pattern answer', PATTERN_BOUND_MS, post('/map', { mapping: { mapping: { '/r': { source: '/s', pattern: '^(a|a)*$' } } }, input: { s: 'a'.repeat(30) + '!' } }))
      return expecting(answer, 200, undefined, (t, body) => {
        t.equal(body.valid, false)
        t.equal(body.errors[0].message, 'must match pattern')
      })
    },
  },
  {
    name: '1b a*a*…a*b (12 stars) on 5000 a (explicit)',
    async run({ post }) {
      const answer = await within('the pattern answer', PATTERN_BOUND_MS, post('/map', { mapping: { mapping: { '/r': { source: '/s', pattern: 'a*'.repeat(12) + 'b' } } }, input: { s: 'a'.repeat(5000) } }))
      return expecting(answer, 200, undefined, (t, body) => {
        t.equal(body.valid, false)
        t.equal(body.errors[0].message, 'must match pattern')
      })
    },
  },
  {
    name: '1c registered e-mail pattern on 8 KiB of a and "@"',
    async run({ post }) {
      const answer = await within('the pattern answer', PATTERN_BOUND_MS, post('/map', { mapping: 'email', input: { s: 'a'.repeat(8192) + '@' } }))
      return expecting(answer, 200, undefined, (t, body) => {
        t.equal(body.valid, false)
        t.equal(body.errors[0].message, 'must match pattern')
      })
    },
  },
  {
    name: '1d backreference (a)\\1 (explicit)',
    async run({ post }) {
      const answer = await post('/map', { mapping: { mapping: { '/r': { source: '/s', pattern: '(a)\\1' } } }, input: { s: 'aa' } })
      return expecting(answer, 422, 'InvalidMappingDocument', (t, body) => {
        t.equal(firstError(body).rule, 'KW-pattern-1')
        t.equal(firstError(body).pointer, '/mapping/~1r/pattern')
      })
    },
  },
  {
    name: '1e registered pattern on a string past limits.patternInput (1000)',
    server: 'patternInput',
    async run({ post }) {
      const answer = await post('/map', { mapping: 'word', input: { s: 'a'.repeat(1001) } })
      return expecting(answer, 422, 'BudgetExceeded', (t, body) => {
        t.equal(body.budget, 'patternInput')
        t.equal(body.limit, 1000)
        t.equal(body.used, 1001)
        t.equal(body.mapping, 'word')
      })
    },
  },
  // 2.
  {
    name: '2 random: 300000000 (explicit)',
    async run({ post }) {
      const answer = await post('/map', { mapping: { mapping: { '/r': { source: '/a', random: 300_000_000 } } }, input: { a: [1, 2, 3] } })
      return expecting(answer, 422, 'InvalidMappingDocument', (t, body) => t.match(firstError(body), { rule: 'KW-random-1', message: 'random must not exceed 10000', pointer: '/mapping/~1r/random' }))
    },
  },
  // 3.
  {
    name: '3 output DAG: 30 doublings of a 1000-character constant (explicit)',
    async run({ post }) {
      const mapping: Record<string, unknown> = { '/o0': { constant: 'x'.repeat(1000) } }
      for (let i = 1; i <= 30; i++) mapping[`/o${i}`] = { all: [{ output: '/' }, { output: '/' }] }
      const answer = await post('/map', { mapping: { mapping }, input: {} })
      return { answer, expect: { status: 422, code: 'BudgetExceeded', check: (t, body) => t.equal(body.budget, 'outputBytes') } }
    },
  },
  // 4. Deep bodies are refused before they are parsed.
  {
    name: '4a body of 500,000 [ then 500,000 ]',
    async run({ post }) {
      const answer = await post('/map', '['.repeat(500_000) + ']'.repeat(500_000))
      return { answer, expect: { status: 400, code: 'BadRequest', check: (t, body) => t.equal(body.message, 'Body must not nest deeper than 512 levels') } }
    },
  },
  {
    name: '4b {"mapping":"echo","input": 600 nested arrays}',
    async run({ post }) {
      const answer = await post('/map', `{"mapping":"echo","input":${'['.repeat(600)}${']'.repeat(600)}}`)
      return { answer, expect: { status: 400, code: 'BadRequest', check: (t, body) => t.equal(body.message, 'Body must not nest deeper than 512 levels') } }
    },
  },
  // 5. Depth: every bound answers 4xx.
  {
    name: '5a /validate, a document 150 mapping levels deep',
    async run({ post }) {
      const answer = await post('/validate', { mapping: deepDocument(150) })
      return expecting(answer, 200, undefined, (t, body) => {
        t.equal(body.valid, false)
        t.equal(body.errors[0].rule, 'DOC-6')
      })
    },
  },
  {
    name: '5b /map, a document 150 mapping levels deep (explicit)',
    async run({ post }) {
      const answer = await post('/map', { mapping: deepDocument(150), input: {} })
      return expecting(answer, 422, 'InvalidMappingDocument', (t, body) => t.match(firstError(body), { rule: 'DOC-6', message: 'mapping nesting exceeds the maximum depth of 100' }))
    },
  },
  {
    name: '5c /map, a document 5,000 mapping levels deep (explicit)',
    async run({ post }) {
      // Written as text: the document is too deep for this process's own JSON.stringify.
      const text = `{"mapping":{"mapping":${'{"/x":{"mapping":'.repeat(5000)}{"/x":"/y"}${'}}'.repeat(5000)}},"input":{}}`
      const answer = await post('/map', text)
      return { answer, expect: { status: 400, code: 'BadRequest', check: (t, body) => t.equal(body.message, 'Body must not nest deeper than 512 levels') } }
    },
  },
  {
    name: '5d $ref self-cycle (explicit)',
    async run({ post }) {
      const loop = { mappings: { loop: { $id: 'loop', mapping: { '/a': { $ref: 'loop' } } } } }
      const validated = await post('/validate', { mapping: loop })
      const answer = await post('/map', { mapping: loop, input: {} })
      return expecting(answer, 422, 'BudgetExceeded', (t, body) => {
        // Validation does not see the cycle today: the explicit depth budget stops it.
        t.strictSame(JSON.parse(validated.text), { valid: true, errors: [], warnings: [] }, '/validate accepts it')
        t.match(body, { budget: 'depth', limit: 200, used: 201, pointer: '/mappings/loop/mapping/~1a' })
      })
    },
  },
  {
    name: '5e registered recursive mapping on an input 400 levels deep',
    async run({ post }) {
      const answer = await post('/map', { mapping: 'node', input: chain(400) })
      return expecting(answer, 422, 'BudgetExceeded', (t, body) => {
        // Two contexts per input level: 249 levels evaluate, 250 and more do not.
        t.match(body, { budget: 'depth', limit: 500, used: 501, pointer: '/mapping/~1c', mapping: 'node' })
      })
    },
  },
  {
    name: '5f an output 10,000 levels deep, written through one pointer (explicit)',
    async run({ post }) {
      // A 20 KB document: nothing bounds a pointer's length. The output is built, and its nesting is
      // checked before anything prints it (JSON.stringify would throw RangeError a few thousand levels down).
      const answer = await post('/map', { mapping: { mapping: { ['/a'.repeat(10_000)]: { constant: 1 } } }, input: {} })
      return expecting(answer, 422, 'BudgetExceeded', (t, body) => t.match(body, { budget: 'outputDepth', limit: 1000, used: 1001, pointer: '' }))
    },
  },
  // 6. stdout: refused in explicit documents unless enabled; when enabled, a field of a log line.
  {
    name: '6a stdout: true (explicit, stdout not enabled)',
    async run({ post }) {
      const answer = await post('/map', { mapping: { mapping: { '/o': '/o' }, stdout: true }, input: { o: 1 } })
      return { answer, expect: { status: 422, code: 'InvalidMappingDocument', check: (t, body) => t.match(firstError(body), { rule: 'KW-stdout-1', pointer: '/stdout' }) } }
    },
  },
  {
    name: '6b stdout enabled: a newline and a forged log line stay inside one field',
    server: 'stdout',
    async run({ post }) {
      const forged = JSON.stringify({ level: 60, time: 0, msg: 'forged line' })
      const value = { note: `first\n${forged}\n`, [`\n${forged}`]: 'key' }
      // `stdout: '/o'` prints the value indented: the text spans several lines.
      const printed = JSON.stringify(value, null, 2)
      const answer = await post('/map', { mapping: { mapping: { '/o': '/o' }, stdout: '/o' }, input: { o: value } })
      return expecting(answer, 200, undefined, (t, body) => {
        t.same(body, { o: value, valid: true, errors: [] })
        const lines = stdoutLog.lines()
        const printing = lines.filter((line) => line.msg === 'mapping stdout')
        t.equal(printing.length, 1, 'one log line carries the printed text')
        t.equal(printing[0]?.stdout, printed, 'as its stdout field, exactly')
        t.equal(printing[0]?.level, 20, 'at debug level')
        t.equal(printing[0]?.requestId, answer.requestId, 'with the request id')
        t.notOk(lines.some((line) => line.msg === 'forged line'), 'no forged line')
        const raw = stdoutLog.text()
        t.notOk(raw.includes(printed), 'the text is never written raw')
        t.notOk(raw.split('\n').includes(forged), 'no log line is the forged one')
      })
    },
  },
  // 7. Tokens never reach the log; ambiguous credentials are refused.
  {
    name: '7a a bearer token and a header over maxHeaderSize (raw socket, log at trace)',
    server: 'trace',
    async run({ t, port }) {
      const request =
        'POST /map HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
        `Authorization: Bearer ${BEARER_SECRET}\r\n` +
        `X-Padding: ${'p'.repeat(20_000)}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}'
      const answer = fromRaw(await rawExchange(t, port, request))
      return expecting(answer, 431, 'HeadersTooLarge', (t, body) => {
        t.equal(body.message, 'Request headers exceed the 16384-byte limit')
        const lines = traceLog.lines()
        t.ok(
          lines.some((line) => line.msg === 'client error' && line.requestId === body.requestId && line.status === 431),
          'the refusal was logged (the capture works)'
        )
        t.notOk(traceLog.text().includes(BEARER_SECRET), 'the token is nowhere in the log')
        t.notOk(traceLog.text().includes('p'.repeat(100)), 'nor the oversized header')
      })
    },
  },
  {
    name: '7b two Authorization headers with auth on (raw socket)',
    server: 'auth',
    async run({ t, port }) {
      const body = JSON.stringify({ mapping: 'echo', input: {} })
      const request =
        'POST /map HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
        `Authorization: Bearer ${BEARER_SECRET}\r\nAuthorization: Bearer another-${BEARER_SECRET}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`
      const answer = fromRaw(await rawExchange(t, port, request))
      return { answer, expect: { status: 400, code: 'BadRequest', check: (t, body) => t.equal(body.message, 'Only one Authorization header is allowed') } }
    },
  },
  // 8. Server-side requests to private destinations, and loops.
  ...(
    [
      ['8a', 'fetch', 'http://127.0.0.1:<port>'],
      ['8b', 'fetch-localhost', 'http://localhost:<port>'],
      ['8c', 'fetch-v6-loopback', 'http://[::1]:<port>'],
      ['8d', 'fetch-short', 'http://127.1:<port>'],
      ['8e', 'fetch-decimal', 'http://2130706433:<port>'],
      ['8f', 'fetch-mapped', 'http://[::ffff:127.0.0.1]:<port>'],
    ] as const
  ).map(
    ([label, id, origin]): Row => ({
      name: `${label} SSRF: registered request to ${origin} (stock plugin)`,
      server: 'ssrf',
      async run({ post }) {
        const answer = await post('/map', { mapping: id, input: {} })
        return expecting(answer, 422, 'DestinationRefused', (t, body) => {
          t.match(body.message, /^Refused destination \S+: (it resolves to 127\.0\.0\.1, )?a private network address \(denyPrivateNetworks\)$/)
          t.strictSame(upstreams.canary?.hits, [], 'the upstream saw no request')
        })
      },
    })
  ),
  {
    name: '8g a request carrying x-mapper-hop: 1',
    async run({ post }) {
      const answer = await post('/map', { mapping: 'echo', input: {} }, { 'x-mapper-hop': '1' })
      return { answer, expect: { status: 403, code: 'Forbidden', check: (t, body) => t.equal(body.message, 'Requests made by a mapping of this service are refused (loop protection)') } }
    },
  },
  // 9.
  {
    name: '9 a POST body at one byte every 150 ms (headersTimeout 250, requestTimeout 500)',
    server: 'slow',
    async run({ t, port }) {
      const body = JSON.stringify({ mapping: 'echo', input: { pad: 'x'.repeat(60) } })
      const connection = await open(t, port)
      connection.send(`POST /map HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`)
      const sent = connection.trickle(body, 150)
      await within('the slow connection closed', 10000, connection.ended)
      const bytes = await sent
      const parsed = parseResponse(connection.received())
      return {
        answer: parsed === undefined ? 'closed' : fromRaw(parsed),
        expect: {
          status: 408,
          code: 'RequestTimeout',
          orClosed: true,
          check: (t) => t.ok(bytes < body.length, `cut off after ${bytes} of ${body.length} bytes`),
        },
      }
    },
  },
  // 10.
  {
    name: '10 30 distinct explicit documents of ~100 KB each',
    async run({ post }) {
      const before = process.memoryUsage().rss
      const statuses: number[] = []
      const sizes: number[] = []
      let last: Answer | undefined
      for (let d = 0; d < 30; d++) {
        // ~17 bytes a pairing: 6000 of them make ~100 KB of document text. Written as the text
        // JSON.stringify gives an object of these pairings (nothing in them needs escaping), in a
        // quarter of the time a 6000-key object takes to build and print.
        const pairings = Array.from({ length: 6000 }, (_, p) => `"/d${d}p${p}":"/v${p % 7}"`)
        const text = `{"mapping":{"mapping":{${pairings.join(',')}}},"input":{"v0":0,"v1":1}}`
        sizes.push(text.length)
        last = await post('/map', text)
        statuses.push(last.status)
      }
      const grown = process.memoryUsage().rss - before
      return {
        answer: last!,
        expect: {
          status: 200,
          check: (t, body) => {
            t.strictSame(statuses, Array(30).fill(200), 'every document answered 200')
            t.ok(sizes.every((size) => size > 90_000 && size < 110_000), `bodies of ${Math.min(...sizes)} to ${Math.max(...sizes)} bytes`)
            t.match(body, { d29p0: 0, d29p1: 1, d29p5999: 0, valid: true }, 'the last document was evaluated')
            // The server is in this process: its explicit cache (1 MiB of documents by default, about
            // ten of these) holds compiled plans of 70 to 140 times their text; the rest is garbage.
            t.ok(grown < 300 * 1024 * 1024, `RSS grew by ${Math.round(grown / 1048576)} MiB (bound 300 MiB)`)
          },
        },
      }
    },
  },
  // 11.
  {
    name: `11 upstream XML nested ${XML_DEPTH} levels (REQUEST_ALLOW_HOSTS=127.0.0.1)`,
    server: 'xml',
    async run({ post }) {
      const answer = await post('/map', { mapping: 'fetch', input: {} })
      return expecting(answer, 500, 'InternalError', (t, body) => {
        t.equal(body.message, 'An unexpected error occurred', 'the detail stays in the log')
        t.strictSame(upstreams.xml?.hits, ['GET /x'], 'the upstream was asked once')
        const failed = xmlLog.lines().filter((line) => line.msg === 'request failed' && line.requestId === answer.requestId)
        t.equal(failed.length, 1, 'one error line for the request')
        t.match(failed[0]?.err, { code: 'E_RESPONSE_TOO_DEEP', message: /XML in the response from .* nests deeper than 256 levels/ }, 'refused by the depth scan, before any parser')
      })
    },
  },
  // 12. Startup rows: see test/startup-hangs.test.ts.
]

// ---------------------------------------------------------------------------------------------

t.setTimeout(180000)

/** What each row got, for the summary. */
const summary: string[] = []

for (const row of rows) {
  t.test(row.name, async (t) => {
    const app = await serverFor(row.server ?? 'default')
    const { answer, expect } = await within(row.name, ROW_BOUND_MS, row.run(contextFor(t, app)))
    if (answer === 'closed') {
      summary.push(`${row.name}: connection closed without an answer`)
      t.ok(expect.orClosed, 'closed without an answer, which this row allows')
    } else {
      let body: any
      t.doesNotThrow(() => {
        body = JSON.parse(answer.text)
      }, 'the body is one JSON value')
      summary.push(`${row.name}: ${answer.status} ${body?.code ?? (body?.valid === undefined ? '' : `valid: ${body.valid}`)}`)
      t.equal(answer.status, expect.status, 'status')
      t.match(answer.requestId, GENERATED_ID, 'X-Request-Id')
      if (answer.status >= 400) {
        const keys = Object.keys(body ?? {})
        t.equal(keys[0], 'code', 'the error body opens with code')
        t.equal(keys[1], 'message', 'then message')
        t.equal(keys.at(-1), 'requestId', 'and closes with requestId')
        t.equal(typeof body.message, 'string')
        t.equal(body.requestId, answer.requestId, 'requestId is the X-Request-Id header')
      }
      if (expect.code !== undefined) t.equal(body?.code, expect.code, 'code')
      expect.check?.(t, body)
    }
    t.equal(await within('GET /health', 10000, health(app)), 200, 'the server still answers GET /health')
  })
}

t.test('the process still answers', async (t) => {
  t.ok(built.size > 1, 'several servers were attacked')
  for (const [name, app] of built) t.equal(await within(`GET /health (${name})`, 10000, health(await app)), 200, `${name} server`)
  t.comment(`actual answers:\n${summary.join('\n')}`)
})
