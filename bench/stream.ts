// The batch benchmark (README "Batches"): `npm run bench:stream`. The same registered mapping
// (`citation`, the bundled example) and input, measured three ways on 127.0.0.1, each load from a
// separate process: POST /map requests/s (autocannon, --connections, --duration), POST /map/stream
// lines/s (one stream of --lines lines, bench/stream-client.ts), and the CLI's `map --ndjson`
// lines/s over a file of as many lines (output to /dev/null). The service logs as by default (one
// line per request) into /dev/null. While the measured stream runs, /health is asked every 10 ms
// from a worker thread (its own event loop): the worst wait is printed beside lines/s, the target
// 50 ms, since a stream must never hold the service's loop (README "Batches"). Both rates are also
// printed against a floor measured in the same run, on the same machine: the same lines parsed,
// evaluated by the engine and printed in one loop, with no I/O and no service: what the service
// adds is what the ratio lacks of 1, whatever the machine's speed that day.
import { spawn } from 'node:child_process'
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Worker } from 'node:worker_threads'
import { pino } from 'pino'
import { Mapper } from '../engine/index.js'
import { bundledMappingsPath, loadMappings } from '../sources/mappings.js'
import { buildServer } from '../server.js'
import { LOADER, runLoad } from './load-client.js'
import { citationInput } from './workloads.js'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    lines: { type: 'string', default: '200000' },
  },
})
const duration = Number(values.duration)
const connections = Number(values.connections)
const lines = Number(values.lines)

/** Run a script of this directory (or the CLI) in its own process; resolves with its stdout. */
function run(args: string[], stdout: 'pipe' | 'ignore' = 'pipe'): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', LOADER, ...args], { stdio: ['ignore', stdout, 'inherit'] })
    let out = ''
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 || (code === 1 && stdout === 'ignore') ? resolve(out) : reject(new Error(`${args[0]} exited ${code}`))))
  })
}

/** The most /health may wait while the stream runs. */
const HEALTH_TARGET_MS = 50

// One keep-alive connection, a probe 10 ms after the last answer; on "stop" it posts the worst
// wait it saw (a probe still in flight counted at its age) and its failures, and ends.
const HEALTH_PROBE = `
const { parentPort, workerData } = require('node:worker_threads')
const http = require('node:http')
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
let worst = 0, failures = 0, probes = 0, sent = 0, timer
parentPort.once('message', () => {
  clearTimeout(timer)
  const age = sent === 0 ? 0 : performance.now() - sent
  parentPort.postMessage({ worst: Math.max(worst, age), failures, probes })
  agent.destroy()
})
function probe() {
  sent = performance.now()
  const done = (ok) => {
    worst = Math.max(worst, performance.now() - sent)
    sent = 0
    probes++
    if (!ok) failures++
    timer = setTimeout(probe, 10)
  }
  http.get(workerData.url, { agent }, (response) => {
    response.resume()
    response.on('end', () => done(response.statusCode === 200))
  }).on('error', () => done(false))
}
probe()
`

/** Asks /health every 10 ms from a worker thread until `stop`, which answers the worst wait. */
function probeHealth(url: string): { stop(): Promise<{ worst: number; failures: number; probes: number }> } {
  const worker = new Worker(HEALTH_PROBE, { eval: true, workerData: { url } })
  return {
    stop: () =>
      new Promise((resolve) => {
        worker.once('message', (report: { worst: number; failures: number; probes: number }) => {
          void worker.terminate()
          resolve(report)
        })
        worker.postMessage('stop')
      }),
  }
}

const bundled = await loadMappings(bundledMappingsPath())
const service = await buildServer({
  mappings: bundled,
  logger: pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false })),
})
await service.listen({ port: 0, host: '127.0.0.1' })
const origin = `http://127.0.0.1:${(service.server.address() as { port: number }).port}`
const line = JSON.stringify(citationInput)

// Warm-up, unmeasured: the JIT sees both paths first.
await runLoad({ url: `${origin}/map`, body: JSON.stringify({ mapping: 'citation', input: citationInput }), connections, duration: 2 })
await run([fileURLToPath(new URL('./stream-client.ts', import.meta.url)), `${origin}/map/stream?mapping=citation`, String(Math.min(lines, 50000)), line])

const map = await runLoad({ url: `${origin}/map`, body: JSON.stringify({ mapping: 'citation', input: citationInput }), connections, duration })
const health = probeHealth(`${origin}/health`)
const streamed = JSON.parse(await run([fileURLToPath(new URL('./stream-client.ts', import.meta.url)), `${origin}/map/stream?mapping=citation`, String(lines), line])) as { lines: number; errors: number; seconds: number }
const waited = await health.stop()
await service.close()
if (streamed.lines !== lines || streamed.errors !== 0) throw new Error(`the stream answered ${streamed.lines} lines, ${streamed.errors} errors`)

const dir = mkdtempSync(join(tmpdir(), 'bench-stream-'))
const file = join(dir, 'input.ndjson')
writeFileSync(file, `${line}\n`.repeat(lines))
const cliStarted = performance.now()
await run([fileURLToPath(new URL('../bin/mapper-service.ts', import.meta.url)), 'map', 'citation', '--ndjson', file], 'ignore')
const cliSeconds = (performance.now() - cliStarted) / 1000
rmSync(dir, { recursive: true, force: true })

/** Lines/s of the floor: parse, evaluate, print, in a loop of this process (the median of 5 rounds of `lines`). */
function floor(): number {
  const plan = new Mapper({ mappings: bundled }).compile('citation')
  const rounds: number[] = []
  for (let round = 0; round < 6; round++) {
    const started = performance.now()
    let printed = 0
    for (let i = 0; i < lines; i++) {
      const envelope = plan.run(JSON.parse(line))
      if (envelope instanceof Promise) throw new Error('citation is synchronous')
      printed += `${JSON.stringify(envelope)}\n`.length
    }
    if (printed === 0) throw new Error('nothing printed')
    // The first round warms the JIT up.
    if (round > 0) rounds.push(lines / ((performance.now() - started) / 1000))
  }
  return rounds.sort((a, b) => a - b)[2]!
}
const floorRate = floor()

const rate = (n: number): string => Math.round(n).toLocaleString('en')
process.stdout.write(
  [
    `mapper-service batch benchmark — node ${process.version}, registered citation, 127.0.0.1`,
    `POST /map          ${rate(map.requests).padStart(9)} requests/s  (autocannon, ${connections} connections, ${duration} s; p50 ${map.latencyP50} ms)`,
    `floor              ${rate(floorRate).padStart(9)} lines/s     (parse, evaluate, print in one loop of this process: no I/O, no service)`,
    `POST /map/stream   ${rate(streamed.lines / streamed.seconds).padStart(9)} lines/s     (one stream of ${rate(lines)} lines in ${streamed.seconds.toFixed(2)} s; ÷ floor ${(streamed.lines / streamed.seconds / floorRate).toFixed(3)})`,
    `  /health meanwhile  worst wait ${Math.round(waited.worst)} ms over ${rate(waited.probes)} probes every 10 ms from a worker thread${waited.failures > 0 ? `, ${waited.failures} failed` : ''} (target ≤ ${HEALTH_TARGET_MS} ms ${waited.worst <= HEALTH_TARGET_MS && waited.failures === 0 ? '✓' : '✗'})`,
    `map --ndjson (CLI) ${rate(lines / cliSeconds).padStart(9)} lines/s     (${rate(lines)} lines from a file in ${cliSeconds.toFixed(2)} s, process start included; ÷ floor ${(lines / cliSeconds / floorRate).toFixed(3)})`,
    '',
  ].join('\n')
)
