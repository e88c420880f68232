// Serving through the real entry point (http.md §8): with MAPPINGS unset the bundled examples are
// served; every log line reaches stdout by the time the process exits; SIGTERM stops accepting,
// lets an in-flight request finish, and exits 0.
import { existsSync } from 'node:fs'
import { Agent } from 'node:http'
import t from 'tap'
import { compiledEntry } from './proc-compiled.js'
import { DELAYED_EXTENSIONS, exchange, freePort, spawnEntryPoint, tempTree, waitForHealth, waitUntil } from './startup-support.js'

t.setTimeout(300000)

// The service as `npm start` runs it: the shipped files compiled, no test loader in the process.
const ENTRY = await compiledEntry()

const SERVE_OPTIONS = JSON.stringify({ host: '127.0.0.1', logging: { level: 'silent' } })

const CITATION_RECORD = {
  title: 'On Mappings',
  ids: [
    { idType: 'isbn', value: '978-0' },
    { idType: 'doi', value: '10.1000/xyz' },
  ],
  created: { year: '1999' },
  contributors: [
    { surname: 'Lovelace', forename: 'Ada' },
    { surname: 'Hopper' },
  ],
}

// One process for the two tests that need the stock service (no MAPPINGS, no EXTENSIONS): logging at
// info, which the first does not look at, for the second to count the lines. Each request to /map
// is counted, the first test's included, and SIGTERM comes straight after the second's last answer.
t.test('no MAPPINGS, logging at info', async (t) => {
  const port = await freePort()
  const service = spawnEntryPoint(t, { PORT: String(port), OPTIONS: JSON.stringify({ host: '127.0.0.1', logging: { level: 'info' } }) }, 120000, ENTRY)
  await waitForHealth(service, port)
  /** The request id of every POST /map, in the order answered. */
  const ids: string[] = []

  await t.test('no MAPPINGS: the bundled examples are served', async (t) => {
    const map = async (mapping: string, input: unknown): Promise<unknown> => {
      const response = await exchange(port, 'POST', '/map', { mapping, input })
      t.equal(response.status, 200, `POST /map ${mapping} is 200`)
      ids.push(String(response.headers['x-request-id']))
      return JSON.parse(response.body) as unknown
    }
    t.strictSame(await map('echo', { message: 'hi', n: [1, 2] }), { echo: { message: 'hi', n: [1, 2] }, valid: true, errors: [] }, 'echo')
    t.strictSame(await map('greet', { message: 'hello' }), { text: 'hello', valid: true, errors: [] }, 'greet (a member of a compound document)')
    t.strictSame(
      await map('citation', CITATION_RECORD),
      {
        citation: {
          title: 'On Mappings',
          doi: '10.1000/xyz',
          year: 1999,
          authors: [
            { family: 'Lovelace', given: 'Ada' },
            { family: 'Hopper', given: '' },
          ],
          source: 'import',
        },
        valid: true,
        errors: [],
      },
      'citation (find, first, coercion, fan-out with defaults, constant)'
    )
    t.match(await map('citation', { title: 'No ids' }), { valid: false, errors: [{ required: true }] }, 'a missing required DOI is data, not an error')

    const registered = JSON.parse((await exchange(port, 'GET', '/mappings')).body) as Record<string, unknown>
    t.strictSame(Object.keys(registered).sort(), ['citation', 'echo', 'greet'], 'GET /mappings: the bundled registry')
    t.strictSame(JSON.parse((await exchange(port, 'GET', '/extensions')).body), { initializers: [], transformers: [], plugins: ['request'] }, 'the stock surface')
  })

  await t.test('the log is written off the event loop, and every line reaches stdout by the time the process exits; SIGTERM exits 0', async (t) => {
    for (let i = 0; i < 50; i++) {
      const response = await exchange(port, 'POST', '/map', { mapping: 'echo', input: { i } })
      t.equal(response.status, 200)
      ids.push(String(response.headers['x-request-id']))
    }
    // Straight after the last answer: lines still buffered must be flushed as the process exits.
    service.child.kill('SIGTERM')
    const exit = await service.exited
    t.equal(exit.killed, false, 'it exited by itself within the bound')
    t.equal(exit.code, 0, 'graceful shutdown exits 0')
    t.equal(exit.stderr, '', 'nothing on stderr')
    const lines = service
      .stdout()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { msg?: string; requestId?: string; path?: string; status?: number })
    const completed = lines.filter((line) => line.msg === 'request completed' && line.path === '/map')
    // Each line is written when its response has finished (onResponse), and a response's finish
    // may be reported after the client has its bytes and sent the next request: under load, two
    // lines of consecutive requests were seen written after later ones. Every line, once: none
    // lost, none twice, whatever their order.
    t.strictSame(
      completed.map((line) => line.requestId).sort(),
      [...ids].sort(),
      'one complete JSON line per request, none lost and none twice'
    )
    t.ok(completed.every((line) => line.status === 200))
  })
})

t.test('SIGTERM: new connections are refused, the in-flight request completes, then exit 0', async (t) => {
  const tree = tempTree(t, {
    'extensions.js': DELAYED_EXTENSIONS,
    'mappings/slow.json': JSON.stringify({ $id: 'slow', mapping: { '/out': { source: '/', delayed: { tag: 'late' } } } }),
  })
  const port = await freePort()
  const service = spawnEntryPoint(
    t,
    { PORT: String(port), OPTIONS: SERVE_OPTIONS, MAPPINGS: tree.path('mappings'), EXTENSIONS: tree.path('extensions.js'), DELAY_DIR: tree.root },
    120000,
    ENTRY
  )
  await waitForHealth(service, port)
  t.strictSame(JSON.parse((await exchange(port, 'GET', '/extensions')).body), { initializers: [], transformers: [], plugins: ['delayed'] })

  // A pooling client: without `Connection: close` on its response, its idle socket would hold the
  // shutdown open until a keep-alive timeout.
  const pool = new Agent({ keepAlive: true })
  t.teardown(() => pool.destroy())
  const inFlight = exchange(port, 'POST', '/map', { mapping: 'slow', input: { id: 7 } }, pool)
  await waitUntil('the slow request to reach its plugin', () => existsSync(tree.path('started')))

  service.child.kill('SIGTERM')
  // Shutdown has begun once a new connection is no longer served normally.
  await waitUntil('the server to stop accepting', async () => {
    try {
      return (await exchange(port, 'GET', '/health')).status === 503
    } catch {
      return true
    }
  })
  t.equal(service.child.exitCode, null, 'still running while a request is in flight')

  tree.write('release', '')
  const response = await inFlight
  t.equal(response.status, 200, 'the in-flight request completed')
  t.equal(response.headers.connection, 'close', 'its connection closes after the response')
  t.strictSame(JSON.parse(response.body), { out: { id: 7, tag: 'late' }, valid: true, errors: [] })

  const exit = await service.exited
  t.equal(exit.killed, false, 'it exited by itself within the bound')
  t.equal(exit.code, 0, 'graceful shutdown exits 0')
})
