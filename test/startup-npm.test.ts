// The npm scripts an operator runs, run by the real npm from the package laid out as installed
// (test/package-support.ts): `npm start` under a supervisor that stops it with SIGTERM to npm's own
// process, and the Quick start's development preset `npm run dev`. npm runs a script as `sh -c
// <script>`; without `exec` the shell stayed between npm and node, died of the SIGTERM npm passes
// on, and left the service running with PPID 1. Linux only: the process tree and the listening
// sockets are read from /proc.
import { readdirSync, readFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import t, { type Test } from 'tap'
import { packageLayout } from './package-support.js'
import { placedBlocks } from './readme-support.js'
import { exchange, freePort, tempTree, untracked, waitUntil } from './startup-support.js'

t.setTimeout(120000)

/** How long a supervisor's SIGTERM may take to end the whole tree (the bound). */
const STOP_WITHIN_MS = 5000

/** A process's parent and state from /proc/<pid>/stat (its name, in parentheses, may hold anything), or undefined once it is gone. */
function stat(pid: number): { ppid: number; state: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ')
    return { ppid: Number(ppid), state: state! }
  } catch {
    return undefined
  }
}

/** Running: present and not a zombie (a zombie has ended and only waits for its parent to read its status). */
const running = (pid: number): boolean => {
  const found = stat(pid)
  return found !== undefined && found.state !== 'Z'
}

/** `root` and every process below it, now. */
function tree(root: number): number[] {
  const byParent = new Map<number, number[]>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const found = stat(Number(name))
    if (found !== undefined) byParent.set(found.ppid, [...(byParent.get(found.ppid) ?? []), Number(name)])
  }
  const all = [root]
  for (let i = 0; i < all.length; i++) all.push(...(byParent.get(all[i]!) ?? []))
  return all
}

const commandLine = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
  } catch {
    return '(gone)'
  }
}

/** The local addresses listening on TCP `port` (IPv4 and IPv6), from /proc/net/tcp{,6}. */
function listeningAddresses(port: number): string[] {
  const addresses: string[] = []
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/)
      if (local === undefined || state !== '0A') continue
      const [address, hexPort] = local.split(':') as [string, string]
      if (parseInt(hexPort, 16) !== port) continue
      // IPv4 in /proc is the address's 32-bit value in host (little-endian) order.
      addresses.push(address.length === 8 ? [6, 4, 2, 0].map((i) => parseInt(address.slice(i, i + 2), 16)).join('.') : `[${address}]`)
    }
  }
  return addresses
}

