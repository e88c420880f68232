// `npm run bench:hostile`: each attack of the hardening work against the service as it ships (the
// built `dist/`, child processes on 127.0.0.1), while /health is asked every 10 ms from a worker
// thread of this script on a connection of its own (so this script's own work never delays a
// probe). Two services run: `explicit` (the explicit form on, hot reload watching) and `default`
// (the posture `npm start` gives: explicit off); both have REQUEST_ALLOW_HOSTS naming 127.0.0.1, so
// their `request` plugin may reach the upstreams this script serves. Prints, per attack, what it
// got, the worst /health wait while it ran, and the CPU time both services used for it (every
// thread: what the attack cost the machine; then the main threads' part, and the part of the
// threads that run beside them at their priority: V8's collector and compiler threads, which work
// for the worker threads' heaps too), and the most memory it made a service hold (its peak RSS
// over its RSS before, Linux's VmHWM reset per attack); the target is 100 ms for every attack
// (README "Reliability": no request holds the main thread beyond a small slice). Then each
// service's resident memory at the start and once idle (target: back within 50 MB). Bounded:
// every attack has a 60 s limit, and the script stops the services and its upstreams at the end.
//
// `npm run bench:soak` (`--soak <seconds>`; the npm script asks for 60): the registered citation
// document (`bench-small`, bench/workloads.ts) on POST /map at 10 connections from a separate
// process (autocannon, bench/load.ts), <seconds> alone and <seconds> with one hostile request a
// second mixed in, each request attack in turn, in `--rounds` rounds (3) that each run both, one
// right after the other (alone first in odd rounds, last in even ones). The ratio is worked out
// within each round, as bench:http's are: this machine's speed drifts by more between minutes (a
// baseline of 40,000 req/s in one run, 29,000 in the next) than the hostile mix costs. Prints, per
// round, both throughputs and their ratio; then the median of the rounds' ratios (target ≥ 0.9),
// the legitimate requests' non-2xx and errors (target: none), every hostile answer by status, the
// worst /health wait, and the resident memory at start, at its peak, at the end of the last load
// with the hostile mix and once idle threads have retired. What a hostile phase leaves running (a
// stream at its share of the loop) ends before the next phase starts.
//
// The measuring clients (the /health probes, and the soak's load generator) run at nice -10 where
// the system allows it: on one machine they stand for callers on other machines, and a client
// starved of CPU by the services it measures would count its own delay as theirs. The attacks are
// sent from this script's main thread at the ordinary priority.
//
// BENCH_CPU_PROF=<dir> writes a V8 CPU profile of every service thread into <dir> (--cpu-prof).
// BENCH_SERVICE_FLAGS="<flags>" adds Node flags to both services' command lines (after the
// shipped `--max-semi-space-size=32`), to measure a flag before shipping it. BENCH_SERVICE_STDOUT=1
// passes the services' standard output through (what such a flag prints: `--trace-gc`).
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http'
import { connect, type Socket } from 'node:net'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { rename } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Worker } from 'node:worker_threads'
import { canRaisePriority, CLIENT_PRIORITY, cpuSplit, type Measured, onCpus, pin, runLoad } from './load-client.js'
import { median } from './measure.js'
import { citationInput, DOCUMENTS } from './workloads.js'

const { values: flags } = parseArgs({ options: { soak: { type: 'string' }, rounds: { type: 'string' }, only: { type: 'string' }, skip: { type: 'string' } } })
const soakSeconds = flags.soak === undefined ? undefined : Number(flags.soak)
const soakRounds = flags.rounds === undefined ? 3 : Number(flags.rounds)
if ((soakSeconds !== undefined && !(soakSeconds > 0)) || !(Number.isInteger(soakRounds) && soakRounds > 0)) {
  process.stderr.write('usage: bench/hostile.ts [--soak <seconds> [--rounds <n>]] [--only <text in the attack names>] [--skip <text in the attack names>]\n')
  process.exit(2)
}
// The soak measures the service as it runs on a machine of its own: it alone on CPU 0, this
// script (attacks, upstreams, probes), the load generator and the other service on the rest.
const split = soakSeconds === undefined ? undefined : cpuSplit()
if (split !== undefined) pin(process.pid, split.clients)
const TARGET_MS = 100
const RSS_TARGET_MB = 50
// In the soak a stream shares the main thread with the load (a twentieth of it while others wait), so it
// takes longer than alone: the soak waits for it past its end.
const ATTACK_LIMIT_MS = soakSeconds === undefined ? 60_000 : (soakSeconds + 120) * 1000
const root = fileURLToPath(new URL('..', import.meta.url))
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

// Upstreams: HTML pages whose parse is slow (deep, or wide where parse5 is quadratic); a 10 MB
// JSON body; one that never answers and counts the calls it holds open.
const pages: Record<string, string> = {
  '/deep': `<html><body>${'<div>'.repeat(32_000)}x${'</div>'.repeat(32_000)}</body></html>`,
  '/attributes': `<div ${Array.from({ length: 200_000 }, (_, i) => `a${i}="v"`).join(' ')}></div>`,
  '/tables': '<table><b>'.repeat(256_000),
}
const html = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(pages[req.url ?? ''] ?? ''))
const tenMb = (() => {
  const records: string[] = []
  let bytes = 12
  for (let i = 0; bytes < 10_000_000 - 120; i++) {
    const record = JSON.stringify({ id: i, name: `item ${i}`, tags: ['a', 'b', 'c'], price: i * 1.5, nested: { deep: { value: i } } })
    records.push(record)
    bytes += record.length + 1
  }
  return Buffer.from(`{"items":[${records.join(',')}]}`)
})()
const json = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': tenMb.length }).end(tenMb))
const silentOpen = new Set<IncomingMessage>()
let silentSeen = 0
const silent = createServer((req) => {
  silentSeen++
  silentOpen.add(req)
  req.socket.once('close', () => silentOpen.delete(req))
})
const htmlOrigin = await listen(html)
const jsonOrigin = await listen(json)
const silentOrigin = await listen(silent)

