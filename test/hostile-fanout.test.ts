// Fan-outs under attack, through real listening servers on 127.0.0.1 (issue 17, item 1). A
// synchronous throw beside a pending upstream call, a pluginCalls trip with a thousand calls in
// flight, a client that walks away: each used to leave a promise unobserved whose rejection exited
// the process. Every case checks the status and error body, that /health answered while the
// attack ran and after it, that the calls in flight were cancelled (their sockets closed at the
// upstream), and that no rejection went unhandled. The upstreams are local servers that never
// answer; nothing here leaves 127.0.0.1.
//
// The process keeps its crash-on-unhandled-rejection policy; this file listens for
// 'unhandledRejection' only to record what would have crashed it, and asserts that nothing was.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import type { Plugin } from '../engine/index.js'
import { createRequest } from '../extensions/request/index.js'
import { stockExtensions } from '../extensions/stock.js'
import { buildServer, type BuildConfig } from '../server.js'
import { upstream } from './http-support.js'
import { capturedLog } from './log-support.js'
import { recordUnhandled } from './unhandled-support.js'

const unhandled = recordUnhandled(t)

/** A bound on anything here that should take milliseconds (a bound, not a timing claim). */
const BOUND_MS = 5000

/**
 * The explicit time budget where a test waits it out: long enough that the explicit requests that
 * must fail on their own error (not the clock) do so on a loaded machine too.
 */
const EXPLICIT_TIME_MS = 1000

// The machine these tests share is busy: load shedding would answer 503 for reasons of its own.
const QUIET = { logging: { level: 'silent' }, underPressure: false } as const

interface Stalled {
  readonly origin: string
  /** Requests that reached the upstream. */
  readonly arrived: () => number
  /** Of those, the ones whose connection the service has since closed. */
  readonly closed: () => number
}

/** A local upstream that never answers, counting the requests that reach it and their closing. */
async function stalledUpstream(t: Test): Promise<Stalled> {
  let closed = 0
  const up = await upstream(t, (req: IncomingMessage) => {
    req.socket.once('close', () => closed++)
  })
  return { origin: up.origin, arrived: () => up.hits.length, closed: () => closed }
}

