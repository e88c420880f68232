// The HTTP benchmark of docs/spec/performance.md §2: `npm run bench:http`.
//
// Starts, in this process, the service (stock configuration plus the explicit form, the bundled
// mappings, the benchmark's `bench-array` mapping) and a bare Fastify server whose one route
// returns the parsed body, every one with the service's default logging (info, one line per
// request) into /dev/null; then loads each from a separate process (bench/load.ts, autocannon)
// on 127.0.0.1 and prints requests/s and p50/p99 latency for: bare echo (the citation body, and the
// array body), POST /map registered `citation`, POST /map explicit (the same document inline),
// POST /map with a ~100 KB array input, and the explicit document again with isolation off.
//
// Flags: --duration <s> (default 5), --connections <n> (default 10), --warmup <s> (default 2: an
// unmeasured run of each scenario first, so JIT warm-up does not land in the figures), --rounds <n>
// (default 3: the scenarios are measured round-robin n times, every other round in the reverse
// order, and each figure is the median of its rounds), --json. A ratio is worked out within each
// round, between scenarios measured one right after the other (the echo and `/map` registered, the
// array's echo and `/map` array, registered and explicit), and the median of the rounds' ratios is
// the one printed: on a shared machine the throughput of every scenario drifts together by more
// than the service and the echo differ, and a ratio of figures taken a minute apart measures the
// drift.
// --amount <n>: each scenario sends n requests and stops (instead of running --duration seconds),
// requests/s being the total over the time taken: the smoke test's quick run,
// --amount 200 --connections 2 --warmup 0.
// --store <url|file>: the service has a mapping store (README "Managed mappings"; `file` is a
// directory store in a temporary directory, anything else a STORE_URL, postgres://… included), the
// citation mapping is written into it with PUT as `citation-stored`, and one more scenario maps
// it: the read path with a store configured, against the same echo.
import { parseArgs } from 'node:util'
import Fastify, { LogController } from 'fastify'
import { pino, type Logger } from 'pino'
import { parse } from 'yaml'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { REDACTED_PATHS } from '../http/plugins/logging.js'
import { buildServer } from '../server.js'
import { bundledMappingsPath, loadMappings } from '../sources/mappings.js'
import { runLoad, type Measured } from './load-client.js'
import { median } from './measure.js'
import { arrayInput, citationInput, DOCUMENTS } from './workloads.js'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    amount: { type: 'string' },
    json: { type: 'boolean', default: false },
    store: { type: 'string' },
  },
})
const duration = Number(values.duration)
const connections = Number(values.connections)
const warmup = Number(values.warmup)
const rounds = Number(values.rounds)
const amount = values.amount === undefined ? undefined : Number(values.amount)
if (!(duration > 0) || !(warmup >= 0) || !Number.isInteger(connections) || connections < 1 || !Number.isInteger(rounds) || rounds < 1 || (amount !== undefined && !(Number.isInteger(amount) && amount > 0))) {
  process.stderr.write('usage: bench/http.ts [--duration <seconds> | --amount <requests>] [--connections <n>] [--warmup <seconds>] [--rounds <n>] [--store <url|file>] [--json]\n')
  process.exit(2)
}

const load = (url: string, body: string, seconds = duration): Promise<Measured> => runLoad({ url, body, connections, duration: seconds, ...(amount === undefined ? {} : { amount }) })

const citationDocument = parse(readFileSync(`${bundledMappingsPath()}/citation.yaml`, 'utf8')) as Record<string, unknown>
const arrayDocument = DOCUMENTS.find((d) => d.$id === 'bench-array')!
// About 100 KB of JSON.
let records = 200
while (JSON.stringify(arrayInput(records)).length < 100 * 1024) records += 20

/**
 * The logger every server here gets, the echo included: the service's default (info, one line per
 * request, written asynchronously, credentials redacted), into /dev/null rather than this
 * process's stdout. A benchmark whose echo logs nothing charges the service for its log line.
 */
