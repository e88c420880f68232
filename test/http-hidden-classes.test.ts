// What the service makes per request is a plain fast-mode object sharing one hidden class across
// requests. An object literal with a getter is not: V8 makes it a dictionary-mode object with a
// fresh accessor each time, and those objects kept each request's objects alive past every
// young-generation collection until the next full one (scavenges of 12–20 ms, the p99 of /map).
// Checked with V8's own %HasFastProperties and %HaveSameMap in a process started with
// --allow-natives-syntax: the caller of a route, and the `extra` an inline evaluation hands its
// extensions, for two requests.
import { execFile } from 'node:child_process'
import t from 'tap'

const script = `
import Fastify from 'fastify'
import { buildServer } from './server.ts'
import { callerOf } from './http/routes/caller.ts'
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)')
const fast = new Function('a', 'return %HasFastProperties(a)')
const plain = (pair) => pair.length === 2 && fast(pair[0]) && fast(pair[1]) && sameMap(pair[0], pair[1])
const extras = []
const probe = (_options, value, context) => { extras.push(context.run.extra); return value }
const app = await buildServer({
  mappings: [{ $id: 'probe', mapping: { '/x': { source: '/a', probe: {} } } }],
  extensions: { plugins: { probe } },
  options: { isolation: false, logging: { level: 'silent' } },
})
for (const a of [1, 2]) {
  const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'probe', input: { a } } })
  if (response.statusCode !== 200) throw new Error(response.body)
}
await app.close()
const callers = []
const bare = Fastify()
bare.get('/', (request, reply) => { callers.push(callerOf(request, reply)); return 'ok' })
for (const _ of [1, 2]) await bare.inject({ method: 'GET', url: '/' })
await bare.close()
process.stdout.write(JSON.stringify({ extras: plain(extras), callers: plain(callers) }))
`

t.test('the caller and the extra of extensions keep one hidden class from request to request', async (t) => {
  const loader = new URL('./loader/register.mjs', import.meta.url).href
  const out = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ['--allow-natives-syntax', '--import', loader, '--input-type=module', '-e', script], { cwd: new URL('..', import.meta.url), timeout: 60000 }, (error, stdout, stderr) =>
      error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`))
    )
  })
  t.strictSame(JSON.parse(out), { extras: true, callers: true })
})
