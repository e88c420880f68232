// One short round of `npm run bench:http`, so the HTTP benchmark cannot rot. It asserts the shape
// of the report and that every scenario answered, never a speed.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { packageInfo } from '../support/package.js'
import { untracked } from './startup-support.js'

const run = promisify(execFile)

t.test('bench:http runs one short round and reports every scenario', async (t) => {
  // A fixed amount of requests per scenario and round (--amount), not a duration: autocannon would
  // stop at its first one-second sample after --duration at the least. What time is left is the
  // six load-generator processes starting (bench/load-client.ts, a process per scenario and round; one round, for the shape of the report).
  // As `npm run bench:http` runs: node's arguments taken from the script itself (its V8 flags once
  // stopped the test loader's worker threads, and only this script has them), and without tap's
  // process-info hooks (untracked), which the benchmark and each load generator it starts would
  // otherwise load too, about a second of start-up each.
  const { root } = packageInfo()
  const [command, ...script] = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['bench:http']!.split(' ')
  t.equal(command, 'node', 'npm run bench:http is node with arguments')
  const { stdout } = await run(...untracked(process.execPath, [...script, '--json', '--amount', '200', '--connections', '2', '--warmup', '0', '--rounds', '1']), {
    cwd: root,
    timeout: 90000,
  })
  const report = JSON.parse(stdout) as {
    node: string
    amount: number
    rounds: number
    scenarios: Record<string, { requests: number; latencyP50: number; latencyP99: number; errors: number; non2xx: number; total: number }>
    ratios: Record<string, number>
    roundRatios: number[]
    targets: Record<string, { met: boolean }>
  }
  t.equal(report.node, process.version)
  t.equal(report.rounds, 1, 'one round: the median of one is the run itself')
  t.equal(report.amount, 200, 'a fixed amount of requests per scenario')
  const names = Object.keys(report.scenarios)
  t.equal(names.length, 6)
  // In the order measured: each ratio's two scenarios side by side.
  t.match(names, ['bare echo', '/map registered citation', '/map explicit citation', '/map explicit citation, isolation off', /^bare echo, the array body/, /^\/map array/])
  for (const [name, scenario] of Object.entries(report.scenarios)) {
    t.ok(scenario.total >= 200, `${name} answered every request`)
    t.ok(Number.isFinite(scenario.requests) && scenario.requests > 0, `${name}: requests/s measured`)
    t.equal(scenario.errors, 0, `${name} had no errors`)
    t.equal(scenario.non2xx, 0, `${name} answered 2xx only`)
  }
  t.same(Object.keys(report.ratios).sort(), ['arrayOverEcho', 'explicitOverRegistered', 'isolatedOverInline', 'p99RegisteredOverEcho', 'registeredOverEcho'])
  for (const target of Object.values(report.targets)) t.type(target.met, 'boolean')
  t.equal(report.roundRatios.length, 1, "one round's registered ÷ echo")
  t.equal(report.ratios.registeredOverEcho, report.roundRatios[0], 'the ratio of one round is that round\'s')
})
