// A throwaway PostgreSQL for the tests of the PostgreSQL mapping store (test/store-postgres.test.ts):
// initdb into a fresh temp directory, then a postgres on a free port of 127.0.0.1 with its socket
// in that directory, stopped and removed at teardown. Nothing of the machine's own clusters is
// used or touched. A system service: without its binaries the tests are skipped with one line,
// except where MAPPER_REQUIRE_SYSTEM_SERVICES=1 (.ci/run sets it and installs Debian's postgresql),
// which makes their absence a failure.
//
// PostgreSQL refuses to run as root, and the tests run as root in CI: there initdb and postgres run
// as the `postgres` system user (the Debian package creates it), spawned with its uid and gid (no
// runuser in between, so the pid is postgres's own and a signal reaches it), in a directory it owns.
// Host connections need a password (scram-sha-256), given in the URL, so the tests can check that
// it is printed nowhere; it holds characters a URL must encode, so neither spelling may leak.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import type { Test } from 'tap'
import { loadPg, type PgClient } from '../support/optional.js'
import { freePort } from './startup-support.js'

/** Why the PostgreSQL tests are skipped where the binaries are missing. */
export const POSTGRES_SKIP_REASON = 'needs PostgreSQL\'s initdb and postgres (Debian: apt-get install postgresql; .ci/run installs it)'

/** The role the URL names, created by initdb; a superuser of the throwaway cluster. */
export const POSTGRES_USER = 'mapper'

/** How long the server may take to accept connections once started. */
const READY_MS = 15000

/** Whether `directory` holds both initdb and postgres. */
const hasBinaries = (directory: string): boolean => existsSync(join(directory, 'initdb')) && existsSync(join(directory, 'postgres'))

let found: string | null | undefined

/**
 * The directory of initdb and postgres: Debian's /usr/lib/postgresql/<major>/bin (the newest major
 * first; Debian puts only wrappers, or nothing, on PATH), else the first PATH entry holding both.
 */
export function postgresBinDir(): string | undefined {
  if (found !== undefined) return found ?? undefined
  const candidates: string[] = []
  const debian = '/usr/lib/postgresql'
  try {
    const majors = readdirSync(debian).filter((name) => /^\d+(\.\d+)?$/.test(name)).sort((a, b) => Number(b) - Number(a))
    for (const major of majors) candidates.push(join(debian, major, 'bin'))
  } catch {
    // No Debian layout.
  }
  for (const entry of (process.env.PATH ?? '').split(delimiter)) if (entry !== '') candidates.push(entry)
  found = candidates.find(hasBinaries) ?? null
  return found ?? undefined
}

/** Whether initdb and postgres are installed (postgresBinDir). */
export const postgresInstalled = (): boolean => postgresBinDir() !== undefined

/**
 * Register `body`'s tests when PostgreSQL is installed; otherwise skip the file with its reason, or
 * fail it under MAPPER_REQUIRE_SYSTEM_SERVICES=1 (as test/ops-rate-limit-redis.test.ts does).
 */
export function describePostgres(t: Test, body: () => void): void {
  if (postgresInstalled()) {
    body()
  } else if (process.env.MAPPER_REQUIRE_SYSTEM_SERVICES === '1') {
    t.fail(`PostgreSQL is not installed and MAPPER_REQUIRE_SYSTEM_SERVICES=1: this test ${POSTGRES_SKIP_REASON}`)
  } else {
    t.plan(0, `skipped: ${POSTGRES_SKIP_REASON}`)
  }
}

export interface Postgres {
  /** postgres://mapper:<password>@127.0.0.1:<port>/postgres, the password percent-encoded. */
  readonly url: string
  /** The password as it is (the URL holds it encoded). */
  readonly password: string
  /** The postmaster's pid. */
  readonly pid: number
  /** Stop the server (a fast shutdown: sessions are ended, transactions rolled back); settles once it exited. */
  stop(): Promise<void>
  /** Send `signal` to the postmaster (SIGSTOP and SIGCONT stall and resume it; SIGKILL leaves its sessions to die with it). */
  kill(signal: NodeJS.Signals): void
}

/** Who runs initdb and postgres: this process, or the `postgres` user when this one is root. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string): number => {
    const ran = spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' })
    const value = Number(ran.stdout.trim())
    if (ran.status !== 0 || !Number.isInteger(value)) throw new Error('PostgreSQL refuses to run as root, and there is no `postgres` user to run it as (Debian\'s postgresql package creates one)')
    return value
  }
  return { uid: id('-u'), gid: id('-g') }
}

/** The pids of `parent`'s children (Linux /proc), for a postmaster that had to be killed: its backends. */
function childrenOf(parent: number): number[] {
  const children: number[] = []
  let entries: string[] = []
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name))
  } catch {
    return children
  }
  for (const entry of entries) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) children.push(Number(entry))
    } catch {
      // Gone meanwhile.
    }
  }
  return children
}

const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null

/** Resolves true once `child` exited, false after `ms`. */
async function exitWithin(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return true
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  try {
    return await Promise.race([once(child, 'exit').then(() => true), expired])
  } finally {
    clearTimeout(timer)
  }
}

