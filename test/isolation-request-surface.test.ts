// A host's extension surface of `request` plugins made by createRequest from plain data (the
// README's embedding example) runs isolated like the stock surface: each worker thread makes the
// same plugins from their configuration, so explicit documents leave the event loop and their
// upstream calls still reach the upstream. A plugin given a function (checkUrl) cannot cross, and
// the service says so once and runs explicit work inline, as for any surface of functions.
import t, { type Test } from 'tap'
import { threadsWithChildren } from './process-support.js'
import Fastify from 'fastify'
import mapperService, { INLINE_EXTENSIONS_WARNING } from '../app.js'
import { createRequest } from '../extensions/request/index.js'
import { upstream } from './request-support.js'

interface Line {
  readonly level: number
  readonly msg: string
}

async function host(t: Test, extensions: Record<string, unknown>, lines: Line[]): Promise<ReturnType<typeof Fastify>> {
  const app = Fastify({ logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line) as Line) } } })
  t.teardown(() => app.close())
  await app.register(mapperService, { prefix: '/mapper', extensions, options: { map: { explicit: true }, underPressure: false } })
  await app.ready()
  return app
}

t.test('request plugins made from plain data: no warning, explicit documents in a worker, upstream reached', { skip: process.platform === 'linux' ? false : 'threads are counted through /proc' }, async (t) => {
  const up = await upstream(t, (_request, response) => {
    response.setHeader('content-type', 'application/json')
    response.end('{"v":42}')
  })
  const lines: Line[] = []
  const app = await host(t, { plugins: { request: createRequest({ allowHeaders: [], denyPrivateNetworks: false }) } }, lines)
  t.same(lines.filter((line) => line.msg === INLINE_EXTENSIONS_WARNING), [], 'no inline warning: the surface can cross')
  const before = threadsWithChildren()
  const answer = await app.inject({ method: 'POST', url: '/mapper/map', payload: { mapping: { mapping: { '/v': { source: '', request: { origin: up.origin, pathname: '/value', pointer: '/json/v' } } } }, input: {} } })
  t.equal(answer.statusCode, 200, answer.body)
  t.match(answer.json(), { v: 42 }, 'the worker\'s own request plugin reached the upstream')
  t.same(up.hits, ['GET /value'], 'one call, from the worker')
  t.ok([...threadsWithChildren()].some((thread) => !before.has(thread)), 'a worker thread started for the explicit document (in the helper process)')
})

t.test('a request plugin given a function stays on the event loop, with the warning', async (t) => {
  const lines: Line[] = []
  await host(t, { plugins: { request: createRequest({ allowHeaders: [], checkUrl: () => {} }) } }, lines)
  t.equal(lines.filter((line) => line.msg === INLINE_EXTENSIONS_WARNING).length, 1, 'said once')
})

t.test('a surface mixing a request plugin with other functions stays on the event loop, with the warning', async (t) => {
  const lines: Line[] = []
  await host(t, { plugins: { request: createRequest({ allowHeaders: [] }) }, transformers: { upper: (value: unknown) => String(value).toUpperCase() } }, lines)
  t.equal(lines.filter((line) => line.msg === INLINE_EXTENSIONS_WARNING).length, 1, 'said once')
})
