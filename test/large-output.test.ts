// Large outputs without a long turn (issue 30): a large upstream JSON body written whole is counted
// by the output budgets from the size its assembly noted (pack.ts, engine noteSize), with no walk of
// it on the main thread, and the budgets still trip on it; an envelope the engine counted as large
// is printed a slice at a time (service/print.ts), the event loop turning between slices, and the
// text answered is exactly what JSON.stringify prints. Small outputs print as before, synchronously.
import t from 'tap'
import { BudgetExceeded, Mapper, measure, type MappingDocument } from '../engine/index.js'
import { closeParseThreads, createRequest } from '../extensions/request/index.js'
import { runCompiled } from '../service/evaluation.js'
import { buildServer } from '../server.js'
import { listening } from './attack-support.js'
import { upstream } from './request-support.js'

t.teardown(closeParseThreads)

const bodies = new Map<number, string>()

/**
 * A JSON body of about `rows` × 80 bytes, printed as JSON.stringify prints it (so a reprint is byte
 * for byte the same). Built once per size: the tests only read it.
 */
function bodyText(rows: number): string {
  let text = bodies.get(rows)
  if (text === undefined) {
    const records = Array.from({ length: rows }, (_, i) => ({ id: i, name: `record ${i} \u00e9\u{1f600}`, score: i / 7, tags: ['a', 'b', i % 3 === 0 ? null : true], nested: { deep: [[i]] } }))
    bodies.set(rows, (text = JSON.stringify({ records, meta: { count: rows, note: 'a "quoted" \\ line\n' } })))
  }
  return text
}

/**
 * Count the turns of the event loop while `work` runs: a timer re-armed from its own callback fires
 * at most once a turn, and not at all while the loop is held. A timer rather than a setImmediate
 * spin: the spin kept the loop busy (a core, tap's async hooks on every callback) for as long as the
 * largest answer took, about half of this file's CPU on a loaded machine, and counts the same held loop
 * just as little.
 */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0
  let going = true
  const spin = (): void => {
    if (!going) return
    turns++
    setTimeout(spin, 1)
  }
  setTimeout(spin, 1)
  try {
    return { result: await work(), turns }
  } finally {
    going = false
  }
}

t.test('through the service: a large upstream JSON body written whole is answered byte for byte, the loop turning meanwhile', async (t) => {
  // 5.6 MB, 2.2 MB, and 0.9 MB of empty containers: each many times what is parsed off the loop
  // (64 KiB) and printed in slices (256 KiB), in dozens of batches and slices. (The largest was
  // 11 MB: the same path and the same assertions, at twice this file's CPU.)
  const texts = [bodyText(50_000), bodyText(20_000), JSON.stringify(Array.from({ length: 300_000 }, (_, i) => (i % 2 === 0 ? {} : [])))]
  // Encoded once: the upstream sends the same bytes each time it is asked.
  const encoded = texts.map((text) => Buffer.from(text))
  const up = await upstream(t, (req, res) => {
    const bytes = encoded[Number((req.url ?? '/0').slice(1))]!
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length })
    res.end(bytes)
  })
  const mappings = texts.map((_, i) => ({ $id: `big-json-${i}`, mapping: { '/t': { request: { origin: up.origin, pathname: `/${i}` } } } })) as MappingDocument[]
  // The evaluation's timeMs and the call's timeoutMs well above their 10 s defaults: on a loaded
  // machine the largest body alone can take seconds, and this test is about the bytes and the turns
  // of the loop, not about either deadline.
  const request = createRequest({ timeoutMs: 120_000 })
  const app = await buildServer({ mappings, extensions: { plugins: { request } }, options: { logging: { level: 'silent' }, isolation: false, underPressure: false, errorDetail: 'full', limits: { timeMs: 120_000 } } })
  const origin = await listening(t, app)
  for (const [i, text] of texts.entries()) {
    const { result, turns } = await turnsDuring(async () => {
      const response = await fetch(`${origin}/map`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mapping: `big-json-${i}` }) })
      return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) }
    })
    t.equal(result.status, 200, `body ${i}`)
    // Compared as bytes: what the client received, not decoded into a string first (decoding the
    // answers and comparing them as text cost this file's main thread half a second).
    const expected = Buffer.from(`{"t":{"status":200,"content-type":"application/json","json":${text}},"valid":true,"errors":[]}`)
    t.ok(result.bytes.equals(expected), `body ${i} (${text.length} bytes): the body's exact bytes inside the envelope`)
    t.ok(turns > 2, `body ${i}: the event loop turned while it was answered (${turns} turns)`)
  }
})