const benchLogger = (): Logger => pino({ level: 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, pino.destination({ dest: '/dev/null', sync: false }))

const storeDirectory = values.store === 'file' ? mkdtempSync(join(tmpdir(), 'mapper-bench-store-')) : undefined
const storeUrl = storeDirectory === undefined ? values.store : pathToFileURL(storeDirectory).href
const service = await buildServer({
  mappings: [...(await loadMappings(bundledMappingsPath())), { id: 'bench-array', document: arrayDocument, source: 'bench' }],
  options: { map: { explicit: true }, ...(storeUrl === undefined ? {} : { store: { url: storeUrl } }) },
  logger: benchLogger(),
})
await service.listen({ port: 0, host: '127.0.0.1' })
if (storeUrl !== undefined) {
  const { $id, ...citation } = citationDocument
  const written = await fetch(`http://127.0.0.1:${(service.server.address() as { port: number }).port}/mappings/citation-stored`, { method: 'PUT', body: JSON.stringify(citation), headers: { 'content-type': 'application/json' } })
  if (written.status !== 201 && written.status !== 200) throw new Error(`writing citation-stored (${String($id)} as written in the bundled mappings) into the store: ${written.status} ${await written.text()}`)
}
// The same service with isolation off: what the worker threads cost an explicit document.
const inline = await buildServer({
  mappings: await loadMappings(bundledMappingsPath()),
  options: { map: { explicit: true }, isolation: false },
  logger: benchLogger(),
})
await inline.listen({ port: 0, host: '127.0.0.1' })
const inlinePort = (inline.server.address() as { port: number }).port
// The echo: Fastify's JSON body parsing and serialization, and the same one line per request.
// Like the service (server.ts), no child logger per request: the line carries the request id itself.
const bare = Fastify({ loggerInstance: benchLogger(), logController: new LogController({ disableRequestLogging: true }), childLoggerFactory: (logger) => logger })
bare.post('/echo', async (request) => request.body)
bare.addHook('onResponse', (request, reply, done) => {
  done()
  request.log.info({ requestId: request.id, method: request.method, path: request.url, status: reply.statusCode, durationMs: reply.elapsedTime }, 'request completed')
})
await bare.listen({ port: 0, host: '127.0.0.1' })
const servicePort = (service.server.address() as { port: number }).port
const barePort = (bare.server.address() as { port: number }).port

const registeredBody = JSON.stringify({ mapping: 'citation', input: citationInput })
const arrayBody = JSON.stringify({ mapping: 'bench-array', input: arrayInput(records) })
const ECHO = 'bare echo'
const REGISTERED = '/map registered citation'
const EXPLICIT = '/map explicit citation'
const INLINE = '/map explicit citation, isolation off'
const ARRAY_ECHO = 'bare echo, the array body (~100 KB)'
const ARRAY = `/map array (~100 KB, ${records} records)`
const STORED = '/map stored citation (mapping store)'
// In the order they are measured: each ratio's two scenarios side by side.
const scenarios: Array<[name: string, url: string, body: string]> = [
  [ECHO, `http://127.0.0.1:${barePort}/echo`, registeredBody],
  [REGISTERED, `http://127.0.0.1:${servicePort}/map`, registeredBody],
  [EXPLICIT, `http://127.0.0.1:${servicePort}/map`, JSON.stringify({ mapping: citationDocument, input: citationInput })],
  [INLINE, `http://127.0.0.1:${inlinePort}/map`, JSON.stringify({ mapping: citationDocument, input: citationInput })],
  [ARRAY_ECHO, `http://127.0.0.1:${barePort}/echo`, arrayBody],
  [ARRAY, `http://127.0.0.1:${servicePort}/map`, arrayBody],
]
// A stored mapping read, measured right before the echo it is compared with (which stays beside registered).
if (storeUrl !== undefined) scenarios.unshift([STORED, `http://127.0.0.1:${servicePort}/map`, JSON.stringify({ mapping: 'citation-stored', input: citationInput })])

// Check each scenario answers 200 before measuring it.
for (const [name, url, body] of scenarios) {
  const response = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
  if (response.status !== 200) throw new Error(`${name}: ${response.status} ${await response.text()}`)
}

for (const [, url, body] of scenarios) if (warmup > 0) await load(url, body, warmup)
const measured: Record<string, Measured[]> = Object.fromEntries(scenarios.map(([name]) => [name, []]))
for (let round = 0; round < rounds; round++) {
  // Every other round backwards: no scenario always comes first, or last, after the others.
  for (const [name, url, body] of round % 2 === 0 ? scenarios : scenarios.toReversed()) measured[name]!.push(await load(url, body))
}
/** Each figure of a scenario: the median of its rounds. */
const medianOf = (runs: Measured[]): Measured => {
  const pick = (field: Exclude<keyof Measured, 'waitMs'>): number => median(runs.map((run) => run[field]))
  return { requests: pick('requests'), latencyP50: pick('latencyP50'), latencyP99: pick('latencyP99'), errors: pick('errors'), non2xx: pick('non2xx'), total: pick('total'), cpuMs: pick('cpuMs') }
}
const results: Record<string, Measured> = Object.fromEntries(Object.entries(measured).map(([name, runs]) => [name, medianOf(runs)]))
await service.close()
await inline.close()
await bare.close()
if (storeDirectory !== undefined) rmSync(storeDirectory, { recursive: true, force: true })

/** A ratio of two scenarios: worked out in each round, the median of the rounds'. */
const ratio = (over: string, under: string, field: 'requests' | 'latencyP99' = 'requests'): number => {
  // autocannon reports whole milliseconds: latencies under one read as 0, and count as 1.
  const figure = (run: Measured): number => (field === 'requests' ? run.requests : Math.max(run.latencyP99, 1))
  return median(measured[over]!.map((run, round) => figure(run) / figure(measured[under]![round]!)))
}
const ratios = {
  registeredOverEcho: ratio(REGISTERED, ECHO),
  p99RegisteredOverEcho: ratio(REGISTERED, ECHO, 'latencyP99'),
  arrayOverEcho: ratio(ARRAY, ARRAY_ECHO),
  explicitOverRegistered: ratio(EXPLICIT, REGISTERED),
  isolatedOverInline: ratio(EXPLICIT, INLINE),
  ...(storeUrl === undefined ? {} : { storedOverEcho: ratio(STORED, ECHO) }),
}
/** Each round's registered ÷ echo, in the order measured (printed beside their median). */
const roundRatios = measured[REGISTERED]!.map((run, round) => run.requests / measured[ECHO]![round]!.requests)
// docs/spec/performance.md §2 as issue 20 set them.
const targets = {
  registeredOverEcho: { min: 0.85, met: ratios.registeredOverEcho >= 0.85 },
  p99RegisteredOverEcho: { max: 2, met: ratios.p99RegisteredOverEcho <= 2 },
  arrayOverEcho: { min: 0.8, met: ratios.arrayOverEcho >= 0.8 },
  explicitOverRegistered: { min: 0.7, met: ratios.explicitOverRegistered >= 0.7 },
}

if (values.json) {
  process.stdout.write(`${JSON.stringify({ node: process.version, duration, amount, connections, warmup, rounds, scenarios: results, ratios, roundRatios, targets })}\n`)
} else {
  const rows = Object.entries(results).map(([name, r]) =>
    [name.padEnd(40), Math.round(r.requests).toLocaleString('en').padStart(10), `${r.latencyP50} ms`.padStart(9), `${r.latencyP99} ms`.padStart(9), String(r.errors + r.non2xx).padStart(7)].join('  ')
  )
  const mark = (ok: boolean): string => (ok ? '✓ met' : '✗ NOT met')
  process.stdout.write(
    [
      `mapper-service HTTP benchmark — node ${process.version}; autocannon from a separate process, ${connections} connections, ${amount === undefined ? `${duration} s` : `${amount} requests`} per scenario after ${warmup} s of warm-up, ${rounds === 1 ? 'one round' : `median of ${rounds} rounds, round-robin, every other one reversed; each ratio the median of the rounds' own`}, 127.0.0.1`,
      '',
      `${'scenario'.padEnd(40)}  ${'req/s'.padStart(10)}  ${'p50'.padStart(9)}  ${'p99'.padStart(9)}  ${'errors'.padStart(7)}`,
      ...rows,
      '',
      `/map registered ÷ bare echo (req/s):   ${ratios.registeredOverEcho.toFixed(3)}  target ≥ 0.85 ${mark(targets.registeredOverEcho.met)}${rounds === 1 ? '' : ` (rounds: ${roundRatios.map((r) => r.toFixed(3)).join(', ')})`}`,
      `p99 registered ÷ p99 bare echo:        ${ratios.p99RegisteredOverEcho.toFixed(3)}  target ≤ 2    ${mark(targets.p99RegisteredOverEcho.met)}`,
      `/map array ÷ echo of its body (req/s): ${ratios.arrayOverEcho.toFixed(3)}  target ≥ 0.8  ${mark(targets.arrayOverEcho.met)}`,
      `/map explicit ÷ registered (req/s):    ${ratios.explicitOverRegistered.toFixed(3)}  target ≥ 0.7  ${mark(targets.explicitOverRegistered.met)}`,
      `/map explicit isolated ÷ inline:       ${ratios.isolatedOverInline.toFixed(3)}  (what the worker threads cost; p99 ${results[EXPLICIT]!.latencyP99} ms against ${results[INLINE]!.latencyP99} ms)`,
      ...(ratios.storedOverEcho === undefined ? [] : [`/map stored ÷ bare echo (req/s):       ${ratios.storedOverEcho.toFixed(3)}  target ≥ 0.85 ${mark(ratios.storedOverEcho >= 0.85)} (a mapping store configured: ${storeDirectory === undefined ? 'STORE_URL' : 'a directory'})`]),
      '',
    ].join('\n')
  )
}
