// The `server` options block (http.md §8): connection limits for the standalone server, their
// defaults, their bounds and the cross-field rule (headersTimeout ≤ requestTimeout), each mistake a
// ConfigError naming the setting; buildServer hands the resolved values to Node's HTTP server.
import t from 'tap'
import { ConfigError, SERVER_DEFAULTS, resolveConfig } from '../config/resolve.js'
import { buildServer } from '../server.js'

t.test('defaults: every limit filled in', async (t) => {
  t.strictSame(resolveConfig({}).server, {
    requestTimeout: 30000,
    headersTimeout: 10000,
    keepAliveTimeout: 5000,
    connectionTimeout: 60000,
    maxConnections: 10000,
    maxHeaderSize: 16384,
    loadTimeout: 10000,
    trustProxy: false,
  })
  t.strictSame(resolveConfig({ server: {} }).server, SERVER_DEFAULTS)
})

t.test('what is set is kept; an unset headersTimeout follows a shorter requestTimeout down', async (t) => {
  const set = { requestTimeout: 20000, headersTimeout: 20000, keepAliveTimeout: 65000, connectionTimeout: 0, maxConnections: 3, maxHeaderSize: 8192, loadTimeout: 500, trustProxy: 2 }
  t.strictSame(resolveConfig({ server: set }).server, set)
  t.equal(resolveConfig({ server: { requestTimeout: 4000 } }).server.headersTimeout, 4000, 'min(10000, requestTimeout)')
  t.equal(resolveConfig({ server: { requestTimeout: 45000 } }).server.headersTimeout, 10000)
  t.equal(resolveConfig({ server: { headersTimeout: 30000 } }).server.headersTimeout, 30000, 'equal to the default requestTimeout')
})

const FAILURES: Array<[name: string, server: Record<string, unknown>, message: RegExp]> = [
  ['headersTimeout above requestTimeout', { requestTimeout: 5000, headersTimeout: 6000 }, /^options\.server\.headersTimeout \(6000\) must not exceed options\.server\.requestTimeout \(5000\)/],
  ['headersTimeout above the default requestTimeout', { headersTimeout: 40000 }, /^options\.server\.headersTimeout \(40000\) must not exceed options\.server\.requestTimeout \(30000\)/],
  ['an unknown key', { idleTimeout: 1000 }, /^options\.server\.idleTimeout/],
  ['a requestTimeout of 0', { requestTimeout: 0 }, /^options\.server\.requestTimeout/],
  ['a headersTimeout below 100', { headersTimeout: 99 }, /^options\.server\.headersTimeout/],
  ['a keepAliveTimeout of 0', { keepAliveTimeout: 0 }, /^options\.server\.keepAliveTimeout/],
  ['a negative connectionTimeout', { connectionTimeout: -1 }, /^options\.server\.connectionTimeout/],
  ['a timeout over an hour', { requestTimeout: 3600001 }, /^options\.server\.requestTimeout/],
  ['a fractional timeout', { keepAliveTimeout: 1.5 }, /^options\.server\.keepAliveTimeout/],
  ['a timeout as a string', { requestTimeout: '30s' }, /^options\.server\.requestTimeout/],
  ['maxConnections of 0', { maxConnections: 0 }, /^options\.server\.maxConnections/],
  ['maxHeaderSize below 1024', { maxHeaderSize: 512 }, /^options\.server\.maxHeaderSize/],
  ['maxHeaderSize over 1 MiB', { maxHeaderSize: 1048577 }, /^options\.server\.maxHeaderSize/],
  ['a loadTimeout of 0', { loadTimeout: 0 }, /^options\.server\.loadTimeout/],
  ['a trustProxy hop count of 0', { trustProxy: 0 }, /^options\.server\.trustProxy/],
  ['an empty trustProxy list', { trustProxy: '' }, /^options\.server\.trustProxy/],
]

t.test('every mistake is a ConfigError naming the setting, from resolveConfig and buildServer', async (t) => {
  for (const [name, server, message] of FAILURES) {
    t.throws(() => resolveConfig({ server }), ConfigError, name)
    t.throws(() => resolveConfig({ server }), { message }, name)
    await t.rejects(buildServer({ options: { logging: { level: 'silent' }, server } }), { name: 'ConfigError', message }, `${name} (buildServer)`)
  }
  t.throws(() => resolveConfig({ server: 30000 }), { message: /^options\.server/ }, 'not an object')
})

t.test('buildServer: Node’s HTTP server gets the resolved limits', async (t) => {
  const check = async (server: Record<string, number>, expected: Record<string, number>): Promise<void> => {
    const app = await buildServer({ options: { logging: { level: 'silent' }, server } })
    t.teardown(() => app.close())
    const http = app.server as typeof app.server & { maxHeaderSize?: number }
    t.strictSame(
      {
        requestTimeout: http.requestTimeout,
        headersTimeout: http.headersTimeout,
        keepAliveTimeout: http.keepAliveTimeout,
        connectionTimeout: http.timeout,
        maxConnections: http.maxConnections,
        maxHeaderSize: http.maxHeaderSize,
      },
      expected
    )
  }
  await check({}, { requestTimeout: 30000, headersTimeout: 10000, keepAliveTimeout: 5000, connectionTimeout: 60000, maxConnections: 10000, maxHeaderSize: 16384 })
  await check(
    { requestTimeout: 2000, headersTimeout: 1000, keepAliveTimeout: 70000, connectionTimeout: 0, maxConnections: 5, maxHeaderSize: 4096 },
    { requestTimeout: 2000, headersTimeout: 1000, keepAliveTimeout: 70000, connectionTimeout: 0, maxConnections: 5, maxHeaderSize: 4096 }
  )
})
