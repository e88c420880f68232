// Startups that used to hang or die silently, through the real entry point (http.md §8): a FIFO in
// the MAPPINGS directory is skipped with a warning and the service starts; a FIFO named as MAPPINGS
// and a module whose top-level await never settles fail with exit 1 and one line naming the file.
import { execFileSync } from 'node:child_process'
import t from 'tap'
import { compiledEntry } from './proc-compiled.js'
import { exchange, freePort, spawnEntryPoint, tempTree, waitForHealth } from './startup-support.js'

// Each case spawns the service: seconds each on a busy two-core machine.
t.setTimeout(300000)

// The service as `npm start` runs it: the shipped files compiled, no test loader in the process.
const ENTRY = await compiledEntry()

const SILENT = '{"logging":{"level":"silent"}}'
/** A load timeout short enough to keep the test quick: the module never settles, whatever the bound. */
const QUICK = JSON.stringify({ logging: { level: 'silent' }, server: { loadTimeout: 250 } })

t.test('a FIFO in the MAPPINGS directory is skipped with a warning; the service starts', async (t) => {
  const tree = tempTree(t, { 'mappings/good.json': JSON.stringify({ $id: 'good', mapping: { '/x': '/' } }) })
  execFileSync('mkfifo', [tree.path('mappings/x.json')])
  const port = await freePort()
  const service = spawnEntryPoint(t, { PORT: String(port), OPTIONS: JSON.stringify({ host: '127.0.0.1', logging: { level: 'silent' } }), MAPPINGS: tree.path('mappings') }, 120000, ENTRY)
  await waitForHealth(service, port)
  t.equal(service.stderr(), `mapper-service: ignoring FIFO ${tree.path('mappings/x.json')}: not a regular file\n`, 'one warning line naming it')
  t.strictSame(Object.keys(JSON.parse((await exchange(port, 'GET', '/mappings')).body) as object), ['good'])
  service.child.kill('SIGTERM')
  t.equal((await service.exited).code, 0)
})

const failures: Array<{ name: string; files?: Record<string, string>; fifo?: string; env: Record<string, string>; says: string }> = [
  {
    name: 'a FIFO named as MAPPINGS',
    fifo: 'pipe.json',
    env: { OPTIONS: SILENT, MAPPINGS: '@/pipe.json' },
    says: 'mapper-service: MAPPINGS: @/pipe.json is not a regular file (a FIFO)',
  },
  {
    name: 'EXTENSIONS whose top-level await never settles',
    files: { 'package.json': '{"type":"module"}', 'extensions.js': 'await new Promise(() => {})\nexport default {}\n' },
    env: { OPTIONS: QUICK, EXTENSIONS: '@/extensions.js' },
    says: 'mapper-service: EXTENSIONS: @/extensions.js did not finish loading within 250 ms (options.server.loadTimeout)',
  },
  {
    name: 'a MAPPINGS module whose top-level await never settles',
    files: { 'package.json': '{"type":"module"}', 'mappings.js': 'await new Promise(() => {})\nexport default []\n' },
    env: { OPTIONS: QUICK, MAPPINGS: '@/mappings.js' },
    says: 'mapper-service: MAPPINGS: @/mappings.js did not finish loading within 250 ms (options.server.loadTimeout)',
  },
]

// The three processes at once (each fails early, or waits out the load timeout), then each checked.
t.test('each failure: exit 1, one line naming the file', async (t) => {
  const exits = await Promise.all(
    failures.map(async (c) => {
      const tree = tempTree(t, c.files)
      if (c.fifo !== undefined) execFileSync('mkfifo', [tree.path(c.fifo)])
      const env = Object.fromEntries(Object.entries(c.env).map(([key, value]) => [key, value.replaceAll('@/', `${tree.root}/`)]))
      return { c, root: tree.root, exit: await spawnEntryPoint(t, { PORT: '0', ...env }, 90000, ENTRY).exited }
    })
  )
  for (const { c, root, exit } of exits) {
    t.test(`${c.name}: exit 1, one line naming the file`, async (t) => {
      t.equal(exit.killed, false, 'exited by itself')
      t.equal(exit.code, 1, 'exit code 1 (not 13, not a hang)')
      t.equal(exit.stderr, `${c.says.replaceAll('@/', `${root}/`)}\n`)
      t.equal(exit.stdout, '', 'it never listened')
    })
  }
})