/** A pg Client for `url` with short bounds, connected (the caller ends it). */
export async function connectPostgres(url: string, connectionTimeoutMillis = 3000): Promise<PgClient> {
  const { Client } = await loadPg()
  const client = new Client({
    connectionString: url,
    application_name: 'mapper-service tests',
    connectionTimeoutMillis,
    statement_timeout: 10000,
    query_timeout: 12000,
    idle_in_transaction_session_timeout: 30000,
    keepAlive: false,
    keepAliveInitialDelayMillis: 0,
  })
  // A client whose server goes away emits 'error' when it is idle: the tests stop servers.
  client.on('error', () => undefined)
  try {
    await client.connect()
  } catch (error) {
    await client.end().catch(() => undefined)
    throw error
  }
  return client
}

/**
 * A throwaway cluster: initdb into a fresh temp directory (role `mapper` with a random password,
 * trust on the socket, scram-sha-256 over TCP), postgres on a free 127.0.0.1 port with its socket
 * in that directory and durability off (fsync, synchronous_commit, full_page_writes: the data is
 * thrown away), waited for until it accepts a connection (at most 15 s). At teardown the server is
 * ended (SIGQUIT, then SIGKILL for it and its backends) and the directory removed. Only the
 * default `postgres` database exists.
 */
export async function startPostgres(t: Test): Promise<Postgres> {
  const bin = postgresBinDir()
  if (bin === undefined) throw new Error(`PostgreSQL is not installed: ${POSTGRES_SKIP_REASON}`)
  const user = serverUser()
  const root = mkdtempSync(join(tmpdir(), 'mapper-service-postgres-'))
  // Set once postgres is spawned: the teardown, registered first, ends it before the directory goes.
  const running: { child?: ChildProcess } = {}
  t.teardown(async () => {
    const child = running.child
    if (child !== undefined && !exited(child)) {
      const pid = child.pid!
      child.kill('SIGQUIT')
      if (!(await exitWithin(child, 5000))) {
        const backends = childrenOf(pid)
        child.kill('SIGKILL')
        for (const backend of backends) {
          try {
            process.kill(backend, 'SIGKILL')
          } catch {
            // Already gone.
          }
        }
        await exitWithin(child, 5000)
      }
    }
    rmSync(root, { recursive: true, force: true })
  })
  const data = join(root, 'data')
  const sockets = join(root, 'sockets')
  const passwordFile = join(root, 'password')
  mkdirSync(sockets)
  const password = `pw-${randomBytes(8).toString('hex')}/never@logged`
  writeFileSync(passwordFile, `${password}\n`)
  if (user !== undefined) {
    for (const path of [root, sockets, passwordFile]) chownSync(path, user.uid, user.gid)
  }
  // The temp dir is 0700: only its owner (postgres, or this user) needs into it; root goes anywhere.
  chmodSync(root, 0o700)
  const env = { PATH: process.env.PATH ?? '', LANG: 'C', LC_ALL: 'C', TZ: 'UTC' }
  const as = user === undefined ? {} : { uid: user.uid, gid: user.gid }

  const initdb = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, `--username=${POSTGRES_USER}`, `--pwfile=${passwordFile}`, '--auth-local=trust', '--auth-host=scram-sha-256', '--encoding=UTF8', '--locale=C', '--no-sync', '--no-instructions'],
    { cwd: root, env, encoding: 'utf8', timeout: 60000, ...as }
  )
  if (initdb.status !== 0) throw new Error(`initdb failed (${initdb.status ?? initdb.signal ?? initdb.error?.message}):\n${initdb.stdout}\n${initdb.stderr}`)

  const port = await freePort()
  const settings = {
    listen_addresses: '127.0.0.1',
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    autovacuum: 'off',
    max_wal_senders: '0',
    wal_level: 'minimal',
    shared_buffers: '16MB',
    max_connections: '40',
    log_min_messages: 'warning',
  }
  const args = ['-D', data, '-p', String(port), '-k', sockets, ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`])]
  const server = spawn(join(bin, 'postgres'), args, { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'], ...as })
  running.child = server
  let output = ''
  server.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    output = (output + chunk).slice(-8000)
  })
  const url = `postgres://${POSTGRES_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`

  const deadline = Date.now() + READY_MS
  for (;;) {
    if (exited(server)) throw new Error(`postgres exited (${server.exitCode ?? server.signalCode}) before it accepted connections:\n${output}`)
    try {
      const client = await connectPostgres(url, 1000)
      await client.end()
      break
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections within ${READY_MS} ms (${(error as Error).message}):\n${output}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  return {
    url,
    password,
    pid: server.pid!,
    async stop() {
      if (exited(server)) return
      server.kill('SIGINT')
      if (await exitWithin(server, 10000)) return
      server.kill('SIGQUIT')
      if (await exitWithin(server, 5000)) return
      server.kill('SIGKILL')
      await exitWithin(server, 5000)
    },
    kill(signal) {
      server.kill(signal)
    },
  }
}
