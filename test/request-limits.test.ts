// Limits (request-plugin.md §2, §3): one timeoutMs deadline over connection, hops and body; the
// host's abort signal, which closes the upstream connection at once; maxResponseBytes enforced
// while streaming. Real upstream on 127.0.0.1 that stalls or over-delivers on purpose; apart from
// the generous bounds on how soon a cancelled call's socket closes, no assertion depends on how
// long anything took.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { Mapper, type MappingDocument } from '../engine/index.js'
import { createRequest, type RequestConfig } from '../extensions/request/index.js'
import { stockExtensions } from '../extensions/stock.js'
import { buildServer } from '../server.js'
import { listening } from './attack-support.js'
import { upstream } from './request-support.js'

function fetchEnvelope(config: RequestConfig, request: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
  const mapper = new Mapper({}, { plugins: { request: createRequest(config) } })
  const extra = signal === undefined ? undefined : { signal }
  return mapper.map({ mapping: { '/r': { request } } }, {}, extra).then((result) => result.r)
}

t.test('timeout before the response headers', async (t) => {
  const up = await upstream(t, () => {
    // never answers
  })
  await t.rejects(fetchEnvelope({ timeoutMs: 200 }, { origin: up.origin, pathname: '/slow' }), {
    message: `Request timed out after 200 ms: ${up.origin}/slow`,
  })
  t.same(up.hits, ['GET /slow'])
})

t.test('timeout while the body is being read', async (t) => {
  const up = await upstream(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('{"partial":')
    // and stalls
  })
  await t.rejects(fetchEnvelope({ timeoutMs: 200 }, { origin: up.origin, pathname: '/partial' }), {
    message: `Request timed out after 200 ms: ${up.origin}/partial`,
  })
})

t.test('one deadline covers the whole redirect chain and names the hop in flight', async (t) => {
  const up = await upstream(t, (req, res) => {
    if (req.url === '/a') {
      res.writeHead(301, { location: '/b' })
      res.end()
    }
    // /b stalls
  })
  await t.rejects(fetchEnvelope({ timeoutMs: 200, redirect: 'follow' }, { origin: up.origin, pathname: '/a' }), {
    message: `Request timed out after 200 ms: ${up.origin}/b`,
  })
  t.same(up.hits, ['GET /a', 'GET /b'])
})

t.test('the deadline covers a checkUrl that never settles', async (t) => {
  const up = await upstream(t, () => {})
  await t.rejects(fetchEnvelope({ timeoutMs: 200, checkUrl: () => new Promise<void>(() => {}) }, { origin: up.origin, pathname: '/x' }), {
    message: `Request timed out after 200 ms: ${up.origin}/x`,
  })
  t.same(up.hits, [])
})

t.test('the evaluation\'s abort signal (context.signal) aborts the request', async (t) => {
  const controller = new AbortController()
  const up = await upstream(t, () => controller.abort(new Error('the caller went away')))
  const error = (await t.rejects(fetchEnvelope({}, { origin: up.origin, pathname: '/held' }, controller.signal), {
    message: `Request aborted: ${up.origin}/held`,
  })) as Error
  t.match(error.cause, { message: 'the caller went away' })
  t.same(up.hits, ['GET /held'])
})

t.test('an already aborted signal sends nothing', async (t) => {
  const up = await upstream(t, () => {})
  await t.rejects(fetchEnvelope({}, { origin: up.origin, pathname: '/never' }, AbortSignal.abort(new Error('gone'))), {
    message: `Request aborted: ${up.origin}/never`,
  })
  t.same(up.hits, [])
})

t.test('maxResponseBytes: a declared Content-Length over the cap is refused', async (t) => {
  const body = JSON.stringify({ padding: 'x'.repeat(10_000) })
  const up = await upstream(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  })
  await t.rejects(fetchEnvelope({ maxResponseBytes: 1024 }, { origin: up.origin }), {
    name: 'ResponseTooLargeError',
    code: 'E_RESPONSE_TOO_LARGE',
    message: 'Response exceeds 1024 bytes',
  })
})

t.test('maxResponseBytes: an undeclared (chunked) body is cut off while streaming', async (t) => {
  let written = 0
  const up = await upstream(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    // Keep writing well past the cap; the plugin must stop reading long before the end.
    const chunk = 'y'.repeat(4096)
    const pump = (): void => {
      while (written < 1_048_576) {
        written += chunk.length
        if (!res.write(chunk)) {
          res.once('drain', pump)
          return
        }
      }
      res.end()
    }
    res.on('close', () => (written = Number.POSITIVE_INFINITY))
    pump()
  })
  await t.rejects(fetchEnvelope({ maxResponseBytes: 16_384 }, { origin: up.origin }), { message: 'Response exceeds 16384 bytes' })
})

