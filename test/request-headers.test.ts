// Outgoing headers (request-plugin.md §1 `headers`, §2 `allowHeaders`): only the literal headers a
// mapping writes, filtered by the instance's allowlist — checked on what a real upstream receives.
import { type IncomingMessage, type ServerResponse } from 'node:http'
import t from 'tap'
import { Mapper } from '../engine/index.js'
import { createRequest, HOP_HEADER, type RequestConfig } from '../extensions/request/index.js'
import { upstream } from './request-support.js'

/** Reflects the request headers as JSON. */
const reflect = (req: IncomingMessage, res: ServerResponse): void => {
  res.setHeader('content-type', 'application/json')
  res.end(JSON.stringify({ headers: req.headers }))
}

const SENT = { authorization: 'Bearer t', cookie: 'sid=1', 'X-Api-Key': 'k123' }

async function receivedHeaders(origin: string, config: RequestConfig, headers: Record<string, string> = SENT): Promise<Record<string, string>> {
  const mapper = new Mapper({}, { plugins: { request: createRequest(config) } })
  const result = await mapper.map({ mapping: { '/h': { request: { origin, pathname: '/echo', headers, pointer: '/json/headers' } } } }, {})
  return result.h as Record<string, string>
}

t.test('allowHeaders true (the default) forwards every literal header', async (t) => {
  const up = await upstream(t, reflect)
  const received = await receivedHeaders(up.origin, {})
  t.match(received, { authorization: 'Bearer t', cookie: 'sid=1', 'x-api-key': 'k123' })
  t.same(await receivedHeaders(up.origin, { allowHeaders: true }), received)
})

t.test('allowHeaders as a list forwards only those names, case-insensitively', async (t) => {
  const up = await upstream(t, reflect)
  const received = await receivedHeaders(up.origin, { allowHeaders: ['x-API-key'] })
  t.equal(received['x-api-key'], 'k123')
  t.notOk('authorization' in received)
  t.notOk('cookie' in received)
})

t.test('allowHeaders [] forwards none', async (t) => {
  const up = await upstream(t, reflect)
  const received = await receivedHeaders(up.origin, { allowHeaders: [] })
  for (const name of ['authorization', 'cookie', 'x-api-key']) t.notOk(name in received, name)
})

t.test('the plugin adds only the hop header to a GET beyond what HTTP needs', async (t) => {
  const up = await upstream(t, reflect)
  const received = await receivedHeaders(up.origin, {}, {})
  t.same(Object.keys(received).filter((name) => !['host', 'connection'].includes(name)), [HOP_HEADER])
  t.equal(received[HOP_HEADER], '1')
  t.equal((await receivedHeaders(up.origin, { allowHeaders: [] }, {}))[HOP_HEADER], '1', 'whatever the allowlist')
})

t.test('a mapping can neither set, change nor drop the hop header', async (t) => {
  const up = await upstream(t, reflect)
  for (const name of [HOP_HEADER, 'X-Mapper-Hop']) {
    for (const config of [{}, { allowHeaders: [HOP_HEADER] }]) {
      await t.rejects(receivedHeaders(up.origin, config, { [name]: '' }), {
        message: `request header ${name} is set by the request plugin (loop protection) and cannot be set`,
      }, name)
    }
  }
  t.same(up.hits, [])
})

t.test('headers the HTTP client controls, and malformed headers, are refused before sending', async (t) => {
  const up = await upstream(t, reflect)
  await t.rejects(receivedHeaders(up.origin, {}, { Host: 'elsewhere.test' }), {
    message: 'request header Host is controlled by the HTTP client and cannot be set',
  })
  await t.rejects(receivedHeaders(up.origin, {}, { 'transfer-encoding': 'chunked' }), { message: /controlled by the HTTP client/ })
  await t.rejects(receivedHeaders(up.origin, {}, { 'x-a': 'one\r\nx-b: two' }), {
    message: 'request header x-a must be a string without line breaks',
  })
  await t.rejects(receivedHeaders(up.origin, {}, { 'bad name': 'v' }), { message: /is not a valid HTTP field name/ })
  await t.rejects(receivedHeaders(up.origin, {}, { 'x-n': 1 } as unknown as Record<string, string>), {
    message: 'request header x-n must be a string without line breaks',
  })
  t.same(up.hits, [])
})
