// `mapper-service map <mapping> --ndjson [file|-]`, in this process through runCommand with an io
// that keeps nothing: 200,000 records from a generated file answered in order in constant memory
// (a malformed line and one over --max-line-bytes answered by error lines, the rest intact),
// standard input, output written only as fast as it drains, the progress line on a terminal,
// --concurrency for a mapping that awaits, and the argument errors.
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import t from 'tap'
import { runCommand } from '../bin/commands.js'
import type { Teardown } from './http-support.js'
import { runCli } from './startup-support.js'

const CLEAN = { MAPPINGS: '', EXTENSIONS: '', OPTIONS: '', OPTIONS_FILE: '' }

async function tempDir(t: Teardown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cli-ndjson-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

interface Streamed {
  code: number | undefined
  stderr: string
  drains: number
}

/** Run a command with an io whose output goes line by line to `onLine` (kept nowhere), writes reporting backpressure every 50 chunks. */
async function streamed(args: string[], onLine: (line: string) => void, options: { env?: Record<string, string>; terminal?: boolean; stdin?: string } = {}): Promise<Streamed> {
  let rest = ''
  let stderr = ''
  let writes = 0
  let drains = 0
  const take = (text: string): void => {
    const lines = (rest + text).split('\n')
    rest = lines.pop()!
    for (const line of lines) onLine(line)
  }
  const code = await runCommand(args, {
    out: take,
    err: (text) => (stderr += text),
    stdin: async () => options.stdin ?? '',
    env: { ...process.env, ...CLEAN, ...options.env },
    write: (text) => {
      take(text)
      return ++writes % 50 !== 0
    },
    drain: async () => {
      drains++
      await new Promise((resolve) => setImmediate(resolve))
    },
    errIsTerminal: options.terminal === true,
  })
  if (rest !== '') onLine(rest)
  return { code, stderr, drains }
}

const COUNT = 200_000
const MALFORMED = 50_000
const TOO_LONG = 150_000
const LIMIT = 2048

t.test('200,000 records from a file: answered in order in constant memory; a bad line and a line over the limit are error lines', async (t) => {
  const dir = await tempDir(t)
  const mapping = join(dir, 'rec.json')
  await writeFile(mapping, JSON.stringify({ mapping: { '/n': '/i', '/tag': { constant: 'r' } } }))
  const input = join(dir, 'records.ndjson')
  const file = createWriteStream(input)
  let chunk = ''
  for (let line = 1; line <= COUNT; line++) {
    if (line === MALFORMED) chunk += '{"i":\n'
    else if (line === TOO_LONG) chunk += `{"i":${line - 1},"pad":"${'x'.repeat(LIMIT)}"}\n`
    else chunk += `{"i":${line - 1},"pad":"${'p'.repeat(100)}"}\n`
    if (line % 5000 === 0) {
      if (!file.write(chunk)) await once(file, 'drain')
      chunk = ''
    }
  }
  file.end(chunk)
  await once(file, 'close')

  globalThis.gc?.()
  const before = process.memoryUsage().rss
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 25)
  t.teardown(() => clearInterval(sampler))
  let answers = 0
  let outOfOrder = 0
  const errors: any[] = []
  const ran = await streamed(['map', mapping, '--ndjson', input, '--max-line-bytes', String(LIMIT)], (text) => {
    answers++
    const answer = JSON.parse(text)
    if ('error' in answer) errors.push(answer)
    else if (answer.n !== answers - 1 || answer.tag !== 'r' || answer.valid !== true) outOfOrder++
  })
  clearInterval(sampler)
  t.equal(ran.code, 1, 'exit 1: not every line answered a valid envelope')
  t.equal(ran.stderr, '', 'no progress when standard error is not a terminal')
  t.ok(ran.drains > 0, 'waited for the output to drain when it asked')
  t.equal(answers, COUNT)
  t.equal(outOfOrder, 0, 'every envelope in its line\'s place')
  t.strictSame(errors, [
    { line: MALFORMED, status: 400, error: { code: 'BadRequest', message: `Line ${MALFORMED} must be valid JSON (column 6): unexpected end of input` } },
    { line: TOO_LONG, status: 413, error: { code: 'PayloadTooLarge', message: `Line ${TOO_LONG} exceeds the ${LIMIT}-byte limit (${LIMIT + 21} bytes)` } },
  ])
  const grown = (peak - before) / 2 ** 20
  t.ok(grown < 150, `the process grew by ${grown.toFixed(1)} MB (at most 150) for a ${COUNT}-line file of about 25 MB`)
})

