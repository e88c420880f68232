// One short round of the engine benchmark (performance.md §2: benchmarks are never part of
// `npm test`, a smoke run of each is, so they cannot rot). It asserts the report's shape and that
// the output check passed, never a timing or a ratio.
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { untracked } from './startup-support.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const SMOKE = ['--json', '--rounds', '1', '--seconds', '0.05', '--warmup', '0.02', '--records', '200']

t.test('npm run bench -- --json, one short round', async (t) => {
  // Runs as `npm run bench` does (tsx, no --expose-gc), so the re-run with gc is exercised too.
  // The runner's own NODE_OPTIONS are not the benchmark's: deleting them from env is not enough,
  // tap adds its process-info hooks to every child it sees spawned (untracked takes them out).
  const env = { ...process.env }
  delete env.NODE_OPTIONS
  const child = spawnSync(...untracked(process.execPath, ['--import', './test/loader/register.mjs', join('bench', 'engine.ts'), ...SMOKE]), {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 50_000,
  })
  t.equal(child.error, undefined, 'the benchmark started')
  t.equal(child.status, 0, `exit status 0 (stderr: ${(child.stderr ?? '').trim().slice(0, 2000)})`)

  let report: Record<string, unknown> = {}
  t.doesNotThrow(() => {
    report = JSON.parse(child.stdout) as Record<string, unknown>
  }, 'stdout is one JSON object and nothing else')

  t.equal(report.node, process.version, 'node names the running version')
  t.equal(report.outputsEqual, true, 'engine, JSONata and hand-written outputs are deep-equal')
  const workloads = report.workloads as Record<string, Record<string, unknown>> | undefined
  t.same(Object.keys(workloads ?? {}).sort(), ['array', 'small', 'wide'], 'the three workloads')
  for (const [name, rates] of Object.entries(workloads ?? {})) {
    t.same(Object.keys(rates).sort(), ['engine', 'handwritten', 'jsonata'], `${name}: the three contenders`)
    for (const [contender, rate] of Object.entries(rates)) {
      t.ok(typeof rate === 'number' && Number.isFinite(rate) && rate > 0, `${name}.${contender} is a positive number of ops/s`)
    }
  }

  const scaling = report.scaling as Record<string, unknown> | undefined
  t.match(
    scaling,
    {
      lowerRecords: 20,
      baseRecords: 200,
      scaledRecords: 2000,
      ratio: Number,
      handwrittenRatio: Number,
      overHandwritten: Number,
      lowerRatio: Number,
      handwrittenLowerRatio: Number,
    },
    'the scaling figures: the three sizes and both steps\' ratios'
  )
  const sizes = scaling?.sizes as Record<string, unknown>[] | undefined
  t.ok(Array.isArray(sizes) && sizes.length === 3, 'scaling.sizes has one entry per size')
  t.same((sizes ?? []).map((s) => s.records), [20, 200, 2000], 'records ÷ 10, records, records × 10')
  for (const size of sizes ?? []) {
    for (const key of ['engineMs', 'handwrittenMs', 'samples']) {
      const value = size[key]
      t.ok(typeof value === 'number' && Number.isFinite(value) && value > 0, `sizes[${size.records}].${key} is a positive number`)
    }
    for (const key of ['engineGcMs', 'handwrittenGcMs']) {
      const value = size[key]
      t.ok(typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= (size[key.replace('GcMs', 'Ms')] as number), `sizes[${size.records}].${key} is a number of ms within the total`)
    }
  }
  const [, base, scaled] = sizes ?? []
  if (base !== undefined && scaled !== undefined) {
    t.equal(scaling?.ratio, (scaled.engineMs as number) / (base.engineMs as number), 'ratio is the engine\'s time at scaledRecords ÷ at baseRecords')
    t.equal(scaling?.handwrittenRatio, (scaled.handwrittenMs as number) / (base.handwrittenMs as number), 'handwrittenRatio likewise')
  }

  const heap = report.heap as Record<string, unknown> | null | undefined
  t.match(heap, { records: 200, serializedBytes: Number, retainedBytes: Number, allocatedBytes: Number }, 'the heap figures (gc exposed by the re-run)')
  t.match(
    report.targets,
    {
      engineOverHandwritten: { min: 0.7, met: Boolean },
      engineOverJsonata: { min: 100, met: Boolean },
      arrayScaling: { min: 8, max: 12, maxOverHandwritten: 1.2, met: Boolean },
      arrayHeap: { max: 1.5, met: Boolean },
    },
    'each target, at its value of performance.md §3, is marked'
  )
})