const dir = mkdtempSync(join(tmpdir(), 'mapper-hostile-'))
const mappings = join(dir, 'mappings')
mkdirSync(mappings)
const register = (document: { readonly $id?: unknown; readonly [key: string]: unknown }): void => writeFileSync(join(mappings, `${String(document.$id)}.json`), JSON.stringify(document))
register({ $id: 'fetch-each', mapping: { '/r': { source: '/items', each: { '/x': { request: { origin: silentOrigin, pathname: '/' } } } } } })
// A registered mapping fetching the page its input names: upstream bodies of registered mappings are parsed on the service's main thread.
register({ $id: 'page', mapping: { '/t': { source: '', request: { origin: htmlOrigin, pathname: '/{{page}}' } } } })
register({ $id: 'big-json', mapping: { '/t': { request: { origin: jsonOrigin, pathname: '/' } } } })
register({ $id: 'big-json-each', mapping: { '/r': { source: '/items', each: { '/t': { request: { origin: jsonOrigin, pathname: '/' } } } } } })
// Each stream line is one call to an upstream that never answers: what a client that leaves should cancel.
register({ $id: 'fetch-silent', mapping: { '/x': { request: { origin: silentOrigin, pathname: '/' } } } })
register({ $id: 'search', mapping: { '/x': { source: '', request: { origin: silentOrigin, pathname: '/', search: { q: 'q' } } } } })
register({ $id: 'echo', mapping: { '/echo': '/' } })
for (const document of DOCUMENTS) register(document)

/** The image's settings, which the services it starts run with (below). */
const DOCKERFILE = readFileSync(fileURLToPath(new URL('../Dockerfile', import.meta.url)), 'utf8')

/**
 * The allocator settings for the services it starts: those the image and `npm start` set, read
 * from the Dockerfile. Its MALLOC_* ENV (glibc's), each overridden by a MALLOC_* variable given to
 * the benchmark (`MALLOC_MMAP_THRESHOLD_= npm run bench:hostile`, empty: glibc's default); and, as
 * the image preloads jemalloc, this machine's jemalloc (Debian's libjemalloc2) preloaded too, unless
 * `BENCH_ALLOCATOR=glibc` asks for glibc's malloc (or the machine has none: the report says which).
 */
function mallocSettings(): Record<string, string> {
  const shipped = Object.fromEntries([...DOCKERFILE.matchAll(/\b(MALLOC_\w+)=(\S+)/g)].map((match) => [match[1]!, match[2]!]))
  const given = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[0].startsWith('MALLOC_') && entry[1] !== undefined))
  const settings = Object.fromEntries(Object.entries({ ...shipped, ...given }).filter(([, value]) => value !== ''))
  return JEMALLOC === undefined ? settings : { ...settings, LD_PRELOAD: JEMALLOC }
}

/** The jemalloc the services preload (as the image does), or undefined: glibc's malloc. */
const JEMALLOC: string | undefined = (() => {
  if (process.env.BENCH_ALLOCATOR === 'glibc') return undefined
  if (!/\bLD_PRELOAD=\S*jemalloc/.test(DOCKERFILE)) return undefined
  const candidates = ['/usr/local/lib/libjemalloc.so.2', ...['x86_64', 'aarch64'].map((arch) => `/usr/lib/${arch}-linux-gnu/libjemalloc.so.2`), '/usr/lib/libjemalloc.so.2']
  return candidates.find((path) => existsSync(path))
})()

/** Which allocator the services run with, as the report's first line says. */
const ALLOCATOR =
  JEMALLOC !== undefined
    ? `allocator jemalloc (${JEMALLOC}, as the image preloads it)`
    : process.env.BENCH_ALLOCATOR === 'glibc'
      ? "allocator glibc's malloc (BENCH_ALLOCATOR=glibc)"
      : "allocator glibc's malloc (no jemalloc here: Debian's libjemalloc2; the image preloads it)"

interface Service {
  readonly name: string
  readonly base: string
  readonly child: ChildProcess
}

async function startService(name: string, options: Record<string, unknown>, cpus?: string): Promise<Service> {
  const probe = createServer()
  const port = (await listen(probe)).split(':')[2]!
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  const [command, args] = onCpus(cpus, process.execPath, [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []), '--max-semi-space-size=32', ...(process.env.BENCH_SERVICE_FLAGS?.split(/\s+/).filter((flag) => flag !== '') ?? []), 'dist/bin/mapper-service.js'])
  const child = spawn(command, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...mallocSettings(), PORT: port, MAPPINGS: mappings, REQUEST_ALLOW_HOSTS: '127.0.0.1', OPTIONS: JSON.stringify({ host: '127.0.0.1', logging: { level: 'error' }, ...options }) },
    stdio: ['ignore', process.env.BENCH_SERVICE_STDOUT ? 'inherit' : 'ignore', 'inherit'],
  })
  const base = `http://127.0.0.1:${port}`
  for (let tries = 0; ; tries++) {
    if (await fetch(`${base}/health`).then(() => true, () => false)) break
    if (tries > 300) throw new Error(`the ${name} service did not start`)
    await sleep(100)
  }
  return { name, base, child }
}

