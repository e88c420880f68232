// The engine benchmark of docs/spec/performance.md §1–3: `npm run bench`.
//
// For each workload (bench/workloads.ts) it first checks that the engine, JSONata and the
// hand-written function produce deep-equal envelopes (and that the hand-written validators agree
// with the engine on an invalid input), exiting with status 1 and the first difference if not.
// Then it measures operations per second of the three side by side (the engine compiled once with
// `mapper.compile`, JSONata compiled once), the `array` time at 10 × the records against the base
// size, and the heap cost of one `array` evaluation, and prints a table marked against §3.
//
// Flags (after `npm run bench --`):
//   --json          print only one JSON object: { node, workloads: { small: { engine, jsonata,
//                   handwritten }, wide, array }, plus options, outputsEqual, ratios, scaling,
//                   heap and targets }
//   --rounds <n>    timed rounds per contender, the median is reported (default 5)
//   --seconds <s>   minimum length of one round (default 1)
//   --warmup <s>    warm-up per contender before the first round (default 1)
//   --records <n>   records of the `array` workload (default 10000); scaling runs 10 × as many
// A quick smoke run: --rounds 1 --seconds 0.05 --warmup 0.02 --records 200
// npm prints its own `> mapper-service bench` banner on stdout; for JSON alone use
// `npm run --silent bench -- --json` (or `npx tsx bench/engine.ts --json`).
//
// The heap figures need `gc`. Without --expose-gc the script runs itself again once in a child
// process with the same loader flags plus --expose-gc (package.json stays untouched); if that
// child cannot start, the benchmark runs here and reports the heap figures as unavailable.
import { spawnSync } from 'node:child_process'
import { isDeepStrictEqual, parseArgs } from 'node:util'
import jsonata from 'jsonata'
import { Mapper } from '../engine/index.js'
import { compare, type Operation, type Timing } from './measure.js'
import { heapCost, type HeapCost } from './memory.js'
import { ARRAY_RECORDS, arrayInput, DOCUMENTS, workloads, type Workload, type WorkloadName } from './workloads.js'

const TARGET_VS_HANDWRITTEN = 0.2
const TARGET_VS_JSONATA = 50
const TARGET_SCALING = [8, 12] as const
const TARGET_HEAP = 3
const SCALE = 10
const REEXEC_MARK = 'MAPPER_BENCH_REEXEC'

interface Options extends Timing {
  readonly json: boolean
  readonly records: number
}

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      rounds: { type: 'string', default: '5' },
      seconds: { type: 'string', default: '1' },
      warmup: { type: 'string', default: '1' },
      records: { type: 'string', default: String(ARRAY_RECORDS) },
    },
  })
  const positive = (name: string, text: string, integer: boolean): number => {
    const n = Number(text)
    if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
      throw new RangeError(`--${name} must be a positive ${integer ? 'integer' : 'number'}, not ${text}`)
    }
    return n
  }
  return {
    json: values.json,
    rounds: positive('rounds', values.rounds, true),
    seconds: positive('seconds', values.seconds, false),
    warmup: positive('warmup', values.warmup, false),
    records: positive('records', values.records, true),
  }
}

/** Run this script again with --expose-gc; its exit status, or null when it could not start. */
function reexecWithGc(): number | null {
  const script = process.argv[1]
  if (script === undefined) return null
  const child = spawnSync(process.execPath, [...process.execArgv, '--expose-gc', script, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, [REEXEC_MARK]: '1' },
  })
  if (child.error !== undefined) return null
  return child.status ?? 1
}

// ---------------------------------------------------------------------------------------------
// The output check.