t.test('the size noted on an assembled body is what a walk of it counts, and the output budgets still trip on it', async (t) => {
  // 12,000 rows: 1.4 MB, past the 1,000,000 output bytes it must trip at, parsed off the loop and
  // assembled in batches; each of the eight evaluations below fetches and parses it again.
  const text = bodyText(12_000)
  const up = await upstream(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(text)
  })
  const mapper = new Mapper({ mappings: [{ $id: 'whole', mapping: { '/t': { request: { origin: up.origin, pathname: '/' } } } }, { $id: 'part', mapping: { '/t': { request: { origin: up.origin, pathname: '/', pointer: '/json/records' } } } }] as MappingDocument[] }, { plugins: { request: createRequest() } })
  const whole = await mapper.map('whole', {})
  const envelope = whole.t as object
  // A copy nothing noted is walked: the noted size must be the same. (Walked once: the budgets
  // below are set from it too.)
  const size = measure(JSON.parse(JSON.stringify(envelope)) as object, Infinity, Infinity)
  t.same(measure(envelope, Infinity, Infinity), size, 'noted = walked (values, bytes, depth)')
  const part = await mapper.map('part', {})
  t.same(measure(part.t as object, Infinity, Infinity), measure(JSON.parse(JSON.stringify(part.t)) as object, Infinity, Infinity), 'the same through a pointer')

  for (const [id, budget, limit] of [
    ['whole', 'outputBytes', 1_000_000],
    ['whole', 'outputBytes', size.bytes],
    ['whole', 'outputValues', size.values],
    ['part', 'outputBytes', 100_000],
    ['whole', 'outputDepth', size.depth],
  ] as const) {
    const error = await mapper.map(id, {}, undefined, { limits: { [budget]: limit } }).then(
      () => null,
      (error: unknown) => error
    )
    t.ok(error instanceof BudgetExceeded && error.budget === budget, `${id}: ${budget} of ${limit} trips`)
  }
  t.equal((await mapper.map('whole', {}, undefined, { limits: { outputBytes: size.bytes + 1_000, outputValues: size.values + 10, outputDepth: size.depth + 1 } })).valid, true, 'and just above them it runs')
})

t.test('a large envelope is printed a slice at a time, a small one at once', async (t) => {
  const mapper = new Mapper()
  const plan = mapper.compile({ '/a': '/rows', '/b': '/rows', '/n': '/n' })
  const rows = (JSON.parse(bodyText(20_000)) as { records: unknown[] }).records
  const small = runCompiled(plan, { rows: [1, 2], n: 1 }, {}, {})
  t.notOk(small instanceof Promise, 'a small output: the outcome is at hand')
  t.equal((small as { text: string }).text, '{"a":[1,2],"b":[1,2],"n":1,"valid":true,"errors":[]}')

  const large = runCompiled(plan, { rows, n: 2 }, {}, {})
  t.ok(large instanceof Promise, 'a large output: printed later')
  const { result, turns } = await turnsDuring(() => Promise.resolve(large))
  t.ok(turns > 1, `the event loop turned while it printed (${turns} turns)`)
  t.ok(result.text === JSON.stringify({ a: rows, b: rows, n: 2, valid: true, errors: [] }), 'exactly the text JSON.stringify prints')
  t.equal(result.valid, true)
})