interface Script {
  readonly npm: number
  readonly port: number
  output(): string
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/**
 * `npm run <script>` (npm's own process, the spawned child: `env -u` execs it) in the package laid
 * out in a temporary directory, on a free port of 127.0.0.1; resolves once GET /health answers.
 * Whatever of its tree is left is killed at teardown.
 */
async function npmRun(t: Test, script: string, env: Record<string, string> = {}): Promise<Script> {
  const directory = await packageLayout(tempTree(t).path('mapper-service'))
  const port = await freePort()
  const child = spawn(...untracked('npm', ['run', script]), {
    cwd: directory,
    // npm_config_update_notifier: no look-up of npm's latest version on the registry.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? directory, PORT: String(port), npm_config_update_notifier: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  const npm = child.pid!
  let members: number[] = [npm]
  t.teardown(async () => {
    for (const pid of members) if (running(pid)) process.kill(pid, 'SIGKILL')
    if (child.exitCode === null && child.signalCode === null) await exited
  })
  await waitUntil(
    `npm run ${script} to answer GET /health`,
    async () => {
      // Kept up to date while it starts, so the teardown reaches the service however far it got.
      members = [...new Set([...members, ...tree(npm)])]
      return (await exchange(port, 'GET', '/health').catch(() => undefined))?.status === 200
    },
    60000,
    () => (child.exitCode !== null ? `npm exited with ${child.exitCode}: ${output}` : undefined)
  )
  return { npm, port, output: () => output, exited }
}

/** SIGTERM to npm's process, as a supervisor sends it: within STOP_WITHIN_MS no process of its tree runs. */
async function stopsOnSigterm(t: Test, started: Script): Promise<void> {
  const members = tree(started.npm)
  const service = members.filter((pid) => commandLine(pid).includes('dist/bin/mapper-service.js'))
  t.equal(service.length, 1, `the tree holds the service: ${members.map(commandLine).join(' | ')}`)
  process.kill(started.npm, 'SIGTERM')
  const deadline = Date.now() + STOP_WITHIN_MS
  while (members.some(running) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  const survivors = members.filter(running)
  t.same(
    survivors.map((pid) => `${pid} (parent ${stat(pid)?.ppid}): ${commandLine(pid)}`),
    [],
    `no process of npm's tree runs ${STOP_WITHIN_MS} ms after SIGTERM`
  )
  // The service shut down gracefully (exit 0), and npm reports that, not a death by signal.
  t.same(await started.exited, { code: 0, signal: null }, 'npm exits 0')
}

/** The script a Quick start line of the README runs (`npm start`, `npm run dev`), read from README.md now. */
function quickStart(command: string): string {
  const line = placedBlocks()
    .filter((block) => block.section === 'Quick start')
    .flatMap((block) => block.code.split('\n'))
    .map((text) => text.replace(/#.*$/, '').trim())
    .find((text) => text === command)
  if (line === undefined) throw new Error(`README "Quick start" has no line "${command}"`)
  return line.replace(/^npm (run )?/, '')
}

t.test('npm start: SIGTERM to npm stops the whole tree', async (t) => {
  const started = await npmRun(t, quickStart('npm start'), { OPTIONS: '{"host":"127.0.0.1","logging":{"level":"warn"}}' })
  t.match(started.output(), /> (?:J=\$\(.*?\); )?(?:\w+=\S+ )*exec (?:env \$\{J:\+LD_PRELOAD=\$J\} )?node /, 'npm runs the script as written: the service replaces the shell (exec), through env when it preloads jemalloc')
  // The malloc settings reach the service's own process (the image sets the same: deploy.test.ts).
  const service = tree(started.npm).find((pid) => commandLine(pid).includes('dist/bin/mapper-service.js'))!
  const environment = readFileSync(`/proc/${service}/environ`, 'utf8').split('\0')
  t.ok(environment.includes('MALLOC_MMAP_THRESHOLD_=131072') && environment.includes('MALLOC_TRIM_THRESHOLD_=131072'), 'the service runs with the malloc settings')
  await stopsOnSigterm(t, started)
})

t.test('npm run dev: loopback only, explicit documents, explain traces and the playground', async (t) => {
  const started = await npmRun(t, quickStart('npm run dev'))
  t.same(listeningAddresses(started.port), ['127.0.0.1'], 'listens on 127.0.0.1 only')

  const document = { mapping: { '/greeting': { source: '/name' } } }
  const explicit = await exchange(started.port, 'POST', '/map', { mapping: { mapping: { '/b': '/a' } }, input: { a: 1 } })
  t.equal(explicit.status, 200, `an explicit document is evaluated: ${explicit.body}`)
  t.same(JSON.parse(explicit.body), { b: 1, valid: true, errors: [] })

  const explained = await exchange(started.port, 'POST', '/map', { mapping: document, input: { name: 'x' }, explain: true })
  t.equal(explained.status, 200, `explain is answered: ${explained.body}`)
  const trace = (JSON.parse(explained.body) as { explain?: { pairings?: Array<{ target: string }> } }).explain
  t.equal(trace?.pairings?.[0]?.target, '/greeting', 'with the trace of its pairing')

  const page = await exchange(started.port, 'GET', '/playground')
  t.equal(page.status, 200, 'the playground is served')
  t.match(page.headers['content-type'], /^text\/html/)

  await stopsOnSigterm(t, started)
})
