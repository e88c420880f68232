// `npm run smoke`: the built service (dist/, from `npm run build`) as a user starts it, on the Node
// that runs this script: `node dist/bin/mapper-service.js` on a free port of 127.0.0.1; /health
// answers, the bundled `greet` mapping maps, a bad body is a 400 with the error body; then SIGTERM
// stops it with exit code 0. Prints one line per check and `smoke: N passed, M failed`. .ci/run
// runs it on the machine's Node, on Node 22 and on Node 24.
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address()
    probe.close(() => resolve(port))
  })
})
const child = spawn(process.execPath, ['dist/bin/mapper-service.js'], {
  cwd: root,
  env: { PATH: process.env.PATH, PORT: String(port), OPTIONS: '{"host":"127.0.0.1","logging":{"level":"warn"}}' },
  stdio: ['ignore', 'inherit', 'inherit'],
})
const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
const deadline = setTimeout(() => child.kill('SIGKILL'), 30_000)

let passed = 0
let failed = 0
function check(name, ok, detail = '') {
  if (ok) passed++
  else failed++
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok ? '' : `: ${detail}`}`)
}
const base = `http://127.0.0.1:${port}`
const post = (path, body) => fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body })

try {
  let health
  for (let tries = 0; tries < 100 && health === undefined; tries++) {
    health = await fetch(`${base}/health`).catch(() => undefined)
    if (health === undefined) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  check(`${process.version}: GET /health is 200`, health?.status === 200, String(health?.status))
  const mapped = await post('/map', '{"mapping":"greet","input":{"message":"hello"}}')
  const envelope = await mapped.json()
  check('POST /map greet maps', mapped.status === 200 && envelope.text === 'hello' && envelope.valid === true, JSON.stringify(envelope))
  const bad = await post('/map', '{"mapping":')
  const error = await bad.json()
  check('a body that is not JSON is a 400 with the error body', bad.status === 400 && typeof error.code === 'string' && typeof error.requestId === 'string', JSON.stringify(error))
} catch (error) {
  check('the service answers', false, String(error))
}
child.kill('SIGTERM')
const exit = await exited
clearTimeout(deadline)
check('SIGTERM stops it with exit code 0', exit.code === 0, JSON.stringify(exit))
console.log(`smoke: ${passed} passed, ${failed} failed`)
process.exitCode = failed === 0 ? 0 : 1
