// Upstream JSON bodies off the main thread (issue 30): above JSON_OFF_THREAD_BYTES a JSON body is
// parsed in a parse thread, narrowed there to the path of the call's pointer and handed back in
// batches the main thread assembles a slice at a time (pack.ts); the bytes of bodies in flight are
// bounded per thread (maxBytesInFlight). What a mapping reads is the same as an inline parse gives,
// whatever the shape of the body and the pointer; the budget makes calls wait their turn, fails
// them with 503 UpstreamBusy when they cannot get room, and is whole again once they are over.
import fc from 'fast-check'
import t from 'tap'
import { Mapper, readPointer, type MappingDocument } from '../engine/index.js'
import { closeParseThreads, createRequest, InFlightLimitError } from '../extensions/request/index.js'
import { budgetFor, ByteBudget, HOLDING_WAIT_MS } from '../extensions/request/in-flight.js'
import { narrow, pack, sparse, unpack } from '../extensions/request/pack.js'
import { JSON_OFF_THREAD_BYTES } from '../extensions/request/parse-thread.js'
import { buildServer } from '../server.js'
import { listening, watchingHealth } from './attack-support.js'
import { upstream } from './request-support.js'

t.teardown(closeParseThreads)

/** JSON values as a body carries them: parsed from text, so `__proto__` is an own member. */
const jsonValue = fc.jsonValue({ maxDepth: 5 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown)
const withProto = fc.constant(JSON.parse('{"__proto__":{"polluted":1},"constructor":[1,{"__proto__":2}],"length":3}') as unknown)

t.test('pack and unpack: the same value, members in the same order, at any batch weight', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.oneof(jsonValue, withProto), fc.constantFrom(1, 16, 64, 4096), async (value, weight) => {
      const back = await unpack(pack(value, weight), () => {})
      t.equal(JSON.stringify(back), JSON.stringify(value))
      t.same(back, value)
      return JSON.stringify(back) === JSON.stringify(value)
    }),
    { numRuns: 200 }
  )
  const proto = (await unpack(pack(JSON.parse('{"a":{"__proto__":{"x":1}}}'), 1), () => {})) as { a: object }
  t.ok(Object.hasOwn(proto.a, '__proto__'), '__proto__ stays an own member')
  t.equal(Object.getPrototypeOf(proto.a), Object.prototype, 'and never a prototype')
  t.equal(({} as Record<string, unknown>).x, undefined, 'nothing polluted')
})

/** Every pointer into a value (up to a bound), plus pointers that lead nowhere. */
function pointersOf(value: unknown, limit = 40): string[] {
  const found: string[] = ['', '/missing', '/0/1/2', '/length', '/constructor', '/__proto__', '/01']
  const walk = (current: unknown, pointer: string): void => {
    if (found.length >= limit || current === null || typeof current !== 'object') return
    for (const key of Object.keys(current)) {
      const next = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`
      found.push(next, `${next}/x`, `${next}/0`)
      walk((current as Record<string, unknown>)[key], next)
    }
  }
  walk(value, '')
  return found
}

t.test('narrowed in the worker: the engine reads the same value from the sparse envelope as from the whole', async (t) => {
  await fc.assert(
    fc.property(fc.oneof(jsonValue, withProto), (value) => {
      const envelope = { status: 200, 'content-type': 'application/json', json: value }
      for (const inner of pointersOf(value)) {
        for (const pointer of [`/json${inner}`, `#/json${encodeURI(inner)}`, '/status', inner]) {
          const { spine, target } = narrow(envelope, pointer)
          const whole = safeRead(envelope, pointer)
          const fromSparse = safeRead(sparse(spine, target), pointer)
          if (JSON.stringify(whole) !== JSON.stringify(fromSparse) || whole.error !== fromSparse.error) {
            t.fail(`${pointer}: ${JSON.stringify(whole)} != ${JSON.stringify(fromSparse)}`)
            return false
          }
        }
      }
      return true
    }),
    { numRuns: 200 }
  )
  t.pass('every pointer read the same')
})

function safeRead(document: unknown, pointer: string): { value?: unknown; error?: string } {
  try {
    return { value: readPointer(document, pointer) }
  } catch (error) {
    return { error: (error as Error).name }
  }
}

/**
 * Records in a large body: 1,000 print to about 120 KB, past JSON_OFF_THREAD_BYTES, whose records
 * cross back in two batches and the whole body in three (pack.ts), and whose chunks, sent 9,999
 * bytes at a time, split five of its characters (asserted below). 2,500 made twice the bytes to
 * parse, send and compare for no path more, and no chunk of theirs split a character.
 */
const RECORDS = 1000
/** Numbers in the large array: 15,000 print to about 79 KB, in two batches. */
const NUMBERS = 15_000
/** The bytes of each chunk of a chunked answer. */
const CHUNK = 9_999

