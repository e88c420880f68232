// Load generator for `npm run bench:http`, run in its own process so it does not share an event
// loop with the servers it measures: reads one scenario as JSON from argv, runs autocannon
// against 127.0.0.1, prints one JSON line (`Measured`, bench/load-client.ts).
import autocannon from 'autocannon'
import { readFileSync } from 'node:fs'
import { raisePriority, type Scenario } from './load-client.js'

const scenario = JSON.parse(process.argv[2] ?? '{}') as Scenario
if (typeof scenario.url !== 'string' || !scenario.url.startsWith('http://127.0.0.1:')) {
  process.stderr.write('load: the target must be on 127.0.0.1\n')
  process.exit(2)
}
if (scenario.priority !== undefined) raisePriority(scenario.priority)
/** This thread's time runnable but waiting for a CPU (ms; Linux), or undefined. */
function waited(): number | undefined {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6
  } catch {
    return undefined
  }
}
const waitedBefore = waited()
const result = await autocannon({
  url: scenario.url,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: scenario.body,
  connections: scenario.connections,
  // A fixed amount ends at autocannon's first sample tick after its last answer: every 100 ms
  // rather than every second, since its rate is the total over the duration, not the samples.
  ...(scenario.amount === undefined ? { duration: scenario.duration } : { amount: scenario.amount, sampleInt: 100 }),
})
// Per-second samples need whole seconds: a run of a fixed amount may end within the first.
const perSecond = scenario.amount === undefined ? result.requests.average : result.requests.total / Math.max(result.duration, 0.001)
process.stdout.write(
  `${JSON.stringify({
    requests: perSecond,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
    cpuMs: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000),
    waitMs: waitedBefore === undefined ? undefined : Math.round(waited()! - waitedBefore),
  })}\n`
)
