// The suite's processes: tap runs each test/groups/<name>.test.ts in a process of its own (.taprc),
// and each of them runs the test files of its group here, one after another, in one process. A
// process costs seconds before its first assertion (tap, the TypeScript loader, importing and
// warming up the service), which most files took longer to pay than to run their tests: the same
// fifteen files took a quarter of the CPU run together that they took one process each.
//
// A file meets the process as it would alone: it is imported only when every test of the files
// before it has ended. What it cannot meet alone is what an earlier file keeps until the process
// ends (a server shared through the file, closed by a teardown of the root test): files that need
// the process to themselves (thread priorities, counted garbage collections, process-wide
// settings, a root `beforeEach`, a check that nothing in the process still listens on a channel)
// are first in their group or in a group of their own. Every test file is in exactly one group (test/suite.test.ts holds it);
// `npx tap test/<file>.test.ts` still runs one file alone.
import { readFileSync } from 'node:fs'
import t from 'tap'

export const GROUPS: Readonly<Record<string, readonly string[]>> = {
  // Longest first (seconds in the suite, 2026-11-27): tap starts the runners in the order of their
  // names, and each runner's name begins with its group's place here (`runnerName`), so the two
  // processes take the long groups first and the short ones fill in at the end. Several groups
  // hold files that need the process to themselves (thread priorities, counted garbage
  // collections, process-wide settings): first in their group, or alone in it.
  package: ['package-deps', 'package-exports', 'package-pack', 'deploy', 'deploy-helm', 'openapi-client', 'linear-regexp', 'bench-smoke', 'readme-snippets'],
  types: ['typecheck', 'package-types'],
  service: ['ops-metrics', 'governance', 'http-map', 'http-validate', 'http-plugin', 'http-embedding', 'ops-metrics-series', 'ops-rate-limit', 'ops-tracing', 'readme-embedding'],
  reload: ['ops-reload', 'reload-sliced'],
  engine: [
    'engine-budgets', 'engine-shapes', 'engine-api', 'engine-codegen', 'engine-inline', 'engine-model', 'engine-operands', 'engine-concurrency', 'engine-content-cache', 'engine-document-errors', 'engine-sliced',
    'engine-extensions', 'engine-fanout', 'engine-json-member', 'engine-pointer', 'engine-properties', 'engine-records', 'engine-safety',
    'conformance', 'suggest', 'json-text', 'output-schema', 'print-sliced', 'config-positions', 'config-suggest', 'authoring-schema', 'layers', 'lint-spread', 'suite',
  ],
  stream: ['http-stream', 'cli-ndjson', 'stream-bytes', 'stream-gone', 'stream-limits', 'cli', 'readme-cli'],
  startup: ['startup-failures', 'startup-hangs', 'startup-npm', 'startup-serve', 'startup-sources'],
  http: [
    'auth-claims', 'auth-config', 'auth-duplicate-header', 'auth-jwks', 'auth-tokens', 'transport-client-errors', 'transport-options', 'transport-timeouts',
    'http-cors', 'http-common', 'http-errors', 'http-feature-off', 'http-health', 'http-logging', 'http-registry', 'http-serializers', 'http-hidden-classes',
    'openapi-auth', 'openapi-lint', 'playground',
  ],
  request: [
    'request-body', 'request-config', 'request-destinations', 'request-headers', 'request-limits', 'request-options-validation', 'request-parse',
    'request-redirects', 'request-scraper', 'request-secrets', 'request-service', 'request-url', 'hostile-fanout',
  ],
  workers: ['isolation-offloop', 'isolation-request-surface', 'request-json-thread', 'authoring-examples', 'authoring-explain'],
  validation: ['validation-linear', 'validation-properties', 'validation-report-bounds', 'validation-rules'],
  isolation: ['helper-process', 'isolation'],
  'bench-http': ['bench-http-smoke'],
  'request-hardening': ['request-hardening'],
  'hostile-inputs': ['hostile-inputs'],
  'large-output': ['large-output'],
  'rate-limit-redis': ['ops-rate-limit-redis'],
  'hostile-budgets': ['hostile-budgets'],
  slices: ['slices'],
  'idle-memory': ['idle-memory'],
  'store-postgres': ['store-postgres', 'managed-postgres'],
  managed: ['managed-http', 'store-directory', 'cli-publish'],
}

/** The file of test/groups/ that runs group `name`: its place in GROUPS, then its name (`01-package.test.ts`). */
export function runnerName(name: string): string {
  return `${String(Object.keys(GROUPS).indexOf(name) + 1).padStart(2, '0')}-${name}.test.ts`
}

/**
 * CPU time (ms) this process has used, all its threads, and its children that have ended (Linux
 * /proc: `cutime` and `cstime`): the suite is bound by the CPU of two cores, so a file's CPU is
 * what it costs the suite, however long it waits.
 */
function cpuMs(): { own: number; children: number } {
  const { userCPUTime, systemCPUTime } = process.resourceUsage()
  let children = 0
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    children = (Number(fields[13]) + Number(fields[14])) * 10
  } catch {
    // Not Linux: children are not counted.
  }
  return { own: Math.round((userCPUTime + systemCPUTime) / 1000), children }
}

/** Per file: what tap gives a file alone (.taprc `timeout`) and more, as a file may ask for itself. */
const FILE_TIMEOUT_MS = 300_000

/** Run the files of group `name` in this process, each after the last test of the one before has ended. */
export async function runGroup(name: string): Promise<void> {
  const files = GROUPS[name]
  if (files === undefined) throw new Error(`no test group named "${name}" (test/groups/index.ts)`)
  for (const file of files) {
    t.setTimeout(FILE_TIMEOUT_MS)
    const began = performance.now()
    const cpu = cpuMs()
    // Loaded inside a test of the root: a root that once took a teardown ends itself as soon as it
    // is idle (tap's autoend), and loading a file takes longer than that. The file's own tests,
    // created while this one runs, are queued after it.
    await t.test(`test/${file}.test.ts`, async (t) => {
      await import(new URL(`../${file}.test.ts`, import.meta.url).href)
      t.pass('loaded')
    })
    // Queued after the file's own tests, so it ends when they have.
    await t.test(`test/${file}.test.ts: every test ran`, async (t) => {
      t.pass('its tests ended before the next file was loaded')
    })
    // Where the suite's time goes, file by file (the group's own time is tap's).
    const used = cpuMs()
    t.comment(`${file}: ${Math.round(performance.now() - began)} ms, CPU ${used.own - cpu.own} ms + ${used.children - cpu.children} ms in child processes`)
  }
}