/** A JSON copy: what a caller of the service would receive. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown

/** The pointer of the first place where two JSON values differ, with both sides. */
function firstDifference(a: unknown, b: unknown, path = ''): string | null {
  if (isDeepStrictEqual(a, b)) return null
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    for (const key of keys) {
      const found = firstDifference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}/${key}`)
      if (found !== null) return found
    }
  }
  const show = (v: unknown): string => (v === undefined ? '(absent)' : JSON.stringify(v).slice(0, 200))
  return `at ${path || '/'}: ${show(a)} vs ${show(b)}`
}

type Contender = 'engine' | 'jsonata' | 'handwritten'

interface Prepared {
  readonly workload: Workload
  readonly operations: Record<Contender, Operation>
  readonly run: (input: unknown) => unknown
}

function prepare(mapper: Mapper, workload: Workload): Prepared {
  const compiled = mapper.compile(workload.document.$id!)
  const expression = jsonata(workload.jsonata)
  const { input, handwritten } = workload
  return {
    workload,
    run: (other) => compiled.run(other),
    operations: {
      engine: () => compiled.run(input),
      jsonata: () => expression.evaluate(input),
      handwritten: () => handwritten(input),
    },
  }
}

/** Every difference found, as messages (empty when all outputs agree). */
async function checkOutputs(prepared: readonly Prepared[]): Promise<string[]> {
  const problems: string[] = []
  for (const { workload, operations, run } of prepared) {
    const engine = asJson(await operations.engine())
    for (const other of ['jsonata', 'handwritten'] as const) {
      const difference = firstDifference(engine, asJson(await operations[other]()))
      if (difference !== null) problems.push(`${workload.name}: engine and ${other} differ ${difference}`)
    }
    if ((engine as { valid?: unknown }).valid !== true) {
      problems.push(`${workload.name}: the engine's envelope is not valid: ${JSON.stringify(engine).slice(0, 300)}`)
    }
    if (workload.invalidInput !== undefined) {
      const difference = firstDifference(asJson(await run(workload.invalidInput)), asJson(workload.handwritten(workload.invalidInput)))
      if (difference !== null) problems.push(`${workload.name} (invalid input): engine and handwritten differ ${difference}`)
    }
  }
  return problems
}

// ---------------------------------------------------------------------------------------------
// Reporting.

function formatRate(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toPrecision(3)
}

