// Rate limits shared in Redis (options.rateLimit.redis) against a real redis-server on 127.0.0.1:
// two service instances sharing one Redis allow `max` requests between them, not each; a Redis
// that stalls or dies fails open (requests pass, each answered within a bound, counted, one log
// line per outage), and the limit applies again once Redis answers; start-up with Redis down does
// not wait for it; the password in the URL never reaches a log line or an error. Load shedding is
// off: a loaded machine's event-loop delay must not answer 503 for what these tests are about.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { resolveConfig } from '../config/resolve.js'
import { resolveRateLimitOptions, type RateLimitConfig } from '../http/plugins/rate-limit/options.js'
import { REDACTED } from '../support/redact.js'
import { REDIS_TIMEOUTS } from '../http/plugins/rate-limit/store.js'
import { buildServer } from '../server.js'
import { capturedLog, type CapturedLog } from './log-support.js'
import { ECHO, settlesWithin } from './http-support.js'
import { freePort, tempTree } from './startup-support.js'

t.setTimeout(20000)

const PASSWORD = 'pw-3f9a1c7e-never-logged'
const MAX = 5
/** What any one request may take while Redis is stalled or gone: the command timeout and slack. */
const BOUND_MS = REDIS_TIMEOUTS.commandMs + 1500

interface Redis {
  readonly url: string
  readonly child: ChildProcess
}

/** redis-server on a free 127.0.0.1 port in a temp dir, no persistence, stopped at teardown. */
async function startRedis(t: Test): Promise<Redis> {
  const port = await freePort()
  const dir = tempTree(t).root
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--requirepass', PASSWORD]
  const child = spawn('redis-server', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let output = ''
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('Ready to accept connections')) resolve()
    })
    child.on('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`)))
    setTimeout(() => reject(new Error(`redis-server not ready after 5 s:\n${output}`)), 5000).unref()
  })
  await ready
  return { url: `redis://:${PASSWORD}@127.0.0.1:${port}/0`, child }
}

async function instance(t: Test, url: string, log: CapturedLog): Promise<FastifyInstance> {
  const app = await buildServer({ mappings: [ECHO], logger: log.logger, options: { rateLimit: { max: MAX, timeWindow: 60000, redis: url }, underPressure: false } })
  t.teardown(() => app.close())
  return app
}

const map = (app: FastifyInstance) => app.inject({ method: 'POST', url: '/map', payload: { mapping: 'echo', input: { n: 1 } } })

/** One request, which must be answered within BOUND_MS. */
async function bounded(t: Test, app: FastifyInstance, what: string): Promise<number> {
  const response = map(app)
  t.ok(await settlesWithin(response, BOUND_MS), `${what}: answered within ${BOUND_MS} ms`)
  return (await response).statusCode
}

async function series(app: FastifyInstance, name: string): Promise<number | undefined> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.split(' ')[1])
}

const lines = (log: CapturedLog, msg: RegExp) => log.lines().filter((line) => msg.test(String(line.msg)))
const UNREACHABLE = /^rate limit store unreachable/
const BACK = /^rate limit store reachable again/

