// Method and body (request-plugin.md §1): the method is case-insensitive and defaults to GET; the
// `body` mapping is evaluated against the pipeline value into a fresh target and sent as JSON.
import { type IncomingMessage, type ServerResponse } from 'node:http'
import t from 'tap'
import { Mapper } from '../engine/index.js'
import { createRequest } from '../extensions/request/index.js'
import { upstream } from './request-support.js'

/** Answers with the method, content type and raw body it received. */
const echoBody = (req: IncomingMessage, res: ServerResponse): void => {
  let body = ''
  req.setEncoding('utf8')
  req.on('data', (chunk: string) => (body += chunk))
  req.on('end', () => {
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ method: req.method, type: req.headers['content-type'] ?? null, body }))
  })
}

t.test('POST sends the body mapping\'s result as JSON with Content-Type application/json', async (t) => {
  const up = await upstream(t, echoBody)
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const result = await mapper.map(
    {
      mapping: {
        '/created': {
          source: '/draft',
          request: {
            origin: up.origin,
            pathname: '/items',
            method: 'post',
            headers: { 'content-type': 'text/plain' },
            body: { mapping: { '/name': '/title', '/kind': { constant: 'gadget' }, '/by': { input: '/user/name' } } },
            pointer: '/json',
          },
        },
      },
    },
    { draft: { title: 'Ada' }, user: { name: 'Grace' } }
  )
  t.same(result.created, {
    method: 'POST',
    type: 'application/json',
    body: '{"name":"Ada","kind":"gadget","by":"Grace"}',
  })
  t.same(Object.keys(result).sort(), ['created', 'errors', 'valid'], 'the body mapping wrote nothing into the output')
  t.same(up.hits, ['POST /items'])
})

t.test('the method is case-insensitive and defaults to GET', async (t) => {
  const up = await upstream(t, echoBody)
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const result = await mapper.map(
    {
      mapping: {
        '/plain': { request: { origin: up.origin, pathname: '/a', pointer: '/json/method' } },
        '/put': { request: { origin: up.origin, pathname: '/b', method: 'Put', body: { mapping: { '/v': { constant: 1 } } }, pointer: '/json/method' } },
        '/del': { request: { origin: up.origin, pathname: '/c', method: 'delete', pointer: '/json/method' } },
      },
    },
    {}
  )
  t.same([result.plain, result.put, result.del], ['GET', 'PUT', 'DELETE'])
})

t.test('a body mapping that short-circuits sends nothing and reports its errors', async (t) => {
  const up = await upstream(t, echoBody)
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const result = await mapper.map(
    { mapping: { '/r': { request: { origin: up.origin, method: 'POST', body: { mapping: { '/n': { source: '/name', required: true } } } } } } },
    {}
  )
  t.equal(result.valid, false)
  t.match(result.errors, [{ message: 'required value' }])
  t.same(up.hits, [])
})

t.test('a body with GET, a body that is not a mapping, and unsupported methods are refused', async (t) => {
  const up = await upstream(t, echoBody)
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const run = (request: Record<string, unknown>) => mapper.map({ mapping: { '/r': { request: { origin: up.origin, ...request } } } }, {})
  await t.rejects(run({ body: { mapping: { '/a': '/a' } } }), { message: 'request option body cannot be sent with GET' })
  await t.rejects(run({ method: 'POST', body: { name: 'literal' } }), { message: 'request option body must be a mapping: { mapping: … }' })
  await t.rejects(run({ method: 'CONNECT' }), { message: 'request method CONNECT is not supported' })
  await t.rejects(run({ method: 'GET /x' }), { message: 'request option method must be an HTTP method name' })
  t.same(up.hits, [])
})

t.test('HEAD reads no body; its declared length is not held against maxResponseBytes', async (t) => {
  const up = await upstream(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100000' })
    res.end()
  })
  const mapper = new Mapper({}, { plugins: { request: createRequest({ maxResponseBytes: 10 }) } })
  const result = await mapper.map({ mapping: { '/r': { request: { origin: up.origin, method: 'head' } } } }, {})
  t.same(result.r, { status: 200, 'content-type': 'text/plain', text: '' })
  t.same(up.hits, ['HEAD /'])
})