function formatBytes(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(2)} MiB` : `${(n / 1024).toFixed(1)} KiB`
}

const mark = (met: boolean): string => (met ? '✓ met' : '✗ NOT met')

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('   ')
  return [line(header), widths.map((w) => '-'.repeat(w)).join('   '), ...rows.map(line)].join('\n')
}

// ---------------------------------------------------------------------------------------------

const USAGE = 'usage: npm run bench -- [--json] [--rounds n] [--seconds s] [--warmup s] [--records n]'

async function main(): Promise<number> {
  let options: Options
  try {
    options = readOptions()
  } catch (error) {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`)
    return 2
  }
  if ((globalThis as { gc?: unknown }).gc === undefined && process.env[REEXEC_MARK] === undefined) {
    const status = reexecWithGc()
    if (status !== null) return status
  }
  const progress = (text: string): void => {
    if (!options.json) process.stderr.write(`${text}\n`)
  }

  const mapper = new Mapper({ mappings: [...DOCUMENTS] }, {})
  const all = workloads(options.records)
  const prepared = (['small', 'wide', 'array'] as const).map((name) => prepare(mapper, all[name]))

  const problems = await checkOutputs(prepared)
  if (problems.length > 0) {
    process.stderr.write(`bench: the contenders' outputs differ, nothing was measured:\n  ${problems.join('\n  ')}\n`)
    return 1
  }

  const rates = {} as Record<WorkloadName, Record<Contender, number>>
  for (const { workload, operations } of prepared) {
    progress(`measuring ${workload.name} …`)
    rates[workload.name] = await compare(operations, options)
  }

  // Linear scaling: the same compiled plan at SCALE × the records.
  progress(`measuring array at ${options.records} and ${options.records * SCALE} records …`)
  const arrayPrepared = prepared[2]!
  const scaledInput = arrayInput(options.records * SCALE)
  const scaledDifference = firstDifference(asJson(await arrayPrepared.run(scaledInput)), asJson(all.array.handwritten(scaledInput)))
  if (scaledDifference !== null) {
    process.stderr.write(`bench: array at ${options.records * SCALE} records: engine and handwritten differ ${scaledDifference}\n`)
    return 1
  }
  const scalingRates = await compare(
    {
      engineBase: arrayPrepared.operations.engine,
      engineScaled: () => arrayPrepared.run(scaledInput),
      handwrittenBase: arrayPrepared.operations.handwritten,
      handwrittenScaled: () => all.array.handwritten(scaledInput),
    },
    options
  )
  const scaling = {
    baseRecords: options.records,
    scaledRecords: options.records * SCALE,
    engineMsBase: 1000 / scalingRates.engineBase,
    engineMsScaled: 1000 / scalingRates.engineScaled,
    ratio: scalingRates.engineBase / scalingRates.engineScaled,
    handwrittenRatio: scalingRates.handwrittenBase / scalingRates.handwrittenScaled,
  }

  progress('measuring the heap cost of one array evaluation …')
  const engineHeap = await heapCost(arrayPrepared.operations.engine)
  const handwrittenHeap = await heapCost(arrayPrepared.operations.handwritten)
  const heapFigures = (cost: HeapCost) => ({
    ...cost,
    retainedRatio: cost.retainedBytes / cost.serializedBytes,
    allocatedRatio: cost.allocatedBytes / cost.serializedBytes,
  })
  const heap =
    engineHeap === null || handwrittenHeap === null
      ? null
      : { records: options.records, ...heapFigures(engineHeap), handwritten: heapFigures(handwrittenHeap) }

  const ratios = Object.fromEntries(
    Object.entries(rates).map(([name, r]) => [
      name,
      { engineOverHandwritten: r.engine / r.handwritten, engineOverJsonata: r.engine / r.jsonata },
    ])
  ) as Record<WorkloadName, { engineOverHandwritten: number; engineOverJsonata: number }>
  const ratioList = Object.values(ratios)
  const targets = {
    engineOverHandwritten: { min: TARGET_VS_HANDWRITTEN, met: ratioList.every((r) => r.engineOverHandwritten >= TARGET_VS_HANDWRITTEN) },
    engineOverJsonata: { min: TARGET_VS_JSONATA, met: ratioList.every((r) => r.engineOverJsonata >= TARGET_VS_JSONATA) },
    arrayScaling: { min: TARGET_SCALING[0], max: TARGET_SCALING[1], met: scaling.ratio >= TARGET_SCALING[0] && scaling.ratio <= TARGET_SCALING[1] },
    arrayHeap: { max: TARGET_HEAP, met: heap === null ? null : heap.retainedRatio <= TARGET_HEAP },
  }

  if (options.json) {
    const { json: _json, ...shown } = options
    const report = { node: process.version, options: shown, outputsEqual: true, workloads: rates, ratios, scaling, heap, targets }
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    return 0
  }

  const rows = prepared.map(({ workload: { name } }) => {
    const r = rates[name]
    const q = ratios[name]
    return [
      name,
      formatRate(r.engine),
      formatRate(r.jsonata),
      formatRate(r.handwritten),
      `${q.engineOverHandwritten.toFixed(3)} ${mark(q.engineOverHandwritten >= TARGET_VS_HANDWRITTEN)}`,
      `${q.engineOverJsonata.toFixed(1)} ${mark(q.engineOverJsonata >= TARGET_VS_JSONATA)}`,
    ]
  })
  const lines = [
    `mapper-service engine benchmark — node ${process.version}; ops/s = median of ${options.rounds} round(s) of ≥ ${options.seconds} s after ${options.warmup} s warm-up; array = ${options.records.toLocaleString('en-US')} records`,
    'all outputs deep-equal: yes',
    '',
    table(
      ['workload', 'engine ops/s', 'jsonata ops/s', 'hand-written ops/s', `engine÷hand-written (≥ ${TARGET_VS_HANDWRITTEN})`, `engine÷jsonata (≥ ${TARGET_VS_JSONATA})`],
      rows
    ),
    '',
    `array scaling: ${scaling.scaledRecords.toLocaleString('en-US')} records ${scaling.engineMsScaled.toFixed(2)} ms ÷ ${scaling.baseRecords.toLocaleString('en-US')} records ${scaling.engineMsBase.toFixed(2)} ms = ${scaling.ratio.toFixed(2)} (target ${TARGET_SCALING[0]}–${TARGET_SCALING[1]}) ${mark(targets.arrayScaling.met)}   [hand-written: ${scaling.handwrittenRatio.toFixed(2)}]`,
  ]
  if (heap === null) {
    lines.push('array heap: unavailable (gc is not exposed; run node with --expose-gc)')
  } else {
    lines.push(
      `array heap, one evaluation: retained ${formatBytes(heap.retainedBytes)} for ${formatBytes(heap.serializedBytes)} of serialized output = ${heap.retainedRatio.toFixed(2)}× (target ≤ ${TARGET_HEAP}×) ${mark(heap.retainedRatio <= TARGET_HEAP)}`,
      `  allocated during the evaluation, garbage included: ${formatBytes(heap.allocatedBytes)} = ${heap.allocatedRatio.toFixed(2)}× the output`,
      `  hand-written: retained ${formatBytes(heap.handwritten.retainedBytes)} (${heap.handwritten.retainedRatio.toFixed(2)}×), allocated ${formatBytes(heap.handwritten.allocatedBytes)} (${heap.handwritten.allocatedRatio.toFixed(2)}×)`
    )
  }
  process.stdout.write(`${lines.join('\n')}\n`)
  return 0
}

main().then(
  (status) => {
    process.exitCode = status
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exitCode = 1
  }
)