// A system service: without it the file is skipped with its reason, except where
// MAPPER_REQUIRE_SYSTEM_SERVICES is set (.ci/run sets it), which makes its absence a failure.
const installed = spawnSync('redis-server', ['--version']).error === undefined
const reason = 'needs redis-server (Debian: apt-get install redis-server; .ci/run installs it)'
if (!installed && process.env.MAPPER_REQUIRE_SYSTEM_SERVICES === '1') {
  t.fail(`redis-server is not installed and MAPPER_REQUIRE_SYSTEM_SERVICES=1: this test ${reason}`)
} else if (!installed) {
  t.plan(0, `skipped: ${reason}`)
} else {
  t.test('two instances share one limit; a stalled or dead Redis fails open; the limit returns with Redis', async (t) => {
    const redis = await startRedis(t)
    const logA = capturedLog()
    const logB = capturedLog()
    const a = await instance(t, redis.url, logA)
    const b = await instance(t, redis.url, logB)
    const redacted = redis.url.replace(`:${PASSWORD}`, REDACTED)
    t.match(lines(logA, /^rate limits shared in Redis$/), [{ level: 30, store: redacted }], 'connected at start-up, the URL redacted')
    t.equal(await series(a, 'mapper_rate_limit_store_up'), 1, 'the store is up')
    t.equal(await series(a, 'mapper_rate_limit_store_errors_total'), 0, 'no request passed unlimited')

    // Alternately to each: MAX requests pass between them, every further one is refused by either.
    const statuses: number[] = []
    for (let i = 0; i < 3 * MAX; i++) {
      const response = await map(i % 2 === 0 ? a : b)
      statuses.push(response.statusCode)
      if (response.statusCode !== 429) continue
      const body = JSON.parse(response.body) as Record<string, unknown>
      t.strictSame(Object.keys(body), ['code', 'message', 'requestId'], `request ${i + 1}: the error body`)
      t.equal(body.code, 'TooManyRequests')
      t.equal(body.message, `Rate limit exceeded: at most ${MAX} requests per 1 minute`)
      const retryAfter = Number(response.headers['retry-after'])
      t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `request ${i + 1}: Retry-After is the seconds left in the window (${retryAfter})`)
    }
    t.strictSame(statuses, [...Array<number>(MAX).fill(200), ...Array<number>(2 * MAX).fill(429)], `exactly ${MAX} requests pass between the two instances`)

    // Stalled: the connection stays open and nothing answers; the command timeout bounds the request.
    redis.child.kill('SIGSTOP')
    t.equal(await bounded(t, a, 'Redis stalled'), 200, 'Redis stalled: the request passes (fail open)')
    t.equal(await bounded(t, a, 'Redis stalled, again'), 200, 'and the next one')
    t.equal(await series(a, 'mapper_rate_limit_store_errors_total'), 2, 'each request let through is counted')
    t.equal(await series(a, 'mapper_rate_limit_store_up'), 0, 'the store is down')
    t.equal(lines(logA, UNREACHABLE).length, 1, 'one warning for the outage, not one per request')
    redis.child.kill('SIGCONT')
    t.equal(await bounded(t, a, 'Redis back'), 429, 'Redis answering again: the shared limit applies again')
    t.equal(lines(logA, BACK).length, 1, 'the end of the outage is logged once')
    t.equal(await series(a, 'mapper_rate_limit_store_up'), 1, 'the store is up again')

    // Gone: the connection is closed; commands fail at once while the client reconnects.
    redis.child.kill('SIGKILL')
    await once(redis.child, 'exit')
    for (let i = 0; i < 6; i++) {
      const app = i % 2 === 0 ? a : b
      t.equal(await bounded(t, app, `Redis gone, request ${i + 1}`), 200, `Redis gone: request ${i + 1} passes`)
    }
    t.equal(await series(a, 'mapper_rate_limit_store_errors_total'), 2 + 3, 'counted on A')
    t.equal(await series(b, 'mapper_rate_limit_store_errors_total'), 3, 'counted on B')
    t.equal(await series(b, 'mapper_rate_limit_store_up'), 0)
    t.equal(lines(logA, UNREACHABLE).length, 2, 'A: one warning per outage (stalled, then gone)')
    t.equal(lines(logB, UNREACHABLE).length, 1, 'B: one warning for the outage')
    t.match(lines(logB, UNREACHABLE)[0], { level: 40, store: redacted, error: String }, 'the warning names the store, redacted, and the error')
    for (const log of [logA, logB]) t.notOk(log.text().includes(PASSWORD), 'the password is in no log line')
    t.ok(await settlesWithin(Promise.all([a.close(), b.close()]), BOUND_MS), 'closing does not wait for the dead Redis')
  })

  t.test('start-up with Redis down does not wait for it, and requests pass', async (t) => {
    const url = `redis://127.0.0.1:${await freePort()}/0`
    const log = capturedLog()
    const started = instance(t, url, log)
    t.ok(await settlesWithin(started, REDIS_TIMEOUTS.connectMs + 1500), 'the server is built without Redis')
    const app = await started
    t.equal(await bounded(t, app, 'no Redis'), 200, 'a request passes')
    t.equal(lines(log, UNREACHABLE).length, 1, 'one warning')
    t.equal(await series(app, 'mapper_rate_limit_store_errors_total'), 1)
  })
}

/**
 * What start-up makes of options.rateLimit (app.ts): resolveConfig checks the options, then the
 * rate-limit plugin resolves what resolveConfig handed it, as it is registered. False: off.
 */
function limitOf(options: unknown): RateLimitConfig | false {
  const given = resolveConfig(options).rateLimit
  return given === false ? false : resolveRateLimitOptions(given)
}

t.test('the option is validated, and its password never printed', async (t) => {
  t.strictSame(limitOf({ rateLimit: { redis: 'redis://127.0.0.1:6379/0' } }), { max: 100, timeWindow: 60000, redis: 'redis://127.0.0.1:6379/0' })
  t.strictSame(limitOf({ rateLimit: { max: 3 } }), { max: 3, timeWindow: 60000 }, 'no redis: in memory, as before')
  const refused = (redis: string, message: RegExp) => {
    t.throws(() => limitOf({ rateLimit: { redis } }), { name: 'ConfigError', message }, redis.replace(PASSWORD, '…'))
    try {
      limitOf({ rateLimit: { redis } })
    } catch (error) {
      t.notOk((error as Error).message.includes(PASSWORD), 'the message does not hold the password')
    }
  }
  refused(`http://user:${PASSWORD}@cache:6379`, /^options\.rateLimit\.redis \(http:\/\/REDACTED@cache:6379\/?\) must be a redis:\/\/ or rediss:\/\/ URL$/)
  refused(`${PASSWORD}`, /^options\.rateLimit\.redis must be a redis:\/\/ or rediss:\/\/ URL$/)
  refused(`redis://:${PASSWORD}@cache:6379/zero`, /^options\.rateLimit\.redis \(redis:\/\/REDACTED@cache:6379\/zero\): the path is the database number/)
  t.throws(() => limitOf({ rateLimit: { redis: '' } }), { name: 'ConfigError', message: /^options\.rateLimit/ }, 'an empty URL')
  t.ok(limitOf({ rateLimit: { redis: 'rediss://cache.example:6380' } }), 'rediss:// (TLS), no database number')
})
