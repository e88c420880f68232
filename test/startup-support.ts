// The real entry point (`node --import test/loader/register.mjs bin/mapper-service.ts`, or a compiled
// bin/mapper-service.js run as it is: test/proc-compiled.ts) as a child process with a controlled
// environment, every child bounded by a timeout and killed at teardown; plus temporary directories
// and free ports on 127.0.0.1.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest, type Agent } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Options } from '../config/options-schema.js'

/**
 * An options object the types refuse, as a JavaScript caller might pass it: for the tests of the
 * validation at start-up that stops such a mistake with one line.
 */
export const untyped = (options: object): Options => options as Options

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const ENTRY = join(ROOT, 'bin', 'mapper-service.ts')
/** The TypeScript loader of the tests (.taprc): unlike tsx's, it applies in worker threads too. */
export const LOADER = pathToFileURL(join(ROOT, 'test', 'loader', 'register.mjs')).href

interface Teardown {
  teardown(fn: () => unknown): void
}

/** A fresh directory under the OS temp dir, removed at teardown; `write` creates files in it. */
export function tempTree(t: Teardown, files: Record<string, string> = {}): { root: string; path(relative: string): string; write(relative: string, text: string): string } {
  const root = mkdtempSync(join(tmpdir(), 'mapper-service-startup-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  const tree = {
    root,
    path: (relative: string): string => join(root, relative),
    write(relative: string, text: string): string {
      const path = join(root, relative)
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, text)
      return path
    },
  }
  for (const [relative, text] of Object.entries(files)) tree.write(relative, text)
  return tree
}

/** A port that was free on 127.0.0.1 a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  /** True when the bound expired and the child was killed. */
  readonly killed: boolean
}

export interface EntryPoint {
  readonly child: ChildProcess
  stdout(): string
  stderr(): string
  /** Settles when the child exits, or when the bound expires (the child is then killed). */
  readonly exited: Promise<Exit>
}

/**
 * `command args` as spawn's file and arguments, run without tap's process-info hooks: tap adds
 * them to NODE_OPTIONS of every process a test spawns, whatever environment it is given, and in a
 * node process they cost about a second of start-up (every module loaded passes their hook
 * thread). `env -u` takes them out and execs the command, which keeps its pid, its signals and its
 * exit status; nothing the tests look at depends on them.
 */
export function untracked(command: string, args: readonly string[]): [string, string[]] {
  return ['/usr/bin/env', ['-u', 'NODE_OPTIONS', command, ...args]]
}

/** How node runs `entry`: a TypeScript one through the test loader, a compiled one (test/proc-compiled.ts) as it is. */
const node = (entry: string, args: readonly string[] = []): [string, string[]] => untracked(process.execPath, [...(entry.endsWith('.ts') ? ['--import', LOADER, entry] : [entry]), ...args])

/**
 * Spawn the entry point (`entry`, by default this tree's) with only PATH and HOME from this process
 * (no tap or loader variables leak in) plus `env`. The child is killed after `timeoutMs` and at teardown.
 */
export function spawnEntryPoint(t: Teardown, env: Record<string, string>, timeoutMs = 60000, entry = ENTRY): EntryPoint {
  const child = spawn(...node(entry), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  let killed = false
  const timer = setTimeout(() => {
    killed = true
    child.kill('SIGKILL')
  }, timeoutMs)
  const exited = new Promise<Exit>((resolve) => {
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, killed })
    })
  })
  t.teardown(() => {
    clearTimeout(timer)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    return exited
  })
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}

/**
 * A plain HTTP exchange, by default on a fresh connection closed afterwards; pass a keep-alive
 * `agent` to behave like a pooling client (a load balancer, a probe) that keeps it open.
 */
export function exchange(
  port: number,
  method: string,
  path: string,
  body?: unknown,
  agent: Agent | false = false
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body)
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: text === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
        timeout: 30000,
      },
      (res) => {
        let received = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (received += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: received }))
        res.on('error', reject)
      }
    )
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)))
    req.on('error', reject)
    req.end(text)
  })
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Poll until `probe` returns true; fails after `timeoutMs` or as soon as `stop` says so. */
export async function waitUntil(what: string, probe: () => Promise<boolean> | boolean, timeoutMs = 60000, stop: () => string | undefined = () => undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const reason = stop()
    if (reason !== undefined) throw new Error(`gave up waiting for ${what}: ${reason}`)
    if (await probe()) return
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms`)
    await pause(50)
  }
}

/** Wait until the entry point answers GET `path` (its /health; a host's prefixed one) with 200 (fails early if it exits). */
export async function waitForHealth(service: EntryPoint, port: number, path = '/health'): Promise<void> {
  await waitUntil(
    `GET ${path}`,
    async () => {
      try {
        return (await exchange(port, 'GET', path)).status === 200
      } catch {
        return false
      }
    },
    60000,
    () => (service.child.exitCode !== null || service.child.signalCode !== null ? `the service exited early: ${service.stderr()}` : undefined)
  )
}

// The plugin signals that it started (a file), then waits for the test to release it (another file):
// the request is provably in flight (when SIGTERM or a reload arrives), without any timing assumption.
export const DELAYED_EXTENSIONS = `
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const dir = process.env.DELAY_DIR
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

export default {
  plugins: {
    async delayed(options, value) {
      writeFileSync(join(dir, 'started'), '')
      while (!existsSync(join(dir, 'release'))) await pause(20)
      return { ...value, tag: options.tag }
    },
  },
}
`

export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const CLEAN = { MAPPINGS: '', EXTENSIONS: '', OPTIONS: '', OPTIONS_FILE: '' }

/**
 * Run a `mapper-service` command in this process, through the same `runCommand` and the same
 * output and exit-code wiring as the entry point, with a clean MAPPINGS / EXTENSIONS / OPTIONS
 * environment; `runEntryPoint` is the real process.
 */
export async function runCli(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<Ran> {
  // Imported when first needed: bin/commands.ts loads the whole service, which a test that only
  // spawns the entry point or uses the temp trees has no use for (a second of start-up each).
  const { runCommand } = await import('../bin/commands.js')
  let stdout = ''
  let stderr = ''
  const code = await runCommand(args, {
    out: (text) => (stdout += text),
    err: (text) => (stderr += text),
    stdin: async () => options.stdin ?? '',
    env: { ...process.env, ...CLEAN, ...options.env },
  })
  if (code === undefined) throw new Error(`runCli: ${args.join(' ')} would serve`)
  return { code, stdout, stderr }
}

/**
 * Run the `mapper-service` command as a process, like `runCli`: `entry`, by default this tree's
 * (from source, through the test loader).
 */
export function runEntryPoint(args: string[], options: { stdin?: string; env?: Record<string, string>; entry?: string } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(...node(options.entry ?? ENTRY, args), {
      cwd: ROOT,
      env: { ...process.env, ...CLEAN, ...options.env },
      timeout: 30000,
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.stdin ?? '')
  })
}