t.test('standard input ("-" or no file), and exit 0 when every line is a valid envelope', async (t) => {
  const stdin = '{"message":"a"}\n\n{"message":"b"}\r\n'
  for (const args of [['map', 'greet', '--ndjson', '-'], ['map', 'greet', '--ndjson']]) {
    const ran = await runCli(args, { stdin })
    t.equal(ran.code, 0)
    t.equal(ran.stdout, '{"text":"a","valid":true,"errors":[]}\n{"text":"b","valid":true,"errors":[]}\n')
  }
  const empty = await runCli(['map', 'greet', '--ndjson'], { stdin: '' })
  t.equal(empty.code, 0)
  t.equal(empty.stdout, '')
})

t.test('progress on a terminal: records, records/s, bytes, and from a file a bar with an ETA', async (t) => {
  const dir = await tempDir(t)
  const input = join(dir, 'in.ndjson')
  await writeFile(input, Array.from({ length: 1000 }, (_, i) => `{"message":${i}}\n`).join(''))
  let lines = 0
  const fromFile = await streamed(['map', 'greet', '--ndjson', input], () => lines++, { terminal: true })
  t.equal(lines, 1000)
  // Each redraw is a carriage return and ESC [ K (erase to the end of the line), shown here as |.
  const shown = (stderr: string): string => stderr.replaceAll('\r\u001b[K', '|')
  // 1000 lines of {"message":i}\n: 15,890 bytes, 15.5 KiB (binary units, labelled so).
  t.match(shown(fromFile.stderr), /\|1,000 records {2}[\d,]+ records\/s {2}15\.5 KiB of 15\.5 KiB {2}\[#{24}\] 100% {2}ETA 0s\n$/)
  const fromStdin = await streamed(['map', 'greet', '--ndjson', '-'], () => {}, { terminal: true, stdin: '{"message":1}\n' })
  t.match(shown(fromStdin.stderr), /\|1 records {2}[\d,]+ records\/s {2}14 B\n$/, 'no size, so no bar')
})

t.test('progress sizes: binary units labelled KiB, MiB, GiB (1024-based), never kB or MB', async (t) => {
  const { formatBytes } = await import('../bin/commands.js')
  const cases: Array<[number, string]> = [
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1.0 KiB'],
    [16890, '16.5 KiB'],
    [1048575, '1.0 MiB'], // 1023.999 KiB rounds to the next unit, never "1024.0 KiB"
    [1048576, '1.0 MiB'],
    [5 * 1024 ** 2 + 512 * 1024, '5.5 MiB'],
    [1024 ** 3, '1.0 GiB'],
    [3 * 1024 ** 4, '3.0 TiB'],
    [2048 * 1024 ** 4, '2048.0 TiB'],
  ]
  for (const [bytes, text] of cases) t.equal(formatBytes(bytes), text, String(bytes))
})

t.test('--concurrency: a mapping that awaits runs that many lines at once, answered in input order', async (t) => {
  const dir = await tempDir(t)
  const extensions = join(dir, 'extensions.mjs')
  await writeFile(
    extensions,
    `const state = globalThis.ndjsonCliState = { inFlight: 0, most: 0 }
export default { plugins: { wait: async (_options, value) => {
  state.inFlight++; state.most = Math.max(state.most, state.inFlight)
  await new Promise((resolve) => setTimeout(resolve, 20 - (value % 10) * 2))
  state.inFlight--
  return value
} } }
`
  )
  const mapping = join(dir, 'slow.json')
  await writeFile(mapping, JSON.stringify({ mapping: { '/v': { source: '/v', wait: {} } } }))
  const stdin = Array.from({ length: 30 }, (_, v) => `{"v":${v}}\n`).join('')
  const state = (): { most: number } => (globalThis as unknown as { ndjsonCliState: { most: number } }).ndjsonCliState
  for (const [concurrency, most] of [['6', 6], ['1', 1]] as const) {
    // The module is loaded once per process: its count starts again for each run.
    if ('ndjsonCliState' in globalThis) state().most = 0
    const values: number[] = []
    const ran = await streamed(['map', mapping, '--ndjson', '--concurrency', concurrency], (line) => values.push(JSON.parse(line).v), { env: { EXTENSIONS: extensions }, stdin })
    t.equal(ran.code, 0)
    t.strictSame(values, Array.from({ length: 30 }, (_, v) => v), `--concurrency ${concurrency}: in input order`)
    t.equal(state().most, most, `at most ${most} at once`)
  }
})

t.test('argument errors exit 2 with one line', async (t) => {
  for (const [args, message] of [
    [['map', 'greet', '--ndjson', '--concurrency', '0'], '--concurrency must be an integer from 1 to 64'],
    [['map', 'greet', '--ndjson', '--max-line-bytes', 'x'], '--max-line-bytes must be an integer from 1 to 1073741824'],
    [['map', 'greet', '--concurrency', '2'], '--concurrency and --max-line-bytes go with --ndjson'],
    [['map', 'greet', '--ndjson', '--explain'], '--explain and --ndjson do not go together'],
    [['map', 'greet', '--ndjson', '/nonexistent/in.ndjson'], '/nonexistent/in.ndjson: cannot be read'],
  ] as const) {
    const ran = await runCli([...args])
    t.equal(ran.code, 2, args.join(' '))
    t.equal(ran.stderr, `mapper-service: ${message}\n`)
  }
  t.match((await runCli(['map', '--help'])).stdout, /--ndjson/)
})

t.test('the bytes read exactly, as POST /map/stream reads them: a BOM before an empty first line, the limit with LF and CRLF, invalid UTF-8', async (t) => {
  const dir = await tempDir(t)
  const mapping = join(dir, 'echo.json')
  await writeFile(mapping, JSON.stringify({ mapping: { '/v': '/v' } }))
  const limit = 16
  const exact = `{"v":"${'x'.repeat(limit - 8)}"}`
  const over = `{"v":"${'x'.repeat(limit - 7)}"}`
  const input = join(dir, 'in.ndjson')
  await writeFile(
    input,
    Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(`\n${exact}\n${exact}\r\n${over}\n${over}\r\n{"v":"`),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}\r\n{"v":"é"}\n'),
    ])
  )
  const answers: any[] = []
  const ran = await streamed(['map', mapping, '--ndjson', input, '--max-line-bytes', String(limit)], (line) => answers.push(JSON.parse(line)))
  t.equal(ran.code, 1)
  const value = { v: 'x'.repeat(limit - 8), valid: true, errors: [] }
  t.strictSame(answers, [
    value,
    value,
    { line: 4, status: 413, error: { code: 'PayloadTooLarge', message: `Line 4 exceeds the ${limit}-byte limit (${limit + 1} bytes)` } },
    { line: 5, status: 413, error: { code: 'PayloadTooLarge', message: `Line 5 exceeds the ${limit}-byte limit (${limit + 1} bytes)` } },
    { line: 6, status: 400, error: { code: 'BadRequest', message: 'Line 6 is not valid UTF-8' } },
    { v: 'é', valid: true, errors: [] },
  ], 'line 1 (after the mark) is empty and skipped; exactly the limit passes both ways, one more fails both ways')
})