t.test('maxResponseBytes: a body of exactly the cap is read', async (t) => {
  const up = await upstream(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.write('a'.repeat(8))
    res.end('b'.repeat(8))
  })
  t.same(await fetchEnvelope({ maxResponseBytes: 16 }, { origin: up.origin }), { status: 200, 'content-type': 'text/plain', text: 'aaaaaaaabbbbbbbb' })
})

t.test('a connection failure keeps undici\'s cause', async (t) => {
  // A port that was just listening and is now closed: connection refused, without the network.
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  const error = (await t.rejects(fetchEnvelope({}, { origin: `http://127.0.0.1:${port}`, pathname: '/x' }), {
    message: new RegExp(`^Request to http://127.0.0.1:${port}/x failed: `),
  })) as Error
  t.match(error.cause, { code: 'ECONNREFUSED' })
})

// A cancelled call closes its upstream socket at once (request-plugin.md §3: the signal aborts the
// request; undici destroys the socket of an aborted request rather than keep it for reuse), in
// every phase, so a caller that goes away holds no upstream connection until timeoutMs (10 s here).

/** When the socket of the upstream's first request closed, as a promise of performance.now(). */
function socketClosed(req: IncomingMessage): Promise<number> {
  return new Promise((resolve) => req.socket.once('close', () => resolve(performance.now())))
}

type Phase = (req: IncomingMessage, res: ServerResponse, cancel: () => void) => void

const PHASES: Array<[name: string, config: RequestConfig, phase: Phase]> = [
  ['before the response headers', {}, (_req, _res, cancel) => cancel()],
  ['while the body is read', {}, (_req, res, cancel) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('{"partial":', () => cancel())
  }],
  ['while a redirect\'s body is drained', { redirect: 'follow' }, (_req, res, cancel) => {
    res.writeHead(301, { location: '/next', 'content-length': '1000' })
    res.write('x', () => cancel())
  }],
]

for (const [name, config, phase] of PHASES) {
  t.test(`an aborted call closes its upstream socket at once: ${name}`, async (t) => {
    const controller = new AbortController()
    let closed: Promise<number> | undefined
    let cancelledAt = 0
    const up = await upstream(t, (req, res) => {
      closed ??= socketClosed(req)
      phase(req, res, () => {
        cancelledAt = performance.now()
        controller.abort(new Error('the caller went away'))
      })
    })
    await t.rejects(fetchEnvelope(config, { origin: up.origin, pathname: '/held' }, controller.signal), { message: `Request aborted: ${up.origin}/held` })
    const after = (await closed!) - cancelledAt
    t.ok(after < 1000, `the socket closed ${Math.round(after)} ms after the abort (bound 1 s; the call's deadline was 10 s)`)
    t.same(up.hits, ['GET /held'])
  })
}

t.test('through the service: a client that disconnects, or a time budget that runs out, closes the upstream socket at once', async (t) => {
  const held: Array<Promise<number>> = []
  const arrived: number[] = []
  const up = await upstream(t, (req) => {
    arrived.push(performance.now())
    held.push(socketClosed(req))
    // never answers
  })
  const origin = await listening(t, await buildServer({
    mappings: [{ $id: 'slow', mapping: { '/r': { request: { origin: up.origin, pathname: '/held' } } } } as MappingDocument],
    extensions: stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' }),
    options: { logging: { level: 'silent' }, map: { explicit: true }, limits: { explicit: { timeMs: 1000 } } },
  }))
  const post = (body: unknown, signal: AbortSignal): Promise<Response> =>
    fetch(`${origin}/map`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal })

  // The client goes away while the upstream holds the request.
  const client = new AbortController()
  const pending = post({ mapping: 'slow', input: {} }, client.signal).catch(() => undefined)
  while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  const disconnected = performance.now()
  client.abort()
  await pending
  const afterDisconnect = (await held[0]!) - disconnected
  t.ok(afterDisconnect < 1000, `closed ${Math.round(afterDisconnect)} ms after the client disconnected (bound 1 s)`)

  // An explicit document whose time budget (1 s) runs out while the upstream holds. It runs in a
  // worker thread (isolation), started first by a document that calls nothing: a thread's start-up
  // (its modules loaded through the test loader, on a busy machine) could spend the whole budget
  // before the call is made, and then there is no call to close.
  const warm = await post({ mapping: { mapping: { '/r': { constant: 1 } } }, input: {} }, AbortSignal.timeout(30_000))
  t.equal(warm.status, 200, 'the worker thread is up')
  const answer = await post({ mapping: { mapping: { '/r': { request: { origin: up.origin, pathname: '/held' } } } }, input: {} }, AbortSignal.timeout(30_000))
  t.equal(answer.status, 422)
  t.match(await answer.json(), { code: 'BudgetExceeded', budget: 'timeMs' })
  t.same(up.hits, ['GET /held', 'GET /held'], 'the call was made before the budget ran out')
  const afterBudget = (await held[1]!) - arrived[1]!
  t.ok(afterBudget < 2500, `closed ${Math.round(afterBudget)} ms after the upstream call arrived (time budget 1 s, bound 2.5 s)`)
})