/** A large body of a given shape, its text over JSON_OFF_THREAD_BYTES. */
function largeBody(seed: number): unknown {
  const records = []
  for (let i = 0; i < RECORDS; i++) records.push({ id: `${seed}-${i}`, n: i * seed, tags: ['a', i % 3 === 0 ? null : 'b'], deep: { list: [[i], { k: i % 7 === 0 }] } })
  return JSON.parse(JSON.stringify({ records, meta: { seed, 'a/b': 'slash', 'm~n': 'tilde', '': 'empty key' }, text: 'é€😀'.repeat(5000) }))
}

t.test('through the plugin: large JSON bodies, declared or chunked, read by any pointer, give what an inline parse gives', async (t) => {
  const bodies = [largeBody(1), largeBody(7), JSON.parse(`{"__proto__":{"x":1},"big":${JSON.stringify('x'.repeat(100_000))}}`), Array.from({ length: NUMBERS }, (_, i) => i)]
  // Printed once: the upstream answers each body 34 times.
  const texts = bodies.map((body) => JSON.stringify(body))
  const up = await upstream(t, (req, res) => {
    const [, which, mode] = (req.url ?? '').split('/')
    const text = texts[Number(which)]!
    if (mode === 'chunked') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
      // Cut anywhere, a character's bytes included.
      const bytes = Buffer.from(text)
      for (let i = 0; i < bytes.length; i += CHUNK) res.write(bytes.subarray(i, i + CHUNK))
      res.end()
    } else {
      res.writeHead(200, { 'content-type': 'application/vnd.api+json', 'content-length': Buffer.byteLength(text) })
      res.end(text)
    }
  })
  for (const body of bodies) t.ok(Buffer.byteLength(JSON.stringify(body)) > JSON_OFF_THREAD_BYTES, 'each body is parsed in a parse thread')
  for (const body of [(bodies[0] as { records: unknown }).records, (bodies[1] as { records: unknown }).records, bodies[3]]) {
    t.ok(pack(body).length > 1, 'the records and the numbers cross back in several batches, their arrays filled member by member')
  }
  for (const text of texts.slice(0, 2)) {
    const bytes = Buffer.from(text)
    let split = 0
    for (let i = CHUNK; i < bytes.length; i += CHUNK) if ((bytes[i]! & 0xc0) === 0x80) split++
    t.ok(split > 0, `the chunked answer splits ${split} characters between two chunks`)
  }
  const pointers = ['/json', '/json/records/0', `/json/records/${RECORDS - 1}/deep/list/1/k`, `/json/records/${RECORDS}`, '/json/meta/a~1b', '/json/meta/m~0n', '/json/meta/', '/json/__proto__', '/json/big', `/json/${NUMBERS - 1}`, '/json/-', '/json/text/0', '/status', '/content-type', '#/json/meta/a~1b', '/json/records/length', '']
  const mappings: MappingDocument[] = []
  for (const [i] of bodies.entries()) {
    for (const mode of ['declared', 'chunked']) {
      for (const [p, pointer] of pointers.entries()) {
        mappings.push({ $id: `b${i}-${mode}-${p}`, mapping: { '/got': { request: { origin: up.origin, pathname: `/${i}/${mode}`, ...(pointer === '' ? {} : { pointer }) } } } } as MappingDocument)
      }
    }
  }
  // The first calls wait for the parse threads to start, which took over the default 10 s timeMs
  // budget on a loaded machine: the values read are this test's subject, not the time.
  const mapper = new Mapper({ mappings }, { plugins: { request: createRequest() } }, { limits: { timeMs: 120_000 } })
  for (const [i, body] of bodies.entries()) {
    for (const mode of ['declared', 'chunked']) {
      // The pointers into one body at once (each its own call, parsed and narrowed in a parse
      // thread): the threads work side by side instead of one call after another.
      const envelopes = await Promise.all(pointers.map((_, p) => mapper.map(`b${i}-${mode}-${p}`, {})))
      for (const [p, pointer] of pointers.entries()) {
        const envelope = envelopes[p]!
        t.equal(envelope.valid, true, `${i} ${mode} ${pointer}`)
        const whole = { status: 200, 'content-type': mode === 'chunked' ? 'application/json' : 'application/vnd.api+json', json: body }
        const expected = pointer === '' ? whole : readPointer(whole, pointer)
        // Compared as JSON text: as strict as t.same for JSON values and stricter on member order,
        // and a fraction of its cost on bodies of thousands of records (t.same formats as it walks).
        t.equal(JSON.stringify(envelope.got), JSON.stringify(expected), `${i} ${mode} ${pointer || '(no pointer)'}`)
      }
    }
  }
  t.equal(budgetFor(67_108_864).inFlight, 0, 'every byte given back')
})