// The soak runs one service (the explicit form on), every kind of attack sent to it. A second
// service would do its attacks' work on the clients' CPU, and on this machine a busy CPU 1 slows
// CPU 0 (a nice 19 CPU hog on CPU 1, the same load on the service, took its main thread from 20 to
// 28 µs per request, 2026-11-28): the target would be measured slower for work it never did.
const explicit = await startService('explicit', { map: { explicit: true }, ...(soakSeconds === undefined ? { reload: { watch: true, debounce: 50 } } : {}) }, split?.service)
const plain = soakSeconds === undefined ? await startService('default', {}) : explicit
const services = plain === explicit ? [explicit] : [explicit, plain]

// /health from a worker thread: one keep-alive connection, a probe every 10 ms; `report` answers
// the worst wait since the last report, a probe still in flight counted at its age.
const PROBE = `
const { parentPort, workerData } = require('node:worker_threads')
const http = require('node:http')
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
try { require('node:os').setPriority(workerData.priority) } catch {}
let worst = 0, failures = 0, inFlight = 0, stopped = false
parentPort.on('message', (message) => {
  if (message === 'stop') { stopped = true; agent.destroy(); return }
  const now = performance.now()
  parentPort.postMessage({ worst: Math.max(worst, inFlight === 0 ? 0 : now - inFlight), failures })
  worst = 0
  failures = 0
})
function probe() {
  if (stopped) return
  inFlight = performance.now()
  const done = (ok) => {
    worst = Math.max(worst, performance.now() - inFlight)
    inFlight = 0
    if (!ok) failures++
    setTimeout(probe, 10)
  }
  const request = http.get(workerData.url, { agent, timeout: 70000 }, (response) => {
    response.resume()
    response.on('end', () => done(response.statusCode === 200))
    response.on('error', () => done(false))
  })
  request.on('timeout', () => request.destroy(new Error('probe timed out')))
  request.on('error', () => done(false))
}
probe()
`
class HealthProbe {
  readonly #worker: Worker
  constructor(base: string) {
    this.#worker = new Worker(PROBE, { eval: true, workerData: { url: `${base}/health`, priority: CLIENT_PRIORITY } })
  }

  /** The worst /health wait (ms) and failed probes since the last call. */
  report(): Promise<{ worst: number; failures: number }> {
    return new Promise((resolve) => {
      this.#worker.once('message', resolve)
      this.#worker.postMessage('report')
    })
  }

  async stop(): Promise<void> {
    this.#worker.postMessage('stop')
    await sleep(20)
    await this.#worker.terminate()
  }
}

/** Reads a response whole without keeping it: its status, its bytes, and its first 200 characters. */
async function drain(response: Response): Promise<{ status: number; bytes: number; head: string; lines: number }> {
  let bytes = 0
  let lines = 0
  let head = ''
  const reader = response.body!.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    bytes += value.length
    for (let i = value.indexOf(10); i !== -1; i = value.indexOf(10, i + 1)) lines++
    if (head.length < 200) head += Buffer.from(value.subarray(0, 200)).toString()
  }
  return { status: response.status, bytes, head: head.slice(0, 200), lines }
}

/** The answer's status and error code (or `valid: …`), as a short text. */
function describe(status: number, head: string): string {
  const code = /"code":"([^"]+)"/.exec(head)?.[1]
  const budget = /"budget":"([^"]+)"/.exec(head)?.[1]
  const valid = /"valid":(true|false)/.exec(head)?.[1]
  return `${status} ${code !== undefined ? `${code}${budget === undefined ? '' : ` (${budget})`}` : valid !== undefined ? `valid: ${valid}` : ''}`.trim()
}