async function listening(t: Test, build: BuildConfig): Promise<{ app: FastifyInstance; origin: string }> {
  const app = await buildServer(build)
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` }
}

async function post(origin: string, body: unknown, init: RequestInit = {}): Promise<{ status: number; requestId: string | null; body: any }> {
  const response = await fetch(`${origin}/map`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string> | undefined) },
    body: JSON.stringify(body),
    signal: init.signal,
  })
  return { status: response.status, requestId: response.headers.get('x-request-id'), body: await response.json() }
}

async function health(origin: string): Promise<number> {
  return (await fetch(`${origin}/health`)).status
}

/** Resolves once `condition` holds, or after BOUND_MS; whether it held. */
async function eventually(condition: () => boolean): Promise<boolean> {
  const until = performance.now() + BOUND_MS
  while (!condition()) {
    if (performance.now() > until) return false
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return true
}

/** The upstreams of the registered fan-outs: each test has its own, so that it counts only its calls. */
const upstreams: { tripped?: Stalled; walkedAway?: Stalled } = {}

/**
 * One listening server for the explicit attacks and the registered fan-outs (one per test), the
 * stock surface allowed to reach 127.0.0.1: built on first use, closed when the file ends. A build
 * costs a few hundred milliseconds and its worker pool (explicit documents) a second or two more;
 * each test brings its own upstreams and leaves nothing in flight behind it.
 */
let sharedServer: Promise<string> | undefined
function served(): Promise<string> {
  sharedServer ??= (async () => {
    upstreams.tripped = await stalledUpstream(t)
    upstreams.walkedAway = await stalledUpstream(t)
    const answering = await upstream(t, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"ok":true}')
    })
    const fanOut = (id: string, request: Record<string, unknown>) => ({ $id: id, mapping: { '/r': { source: '/items', each: { '/x': { request } } } } })
    const mappings = [
      fanOut('fan-out', { origin: upstreams.tripped.origin, pathname: '/x' }),
      fanOut('fan-out-answered', { origin: answering.origin, pathname: '/x', pointer: '/json/ok' }),
      fanOut('fan-out-abandoned', { origin: upstreams.walkedAway.origin, pathname: '/x' }),
    ]
    return (
      await listening(t, {
        mappings,
        extensions: stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' }),
        options: { ...QUIET, map: { explicit: true }, limits: { explicit: { timeMs: EXPLICIT_TIME_MS } } },
      })
    ).origin
  })()
  return sharedServer
}

/** Run `attack` while asking /health; both answers. */
async function during<T>(origin: string, attack: Promise<T>): Promise<{ answer: T; healthDuring: number }> {
  const [answer, healthDuring] = await Promise.all([attack, health(origin)])
  return { answer, healthDuring }
}

t.test('the 226-byte explicit request: a synchronous throw beside a pending upstream call is 422, and the call is cancelled', async (t) => {
  const up = await stalledUpstream(t)
  const origin = await served()
  // The issue's body, its upstream moved from 192.0.2.1 to the stalled one here.
  const body = {
    mapping: { mapping: { '/r': { source: '/items', each: { '/y': '/s', '/y/z': { constant: 1 }, '/x': { source: '/u', request: { url: { source: '' } } } } } } },
    input: { items: [{ u: `${up.origin}/` }, { s: 'str' }] },
  }
  const { answer, healthDuring } = await during(origin, post(origin, body))
  t.equal(answer.status, 422)
  t.match(answer.body, { code: 'EvaluationError', message: "Cannot create property 'z' on string 'str'" })
  t.equal(answer.body.requestId, answer.requestId, 'the error body carries the request id')
  t.equal(healthDuring, 200, '/health answered while the attack ran')
  t.ok(await eventually(() => up.closed() === up.arrived()), `any upstream call that went out was cancelled (${up.arrived()} arrived, ${up.closed()} closed)`)
  t.equal(await health(origin), 200, '/health answers afterwards')
  // A call left unobserved would reject by the end of the time budget at the latest.
  await new Promise((resolve) => setTimeout(resolve, EXPLICIT_TIME_MS + 100))
  t.same(unhandled, [], 'no rejection went unhandled: the process lives')
})

t.test('a failure after a sibling\'s upstream call went out: 422, and that call\'s connection is closed at once', async (t) => {
  const stalled = await stalledUpstream(t)
  const answering = await upstream(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"s":"str"}')
  })
  const origin = await served()
  // Element 0 waits on an upstream that never answers; element 1's write beneath a string throws
  // once its own call has answered, while element 0's call is out.
  const each = { '/got': { source: '/path', request: { url: { source: '' }, pointer: '/json' } }, '/got/s/z': { constant: 1 } }
  const body = { mapping: { mapping: { '/r': { source: '/items', each } } }, input: { items: [{ path: `${stalled.origin}/stall` }, { path: `${answering.origin}/ok` }] } }
  const { answer, healthDuring } = await during(origin, post(origin, body))
  t.equal(answer.status, 422)
  t.match(answer.body, { code: 'EvaluationError', message: "Cannot create property 'z' on string 'str'" })
  t.equal(healthDuring, 200)
  t.equal(stalled.arrived(), 1, 'the stalled call had gone out')
  t.ok(await eventually(() => stalled.closed() === 1), 'and its connection was closed')
  t.equal(await health(origin), 200)
  t.same(unhandled, [])
})

t.test('a registered each over 1,001 items trips pluginCalls: 422, and none of the 1,000 calls before it is sent', async (t) => {
  const origin = await served()
  const up = upstreams.tripped!
  const items = Array.from({ length: 1001 }, () => ({}))
  const { answer, healthDuring } = await during(origin, post(origin, { mapping: 'fan-out', input: { items } }))
  t.equal(answer.status, 422)
  t.match(answer.body, { code: 'BudgetExceeded', budget: 'pluginCalls', limit: 1000, used: 1001, pointer: '/mapping/~1r/each/~1x', mapping: 'fan-out' })
  t.equal(answer.body.requestId, answer.requestId)
  t.equal(healthDuring, 200, '/health answered while the attack ran')
  // Calls start a few dozen per turn (engine/slices.ts admitStart); the budget trips while the
  // fan-out starts its elements, in the first turn, so the calls waiting to start never do.
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(up.arrived(), 0, 'no call reached the upstream')
  t.equal(await health(origin), 200, '/health answers afterwards')
  t.same(unhandled, [], 'no rejection went unhandled: the process lives')
})

t.test('a registered each over 300 items: every call is sent, a few dozen per turn, and every one answered', async (t) => {
  const origin = await served()
  const answer = await post(origin, { mapping: 'fan-out-answered', input: { items: Array.from({ length: 300 }, () => ({})) } })
  t.equal(answer.status, 200)
  t.equal(answer.body.r.length, 300)
  t.ok(answer.body.r.every((item: { x: unknown }) => item.x === true), 'every element has its answer')
})

t.test('a client that walks away from a fan-out in flight: every upstream call is cancelled, the server lives', async (t) => {
  const origin = await served()
  const up = upstreams.walkedAway!
  const client = new AbortController()
  const attack = post(origin, { mapping: 'fan-out-abandoned', input: { items: [{}, {}, {}, {}, {}] } }, { signal: client.signal }).then(
    () => 'answered',
    (error: Error) => error.name
  )
  t.ok(await eventually(() => up.arrived() === 5), 'the five calls reached the upstream')
  client.abort()
  t.equal(await attack, 'AbortError')
  t.ok(await eventually(() => up.closed() === 5), `the five calls were cancelled (${up.closed()} closed)`)
  t.equal(await health(origin), 200)
  t.same(unhandled, [])
})

// ---------------------------------------------------------------------------------------------
// Generated attacks: explicit documents fanning out over plugins that are slow, fail, stall on a
// real upstream or throw, some of them abandoned by their client. Every request the server read
// gets exactly one answer, even when nobody is left to receive it, and /health answers after each.

const msOf = (options: unknown): number => Number((options as { ms?: number } | null)?.ms ?? 0)
const slow: Plugin = (options, value) => new Promise((resolve) => setTimeout(() => resolve(value), msOf(options)))
const failing: Plugin = (options) => new Promise((_resolve, reject) => setTimeout(() => reject(new Error('plugin failure')), msOf(options)))

const TIME_MS = 150

t.test('property: generated fan-outs through /map get exactly one answer each, and /health keeps answering', async (t) => {
  const up = await stalledUpstream(t)
  const log = capturedLog()
  const request = createRequest({ allowHeaders: [], denyPrivateNetworks: true, allowHosts: ['127.0.0.1'] })
  const boom = (): never => {
    throw new Error('transformer threw')
  }
  // Observed, not changed: which requests the server read, and each time it ended a response. The
  // request log cannot tell: its line is written when a response finishes, and an abandoned one
  // never does.
  const received = new Set<string>()
  const replies = new Map<string, number>()
  const { app, origin } = await listening(t, {
    logger: log.logger,
    extensions: { initializers: {}, transformers: { boom }, plugins: { slow, failing, request } },
    // Inline, on the event loop: the property is about the engine's fan-out (workers: isolation.test.ts).
    options: { underPressure: false, trustRequestId: true, map: { explicit: true }, isolation: false, limits: { explicit: { timeMs: TIME_MS, pluginCalls: 6 } } },
  })
  app.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== '/map') return
    const id = String(req.headers['x-request-id'])
    received.add(id)
    const end = res.end
    res.end = function counted(this: ServerResponse, ...args: unknown[]) {
      replies.set(id, (replies.get(id) ?? 0) + 1)
      return (end as (...args: unknown[]) => ServerResponse).apply(this, args)
    } as typeof res.end
  })

  const ms = fc.integer({ min: 0, max: 10 })
  const leaf = fc.oneof(
    { arbitrary: fc.constant({ source: '/v' }), weight: 8 },
    { arbitrary: ms.map((n) => ({ source: '/v', slow: { ms: n } })), weight: 6 },
    { arbitrary: ms.map((n) => ({ source: '/v', failing: { ms: n } })), weight: 1 },
    { arbitrary: fc.constant({ source: '/v', transform: 'boom' }), weight: 1 },
    { arbitrary: fc.constant({ request: { origin: up.origin, pathname: '/stall' } }), weight: 1 }
  )
  const { node } = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, leaf, tie('each'), tie('combinator')),
    pairings: fc
      .record({ rights: fc.array(fc.oneof(tie('node'), fc.array(tie('node'), { minLength: 1, maxLength: 3 })), { minLength: 1, maxLength: 3 }), writeUnder: fc.boolean() })
      .map(({ rights, writeUnder }) => {
        const entries: Array<[string, unknown]> = rights.map((right, i) => [`/p${i}`, right])
        if (writeUnder) entries.push(['/w', '/s'], ['/w/z', { constant: 1 }])
        return Object.fromEntries(entries)
      }),
    each: tie('pairings').map((pairings) => ({ source: '/items', each: pairings })),
    combinator: fc.record({ keyword: fc.constantFrom('all', 'first', 'last'), list: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }).map(({ keyword, list }) => ({ [keyword]: list })),
  }))
  const input = { v: 1, items: [{ v: 2 }, { v: 3, s: 'str' }, { v: 4, items: [{ v: 5 }] }] }

  let sent = 0
  const statuses = new Map<string, number>()
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(fc.constantFrom('/a', '/b'), node, { minKeys: 1, maxKeys: 2 }),
      // A quarter of the requests are abandoned by their client, at some point of their evaluation.
      fc.oneof({ arbitrary: fc.integer({ min: 0, max: 20 }), weight: 1 }, { arbitrary: fc.constant(undefined), weight: 3 }),
      async (mapping, abortAfter) => {
        const id = `fanout-${++sent}`
        const client = new AbortController()
        const timer = abortAfter === undefined ? undefined : setTimeout(() => client.abort(), abortAfter)
        let status = 'abandoned'
        try {
          const answer = await post(origin, { mapping: { mapping }, input }, { headers: { 'x-request-id': id }, signal: client.signal })
          status = String(answer.status)
          if (![200, 422, 500].includes(answer.status)) throw new Error(`answered ${answer.status}: ${JSON.stringify(answer.body)}`)
          if (answer.body.requestId !== undefined && answer.body.requestId !== id) throw new Error('the error body names another request')
        } catch (error) {
          if ((error as Error).name !== 'AbortError') throw error
        } finally {
          clearTimeout(timer)
        }
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
        // A request its client abandoned may reach the server a little later, or never: those are
        // checked once more after the last run.
        const repliesTo = (): number => replies.get(id) ?? 0
        if (received.has(id) && !(await eventually(() => repliesTo() > 0))) throw new Error(`request ${id} was never answered`)
        await new Promise((resolve) => setTimeout(resolve, 2))
        if (repliesTo() > 1 || (status !== 'abandoned' && repliesTo() !== 1)) throw new Error(`request ${id} was answered ${repliesTo()} times`)
        const healthy = await health(origin)
        if (healthy !== 200) throw new Error(`/health answered ${healthy}`)
        if (unhandled.length > 0) throw new Error(`unhandled rejection: ${String(unhandled[0])}`)
        return true
      }
    ),
    { numRuns: 25 }
  )
  t.pass(`${sent} requests: ${[...statuses].map(([status, count]) => `${count} × ${status}`).join(', ')}`)
  t.equal(await health(origin), 200)
  const ids = Array.from({ length: sent }, (_, i) => `fanout-${i + 1}`)
  const answeredOnce = (): boolean => ids.every((id) => (replies.get(id) ?? 0) === (received.has(id) ? 1 : 0))
  t.ok(await eventually(answeredOnce), `each of the ${received.size} requests the server read was answered exactly once, the others never`)
  t.notOk(log.lines().some((line) => /already sent/i.test(String(line.msg))), 'no reply was sent twice')
  t.ok(await eventually(() => up.closed() === up.arrived()), `every upstream call was cancelled (${up.arrived()} arrived, ${up.closed()} closed)`)
  t.equal(await health(origin), 200)
  t.same(unhandled, [])
})