t.test('a large body that is not JSON, or nests too deep, fails as an inline one does', async (t) => {
  const up = await upstream(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    if (req.url === '/broken') res.end(`{"a":"${'x'.repeat(100_000)}"`)
    else res.end(`{"pad":"${'x'.repeat(100_000)}","deep":${'['.repeat(300)}${']'.repeat(300)}}`)
  })
  const request = createRequest()
  const mapper = new Mapper({}, { plugins: { request } })
  const fetch = (pathname: string): Promise<unknown> => mapper.map({ mapping: { '/got': { request: { origin: up.origin, pathname, pointer: '/json/pad' } } } }, {})
  await t.rejects(fetch('/broken'), { name: 'SyntaxError', message: new RegExp(`^Invalid JSON in response from ${up.origin}/broken: `) })
  await t.rejects(fetch('/deep'), { name: 'ResponseTooDeepError', code: 'E_RESPONSE_TOO_DEEP', format: 'JSON' })
})

t.test('the byte budget: first come first served, a holder waits at most a second, an abort fails the wait', async (t) => {
  const budget = new ByteBudget(100)
  const never = new AbortController().signal
  t.ok(budget.tryTake(60))
  t.notOk(budget.tryTake(50), 'over the limit')
  const order: string[] = []
  const a = budget.take(50, never).then(() => order.push('a'))
  t.notOk(budget.tryTake(10), 'nobody jumps the line, even when it would fit')
  const b = budget.take(10, never).then(() => order.push('b'))
  budget.give(60)
  await Promise.all([a, b])
  t.same(order, ['a', 'b'])
  t.equal(budget.inFlight, 60)
  const aborted = new AbortController()
  const waiting = budget.take(90, aborted.signal)
  aborted.abort(new Error('gone'))
  await t.rejects(waiting, InFlightLimitError, 'an abort while waiting is a busy refusal')
  await t.rejects(budget.take(90, never, 10), { name: 'InFlightLimitError', statusCode: 503, responseCode: 'UpstreamBusy' })
  t.equal(budget.inFlight, 60, 'a refused wait holds nothing')
  budget.give(60)
  t.equal(budget.inFlight, 0)
  t.ok(HOLDING_WAIT_MS > 0)
})

t.test('through the service: calls beyond maxBytesInFlight wait their turn, or get 503 UpstreamBusy; /health answers throughout', async (t) => {
  const size = 150_000
  const text = JSON.stringify({ ok: 'x', pad: 'x'.repeat(size - 21) })
  let stalled: Array<() => void> = []
  const up = await upstream(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
    if (req.url === '/slow') {
      // Half the body, the rest when the test says so.
      res.write(text.slice(0, 1000))
      stalled.push(() => res.end(text.slice(1000)))
      return
    }
    res.end(text)
  })
  const limit = 2 * size + 1000
  // Two instances with the same limit share one budget; `quick` gives up soon.
  const request = createRequest({ maxResponseBytes: size + 100, maxBytesInFlight: limit })
  const quick = createRequest({ maxResponseBytes: size + 100, maxBytesInFlight: limit, timeoutMs: 800 })
  const mappings = [
    { $id: 'fast', mapping: { '/n': { quick: { origin: up.origin, pathname: '/fast', pointer: '/json/ok' } } } },
    { $id: 'slow', mapping: { '/n': { request: { origin: up.origin, pathname: '/slow', pointer: '/json/ok' } } } },
    { $id: 'many', mapping: { '/n': { each: { mapping: { '/c': { request: { origin: up.origin, pathname: '/fast', pointer: '/json/ok' } } } }, source: '/list' } } },
  ] as MappingDocument[]
  const app = await buildServer({ mappings, extensions: { plugins: { request, quick } }, options: { logging: { level: 'silent' }, isolation: false, underPressure: false, errorDetail: 'full' } })
  const origin = await listening(t, app)
  const post = async (body: unknown): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${origin}/map`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    return { status: response.status, body: await response.json() }
  }

  // Twelve at once through a budget of two: all answered, in turn.
  const watched = await watchingHealth(origin, () => post({ mapping: 'many', input: { list: Array.from({ length: 12 }, (_, i) => i) } }))
  t.equal(watched.result.status, 200)
  t.same(watched.result.body.n, Array.from({ length: 12 }, () => ({ c: 'x' })))
  t.ok(watched.health.every((status) => status === 200), '/health answered 200 throughout')

  // Two calls hold the budget (their bodies stalled): a third waits, then is refused at its deadline.
  const holders = [post({ mapping: 'slow' }), post({ mapping: 'slow' })]
  while (stalled.length < 2 || budgetFor(limit).inFlight < 2 * Buffer.byteLength(text)) await new Promise((resolve) => setTimeout(resolve, 10))
  const refused = await post({ mapping: 'fast' })
  t.equal(refused.status, 503)
  t.match(refused.body, { code: 'UpstreamBusy', message: `Upstream bodies in flight would exceed ${limit} bytes (maxBytesInFlight); retry later` })
  for (const release of stalled) release()
  stalled = []
  for (const holder of await Promise.all(holders)) t.equal(holder.status, 200, 'the holders finish')
  t.equal(budgetFor(limit).inFlight, 0, 'every byte given back')
  t.equal((await post({ mapping: 'fast' })).status, 200, 'and the next call gets room')
})