async function post(service: Service, path: string, body: unknown): Promise<string> {
  const response = await fetch(`${service.base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body), signal: AbortSignal.timeout(ATTACK_LIMIT_MS) })
  const { status, head, bytes } = await drain(response)
  return `${describe(status, head)}${bytes > 100_000 ? `, ${(bytes / 1e6).toFixed(1)} MB` : ''}`
}

/** Several outcomes as one text: each distinct outcome with its count. */
function tally(outcomes: readonly string[]): string {
  return [...tallyMap(outcomes)].map(([outcome, count]) => (count === 1 ? outcome : `${count} × ${outcome}`)).join('; ')
}

async function postStream(service: Service, query: string, body: string): Promise<string> {
  const response = await fetch(`${service.base}/map/stream${query}`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body, signal: AbortSignal.timeout(ATTACK_LIMIT_MS) })
  const { status, lines, head } = await drain(response)
  return `${status === 200 ? '200' : describe(status, head)}, ${lines.toLocaleString('en-US')} lines`
}

const big = 'x'.repeat(900_000)
const asString: Record<string, unknown> = {}
for (let i = 0; i < 500; i++) asString[`/k${i}`] = { source: '/s', as: 'string' }
const ranges = Array.from({ length: 5000 }, (_, i) => `\\u{${(0x1000 + i * 2).toString(16)}}-\\u{${(0x1000 + i * 2 + 1).toString(16)}}`).join('')
const fanOutLevels = (levels: number): unknown => {
  let each: unknown = { '/v': '/' }
  for (let i = 0; i < levels; i++) each = { '/l': { input: '/l', each } }
  return each
}
/** A compound document whose members each name the next as their pairings; the last has pairings. */
const namedChain = (members: number): unknown => {
  const all: Record<string, unknown> = {}
  for (let i = 0; i < members - 1; i++) all[`m${i}`] = { $id: `m${i}`, mapping: `m${i + 1}` }
  all[`m${members - 1}`] = { $id: `m${members - 1}`, mapping: { '/x': '/x' } }
  return { mappings: all }
}
/** A compound document whose members each extend the one before. */
const extendChain = (members: number): unknown => {
  const all: Record<string, unknown> = { e0: { $id: 'e0', mapping: { '/a0': '/a' } } }
  for (let i = 1; i < members; i++) all[`e${i}`] = { $id: `e${i}`, $extend: `e${i - 1}`, mapping: { [`/a${i}`]: '/a' } }
  return { mappings: all }
}
/** `levels` switches without a scope (each an error echoing its operand) around a 900 KB constant. */
const amplified = (levels: number): string => {
  let descriptor: unknown = { constant: big }
  for (let i = 0; i < levels; i++) descriptor = { switch: { cases: { x: descriptor } } }
  return JSON.stringify({ mapping: { mapping: { '/r': descriptor } } })
}
const amplifiedBody = amplified(32)
const echoBody = JSON.stringify({ mapping: 'echo', input: Array.from({ length: 340_000 }, () => ({})) })
// Just short enough to be parsed the turn it arrives (64 KiB: service/json-text.ts LARGE_BODY_CHARS).
const shortBody = JSON.stringify({ mapping: 'echo', input: { s: 'z'.repeat(60 * 1024) } })

// Built before it is measured: making 37 MB of text would stall this process.
const hugeMapping: Record<string, string> = {}
for (let i = 0; i < 1_000_000; i++) hugeMapping[`/field${i}/value`] = `/source${i}/value`
const hugeText = JSON.stringify({ $id: 'huge', mapping: hugeMapping })
// Written beside the watched folder before it is measured, and moved in (a rename) during the attack.
writeFileSync(join(dir, 'huge.json'), hugeText)

/** Sends a request on raw sockets and never reads the answers; each socket is destroyed after `holdMs`. */
async function neverRead(service: Service, clients: number, path: string, body: string, holdMs: number): Promise<string> {
  const { port } = new URL(service.base)
  const sockets: Socket[] = []
  const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
  for (let i = 0; i < clients; i++) {
    const socket = connect(Number(port), '127.0.0.1')
    socket.on('error', () => {})
    socket.write(head)
    socket.write(body)
    socket.pause()
    sockets.push(socket)
  }
  await sleep(holdMs)
  for (const socket of sockets) socket.destroy()
  return `${clients} clients held ${holdMs / 1000} s`
}

/**
 * `streams` streams that send a blank line a second and nothing else, for at most `limitMs`: how
 * many the service refused, and how many it ended itself (an idle stream must not stay open).
 */
async function trickle(service: Service, streams: number, limitMs: number): Promise<string> {
  const { port } = new URL(service.base)
  const outcomes = await Promise.all(
    Array.from({ length: streams }, () =>
      new Promise<string>((resolve) => {
        const sending = httpRequest({ host: '127.0.0.1', port, path: '/map/stream?mapping=echo', method: 'POST', headers: { 'content-type': 'application/x-ndjson' } }, (response) => {
          response.resume()
          response.on('end', () => {
            clearInterval(timer)
            sending.destroy()
            resolve(response.statusCode === 200 ? 'ended by the service' : `refused ${response.statusCode}`)
          })
        })
        sending.on('error', () => {
          clearInterval(timer)
          resolve('connection failed')
        })
        sending.flushHeaders()
        const timer = setInterval(() => sending.write('\n'), 1000)
        setTimeout(() => {
          clearInterval(timer)
          sending.destroy()
          resolve('still open at the limit')
        }, limitMs)
      })
    )
  )
  return tally(outcomes)
}

/**
 * `clients` streams of calls to an upstream that never answers; each client leaves (destroys its
 * socket) after a second, mid-upload. How many upstream calls are still open two seconds later.
 */
async function leaveMidStream(service: Service, clients: number): Promise<string> {
  const { port } = new URL(service.base)
  const before = silentSeen
  const line = `${JSON.stringify({ n: 1 })}\n`.repeat(2000)
  await Promise.all(
    Array.from({ length: clients }, () =>
      new Promise<void>((resolve) => {
        const sending = httpRequest({ host: '127.0.0.1', port, path: '/map/stream?mapping=fetch-silent', method: 'POST', headers: { 'content-type': 'application/x-ndjson' } })
        sending.on('error', () => {})
        sending.on('response', (response) => response.resume())
        for (let i = 0; i < 20; i++) sending.write(line)
        setTimeout(() => {
          sending.destroy()
          resolve()
        }, 1000)
      })
    )
  )
  const started = silentSeen - before
  await sleep(2000)
  const open = silentOpen.size
  const later = silentSeen - before
  return `${started} upstream calls started; 2 s after the clients left: ${open} open, ${later - started} started since`
}

/** `soak: false`: not mixed into the soak (it holds connections for seconds); `badInput`: a caller's mistake, which must answer 4xx. */
type Attack = readonly [name: string, run: () => Promise<string>, traits?: { readonly soak?: false; readonly badInput?: true }]

const attacks: Attack[] = [
  ['a synchronous throw beside a pending plugin call in each (explicit)', () => post(explicit, '/map', { mapping: { mapping: { '/r': { source: '/items', each: { '/y': '/s', '/y/z': { constant: 1 }, '/x': { source: '/u', request: { url: { source: '' } } } } } } }, input: { items: [{ u: `${silentOrigin}/` }, { s: 'str' }] } })],
  ['request in each over 1,001 items (registered)', () => post(plain, '/map', { mapping: 'fetch-each', input: { items: Array.from({ length: 1001 }, (_, i) => i) } })],
  ['upstream HTML nested 32,000 levels (explicit)', () => post(explicit, '/map', { mapping: { mapping: { '/t': { request: { origin: htmlOrigin, pathname: '/deep' } } } }, input: {} })],
  ['upstream HTML nested 32,000 levels (registered)', () => post(plain, '/map', { mapping: 'page', input: { page: 'deep' } })],
  ['upstream HTML, one element with 200,000 attributes (registered)', () => post(plain, '/map', { mapping: 'page', input: { page: 'attributes' } })],
  ['upstream HTML, 256,000 <table><b> (registered)', () => post(plain, '/map', { mapping: 'page', input: { page: 'tables' } })],
  ['upstream JSON of 10 MB (registered)', () => post(plain, '/map', { mapping: 'big-json', input: {} })],
  ['upstream JSON of 10 MB, each over 12 (registered)', () => post(plain, '/map', { mapping: 'big-json-each', input: { items: Array.from({ length: 12 }, (_, i) => i) } })],
  ['500 × a 900 KB string through as: string', () => post(explicit, '/map', { mapping: { mapping: asString }, input: { s: big } })],
  ['a 5,000-range character class on 20,000 characters', () => post(explicit, '/map', { mapping: { mapping: { '/m': { source: '/s', pattern: `[${ranges}]{16}` } } }, input: { s: 'a'.repeat(20_000) } })],
  ['as: json on an output 10,000 levels deep', () => post(explicit, '/map', { mapping: { mapping: { ['/a'.repeat(10_000)]: { constant: 1 }, '/j': { output: '/a', as: 'json' } } }, input: {} })],
  // `input` reads the root input at any depth: 40 × 40 × 40 = 64,000 levels per example.
  ['/validate with 400 examples of a fanning document', () => post(explicit, '/validate', { mapping: { mapping: { '/l': { input: '/l', each: fanOutLevels(2) } }, examples: Array.from({ length: 400 }, () => ({ input: { l: Array.from({ length: 40 }, (_, i) => i) }, output: {} })) } })],
  ['/validate, 1,000 members each naming the next (default posture)', () => post(plain, '/validate', { mapping: namedChain(1000) })],
  ['/validate, 4,000 members each naming the next (default posture)', () => post(plain, '/validate', { mapping: namedChain(4000) })],
  ['/validate, an $extend chain of 1,200 members (default posture)', () => post(plain, '/validate', { mapping: extendChain(1200) })],
  ['/validate, an $extend chain of 2,000 members (explicit)', () => post(explicit, '/validate', { mapping: extendChain(2000) })],
  ['/validate, 32 nested switch around a 900 KB constant', () => post(plain, '/validate', amplifiedBody)],
  ['/validate, the same, 8 at once', async () => tally(await Promise.all(Array.from({ length: 8 }, () => post(plain, '/validate', amplifiedBody))))],
  ['/validate, the same, 150 clients that never read', () => neverRead(plain, 150, '/validate', amplifiedBody, 10_000), { soak: false }],
  ['/map, 400 clients that never read, a 60 KB body each', () => neverRead(plain, 400, '/map', shortBody, 10_000), { soak: false }],
  ['/map/stream, 20,000 malformed tiny lines (40 KB)', () => postStream(plain, '?mapping=echo', 'x\n'.repeat(20_000))],
  ['/map/stream, 1,000,000 malformed tiny lines (2 MB)', () => postStream(plain, '?mapping=echo', 'x\n'.repeat(1_000_000))],
  ['/map/stream, 1,000,000 tiny valid lines (3 MB)', () => postStream(plain, '?mapping=echo', '{}\n'.repeat(1_000_000))],
  ['/map/stream, 60 streams trickling blank lines', () => trickle(plain, 60, 45_000), { soak: false }],
  ['/map/stream, 20 clients leave mid-upload with upstream calls in flight', () => leaveMidStream(plain, 20), { soak: false }],
  ['registered echo of a 1 MiB array of 340,000 {}', () => post(plain, '/map', echoBody)],
  ['registered echo of a 1 MiB array of 340,000 {}, 4 at once', async () => tally(await Promise.all(Array.from({ length: 4 }, () => post(plain, '/map', echoBody))))],
  ['explicit request options: request: 5', () => post(explicit, '/map', { mapping: { mapping: { '/x': { request: 5 } } }, input: {} }), { badInput: true }],
  ['explicit request options: method CONNECT', () => post(explicit, '/map', { mapping: { mapping: { '/x': { request: { origin: silentOrigin, method: 'CONNECT' } } } }, input: {} }), { badInput: true }],
  ['registered search parameter given an object', () => post(plain, '/map', { mapping: 'search', input: { q: { nested: true } } }), { badInput: true }],
  [`a hot reload of a ${Math.round(hugeText.length / 1e6)} MB mapping file`, async () => {
    await rename(join(dir, 'huge.json'), join(mappings, 'huge.json'))
    await sleep(10_000)
    rmSync(join(mappings, 'huge.json'))
    return 'reload attempted'
  }, { soak: false }],
]
const selected = attacks.filter(([name]) => (flags.only === undefined || name.includes(flags.only)) && (flags.skip === undefined || !name.includes(flags.skip)))

/**
 * A service's process and those it started (its helper process, workers/helper-process.ts), the
 * service first: every figure below is the tree's, so that work moved to a child is still counted.
 */
function processTree(pid: number): number[] {
  const parents = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const parent = Number(statFields(`/proc/${entry}/stat`)[1])
      parents.set(parent, [...(parents.get(parent) ?? []), Number(entry)])
    } catch {
      // The process ended meanwhile.
    }
  }
  const tree = [pid]
  for (let i = 0; i < tree.length; i++) tree.push(...(parents.get(tree[i]!) ?? []))
  return tree
}

/** A figure of a service's /proc status (Linux), summed over its process tree: `VmRSS` or `VmHWM` (its peak since a reset, `resetPeak`; in kB), or `Threads`. */
function procStatus(service: Service, field: 'VmRSS' | 'VmHWM' | 'Threads'): number {
  let total = 0
  for (const pid of processTree(service.child.pid!)) {
    try {
      total += Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
    } catch {
      // The process ended meanwhile.
    }
  }
  return total
}
const rssMb = (service: Service): number => Math.round(procStatus(service, 'VmRSS') / 1024)

/** Start a service's peak RSS (VmHWM, each process of its tree) afresh from its RSS now (Linux 4.0+); false where the system refuses. */
function resetPeak(service: Service): boolean {
  try {
    for (const pid of processTree(service.child.pid!)) writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/**
 * CPU time (ms, every thread, user and system) a process tree has used so far (Linux /proc): each
 * process's own and that of its children that ended (a helper process stopped when idle).
 */
function cpuMs(pid: number): number {
  let total = 0
  for (const member of processTree(pid)) {
    try {
      const fields = statFields(`/proc/${member}/stat`)
      total += statCpuMs(fields) + (Number(fields[13]) + Number(fields[14])) * 10
    } catch {
      // The process ended meanwhile (its parent counts it now).
    }
  }
  return total
}

/** The fields of a /proc stat file from the third on (state, ppid, …): what follows the command's name. */
function statFields(file: string): string[] {
  const stat = readFileSync(file, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** utime and stime, fields 14 and 15 of stat, in clock ticks (100 a second on Linux), as ms. */
function statCpuMs(fields: readonly string[]): number {
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** Every thread of process `pid`'s tree alive now (Linux /proc): its id (`pid/tid`), its nice value (field 19) and its CPU time (ms). */
function threadsOf(pid: number): Array<{ readonly id: string; readonly nice: number; readonly cpuMs: number }> {
  const threads = []
  for (const member of processTree(pid)) {
    let ids: string[]
    try {
      ids = readdirSync(`/proc/${member}/task`)
    } catch {
      continue
    }
    for (const id of ids) {
      try {
        const fields = statFields(`/proc/${member}/task/${id}/stat`)
        threads.push({ id: `${member}/${id}`, nice: Number(fields[16]), cpuMs: statCpuMs(fields) })
      } catch {
        // The thread ended meanwhile.
      }
    }
  }
  return threads
}

/** CPU time (ms) the main thread of process `pid` has used so far (its task of the same id). */
function mainCpuMs(pid: number): number {
  return statCpuMs(statFields(`/proc/${pid}/task/${pid}/stat`))
}

/**
 * CPU time (ms) of the other threads of a process's tree that run at its main thread's priority,
 * those alive now: V8's own threads (its garbage collection and compilation, for every isolate in
 * the process, the workers' included) and libuv's; the service's worker threads and its helper
 * process lower theirs (engine/slices.ts).
 */
function peerCpuMs(pid: number): number {
  const threads = threadsOf(pid)
  const main = `${pid}/${pid}`
  const nice = threads.find((thread) => thread.id === main)?.nice
  return threads.filter((thread) => thread.id !== main && thread.nice === nice).reduce((total, thread) => total + thread.cpuMs, 0)
}

/**
 * Wait (at most three minutes) for a service's idle threads to retire, then for its RSS to stop
 * falling (V8 gives memory back some seconds after the heap goes idle): no drop of 5 MB or more
 * within 10 s, or 90 s at most. Its RSS then.
 */
async function settle(service: Service, threads: number): Promise<{ rss: number; seconds: number; memory: string }> {
  const idle = performance.now()
  while (procStatus(service, 'Threads') > threads && performance.now() - idle < 180_000) await sleep(2000)
  const falling = performance.now()
  let low = rssMb(service)
  let since = performance.now()
  while (performance.now() - since < 10_000 && performance.now() - falling < 90_000) {
    await sleep(2000)
    const now = rssMb(service)
    if (now <= low - 5) since = performance.now()
    low = Math.min(low, now)
  }
  return { rss: rssMb(service), seconds: Math.round((performance.now() - idle) / 1000), memory: await memoryOf(service) }
}

/**
 * Where a service's memory is, from its /metrics (prom-client's process metrics), for the line
 * beside its RSS: V8's heap in use and reserved, and memory outside it that V8 counts (buffers).
 */
async function memoryOf(service: Service): Promise<string> {
  const text = await fetch(`${service.base}/metrics`).then((response) => response.text(), () => '')
  const mb = (name: string): string => {
    const value = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]
    return value === undefined ? '?' : String(Math.round(Number(value) / 1048576))
  }
  return `V8 heap ${mb('nodejs_heap_size_used_bytes')} MB used of ${mb('nodejs_heap_size_total_bytes')} MB, external ${mb('nodejs_external_memory_bytes')} MB`
}

const probes = new Map(services.map((service) => [service, new HealthProbe(service.base)]))

async function runAttacks(): Promise<void> {
  console.log(`mapper-service hostile benchmark — node ${process.version}; ${ALLOCATOR}; /health of both services polled every 10 ms from a worker thread; target ≤ ${TARGET_MS} ms\n`)
  console.log(`${'attack'.padEnd(74)}${'answer'.padEnd(64)}worst /health   alive   service CPU (main threads; threads beside them at their priority)   peak RSS over the RSS before`)
  const start = new Map(services.map((service) => [service, { rss: rssMb(service), threads: procStatus(service, 'Threads') }]))
  let met = 0
  for (const [name, attack, traits] of selected) {
    for (const probe of probes.values()) await probe.report()
    let outcome: string
    const cpuBefore = services.map((service) => cpuMs(service.child.pid!))
    const mainBefore = services.map((service) => mainCpuMs(service.child.pid!))
    const peersBefore = services.map((service) => peerCpuMs(service.child.pid!))
    // What the attack made the services hold at most, whichever of them it was sent to.
    const rssBefore = services.map((service) => (resetPeak(service) ? rssMb(service) : undefined))
    try {
      outcome = await attack()
    } catch (error) {
      outcome = `failed: ${(error as Error).message}`
    }
    let worst = 0
    let failures = 0
    for (const probe of probes.values()) {
      const seen = await probe.report()
      worst = Math.max(worst, seen.worst)
      failures += seen.failures
    }
    const alive = (await Promise.all(services.map((service) => fetch(`${service.base}/health`).then((r) => r.status === 200, () => false)))).every(Boolean)
    // A caller's mistake answered 5xx fails the row whatever /health did.
    const wrongStatus = traits?.badInput === true && !outcome.startsWith('4')
    const ok = worst <= TARGET_MS && alive && failures === 0 && !wrongStatus
    if (ok) met++
    console.log(`${name.padEnd(74)}${outcome.padEnd(64)}${`${Math.round(worst)} ms`.padStart(10)} ${ok ? '✓' : '✗'}${failures > 0 ? ` (${failures} /health failed)` : ''}${wrongStatus ? ' (bad input must be 4xx)' : ''}   ${alive ? 'yes' : 'NO '}   ${services.map((service, i) => cpuMs(service.child.pid!) - cpuBefore[i]!).reduce((a, b) => a + b)} ms (${services.map((service, i) => mainCpuMs(service.child.pid!) - mainBefore[i]!).reduce((a, b) => a + b)} ms; ${services.map((service, i) => peerCpuMs(service.child.pid!) - peersBefore[i]!).reduce((a, b) => a + b)} ms)   ${peakLine(rssBefore)}`)
  }
  console.log(`\n${met} of ${selected.length} attacks within ${TARGET_MS} ms with every /health answered, the services alive and bad input answered 4xx`)
  for (const service of services) {
    const { rss, threads } = start.get(service)!
    const settled = await settle(service, threads)
    const grew = settled.rss - rss
    console.log(`RSS of the ${service.name} service: ${rss} MB at start, ${settled.rss} MB once idle (${settled.seconds} s after the last attack; ${settled.memory}) (${grew >= 0 ? '+' : ''}${grew} MB; target ≤ +${RSS_TARGET_MB} MB ${grew <= RSS_TARGET_MB ? '✓' : '✗'})`)
  }
}

/** The largest peak RSS over the RSS before, in MB, of the services whose peak could be reset. */
function peakLine(before: ReadonlyArray<number | undefined>): string {
  const grown = services.flatMap((service, i) => (before[i] === undefined ? [] : [Math.round(procStatus(service, 'VmHWM') / 1024) - before[i]!]))
  return grown.length === 0 ? '?' : `+${grown.reduce((a, b) => Math.max(a, b))} MB`
}

async function runSoak(seconds: number): Promise<void> {
  // Requests only: a reload is the operator's act, not a caller's; long-held connections are their own attacks.
  const hostile = selected.filter(([, , traits]) => traits?.soak !== false)
  const target = plain
  const raised = canRaisePriority()
  const phaseSeconds = seconds / soakRounds
  console.log(`mapper-service soak — node ${process.version}; ${ALLOCATOR}; one service (the explicit form on, every attack sent to it); the registered citation document (bench-small) at 10 connections, ${seconds} s alone and ${seconds} s with one hostile request a second (${hostile.length} kinds in turn), in ${soakRounds} rounds of ${phaseSeconds} s each way, alone first in odd rounds and last in even ones; the load generator and the /health probes at nice ${CLIENT_PRIORITY}${raised ? '' : ' (refused: they share the CPU with the services evenly)'}; ${split === undefined ? 'every process on every CPU (no taskset, or one CPU)' : `the service on CPU ${split.service}, every other process on CPU ${split.clients.replace(/^(\d+)-\1$/, '$1')}`}\n`)
  const body = JSON.stringify({ mapping: 'bench-small', input: citationInput })
  // The legitimate request answers 200 before the load starts, or the soak would measure refusals.
  const first = await fetch(`${target.base}/map`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  if (first.status !== 200) throw new Error(`the legitimate request answered ${first.status}: ${await first.text()}`)
  const ownCpu = (): number => Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000)
  // The main thread's time on a CPU and waiting for one while runnable (Linux schedstat, ns).
  const mainSched = (): [number, number] => {
    const [run, wait] = readFileSync(`/proc/${target.child.pid}/task/${target.child.pid}/schedstat`, 'utf8').split(' ').map(Number)
    return [run! / 1e6, wait! / 1e6]
  }
  // CPU time (ms) of each of the service's threads alive now, with its nice value (Linux /proc/<pid>/task).
  const threadCpu = (): Map<string, { readonly nice: number; readonly cpuMs: number }> => new Map(threadsOf(target.child.pid!).map(({ id, nice, cpuMs }) => [id, { nice, cpuMs }]))
  /** What every party has used so far: a phase's CPU is the difference of two of these. */
  const mark = () => ({ service: cpuMs(target.child.pid!), script: ownCpu(), sched: mainSched(), threads: threadCpu() })
  const cpuLine = (load: Measured, from: ReturnType<typeof mark>): string => {
    const to = mark()
    const [run, wait] = [to.sched[0] - from.sched[0], to.sched[1] - from.sched[1]]
    // Each thread alive at the end, by priority, what it used since the phase began (or since it started).
    const byNice = new Map<number, number>()
    for (const [id, { nice, cpuMs }] of to.threads) {
      const key = id === `${target.child.pid}/${target.child.pid}` ? -100 : nice
      byNice.set(key, (byNice.get(key) ?? 0) + cpuMs - (from.threads.get(id)?.cpuMs ?? 0))
    }
    const threads = [...byNice]
      .sort((a, b) => a[0] - b[0])
      .map(([nice, ms]) => `${nice === -100 ? 'main' : `nice ${nice}`} ${(ms / 1000).toFixed(1)} s`)
      .join(', ')
    return `CPU: service ${((to.service - from.service) / 1000).toFixed(1)} s (every thread; threads alive now: ${threads}; its main thread ran ${(run / 1000).toFixed(1)} s and waited runnable ${(wait / 1000).toFixed(1)} s), load generator ${(load.cpuMs / 1000).toFixed(1)} s${load.waitMs === undefined ? '' : ` (its main thread waited runnable ${(load.waitMs / 1000).toFixed(1)} s)`}, this script (attacks, upstreams, probes) ${((to.script - from.script) / 1000).toFixed(1)} s`
  }
  const loadFor = () => runLoad({ url: `${target.base}/map`, body, connections: 10, duration: phaseSeconds, priority: CLIENT_PRIORITY, ...(split === undefined ? {} : { cpus: split.clients }) })
  const describe = (measured: Measured): string =>
    `${measured.total} requests, ${Math.round(measured.requests)} req/s, p50 ${measured.latencyP50} ms, p99 ${measured.latencyP99} ms, non-2xx ${measured.non2xx}, errors ${measured.errors}`
  const start = rssMb(target)
  const threads = procStatus(target, 'Threads')
  let peak = start
  let end = start
  const probe = probes.get(target)!
  await probe.report()
  const answers = new Map<string, string[]>()
  let next = 0
  /** The load with the hostile requests mixed in: one a second, the kinds in turn (carried on from the round before). */
  const withHostile = async (): Promise<[Measured, string]> => {
    const from = mark()
    const load = loadFor()
    const inFlight: Array<Promise<void>> = []
    const began = performance.now()
    while (performance.now() - began < phaseSeconds * 1000) {
      const [name, attack] = hostile[next++ % hostile.length]!
      const outcomes = answers.get(name) ?? []
      answers.set(name, outcomes)
      inFlight.push(
        attack().then(
          (outcome) => {
            outcomes.push(outcome)
          },
          (error: Error) => {
            outcomes.push(`failed: ${error.message}`)
          }
        )
      )
      await sleep(1000)
      peak = Math.max(peak, rssMb(target))
    }
    const measured = await load
    const line = cpuLine(measured, from)
    end = rssMb(target)
    // What the hostile requests left running (a stream at its share of the loop) ends before anything else is measured.
    await Promise.all(inFlight)
    return [measured, line]
  }
  const alone = async (): Promise<[Measured, string]> => {
    const from = mark()
    const measured = await loadFor()
    return [measured, cpuLine(measured, from)]
  }
  const ratios: number[] = []
  const totals = { alone: 0, hostile: 0, failed: 0 }
  for (let round = 1; round <= soakRounds; round++) {
    // Alone first in odd rounds, last in even ones: neither always runs on the warmer process.
    const order = round % 2 === 1 ? (['alone', 'hostile'] as const) : (['hostile', 'alone'] as const)
    const results: Partial<Record<'alone' | 'hostile', Measured>> = {}
    for (const kind of order) {
      const [measured, line] = kind === 'alone' ? await alone() : await withHostile()
      results[kind] = measured
      console.log(`round ${round}, ${kind === 'alone' ? 'alone       ' : 'with hostile'}: ${describe(measured)}`)
      console.log(`  ${line}`)
    }
    const ratio = results.hostile!.requests / results.alone!.requests
    ratios.push(ratio)
    totals.alone += results.alone!.total
    totals.hostile += results.hostile!.total
    totals.failed += results.hostile!.non2xx + results.hostile!.errors + results.alone!.non2xx + results.alone!.errors
    console.log(`round ${round}: with hostile ÷ alone ${ratio.toFixed(3)}\n`)
  }
  const ratio = median(ratios)
  const worstHealth = (await probe.report()).worst
  const settled = await settle(target, threads)
  const alive = await fetch(`${target.base}/health`).then((r) => r.status === 200, () => false)
  console.log(`legitimate throughput with the hostile mix ÷ alone: ${ratio.toFixed(3)} (the median of the rounds: ${ratios.map((r) => r.toFixed(3)).join(', ')}; all requests together ${(totals.hostile / totals.alone).toFixed(3)})  target ≥ 0.9 ${ratio >= 0.9 ? '✓' : '✗'}; legitimate non-2xx or errors: ${totals.failed} ${totals.failed === 0 ? '✓' : '✗'}`)
  let hostileCount = 0
  let serverErrors = 0
  console.log('hostile:')
  for (const [name, outcomes] of answers) {
    for (const [outcome, count] of tallyMap(outcomes)) {
      hostileCount += count
      if (outcome.startsWith('5') || outcome.startsWith('failed')) serverErrors += count
      console.log(`  ${String(count).padStart(3)} × ${name.padEnd(72)} ${outcome}`)
    }
  }
  console.log(`${hostileCount} hostile requests, ${serverErrors} answered 5xx or not at all`)
  console.log(`worst /health wait during the soak: ${Math.round(worstHealth)} ms (target ≤ ${TARGET_MS} ms ${worstHealth <= TARGET_MS ? '✓' : '✗'})`)
  console.log(`RSS: ${start} MB at start, ${peak} MB peak, ${end} MB at the end of the last load with the hostile mix, ${settled.rss} MB once idle threads retired (${settled.seconds} s later; ${settled.memory}) (${settled.rss - start >= 0 ? '+' : ''}${settled.rss - start} MB; target ≤ +${RSS_TARGET_MB} MB); alive: ${alive ? 'yes' : 'NO'}`)
}

function tallyMap(outcomes: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const outcome of outcomes) counts.set(outcome, (counts.get(outcome) ?? 0) + 1)
  return counts
}

try {
  if (soakSeconds === undefined) await runAttacks()
  else await runSoak(soakSeconds)
} finally {
  for (const probe of probes.values()) await probe.stop()
  for (const service of services) service.child.kill('SIGTERM')
  html.close()
  json.close()
  silent.closeAllConnections()
  silent.close()
  rmSync(dir, { recursive: true, force: true })
}
