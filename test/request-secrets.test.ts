// Secrets never printed (issue 30): an upstream URL can carry a credential in its query
// (`?api_key=…`, a `search: { access_token }`) or its userinfo (`user:password@`), and so can a
// JWKS URL's query. Every kind of failing call is made with a planted credential in both places,
// through the service with `errorDetail: full` (the real messages shown to callers), its log
// captured, an OpenTelemetry SDK recording the spans and the upstream channel listened to: the
// credential appears in none of them, while the redacted URL (parameter names kept) does. The
// service's own request span (`url.path`, a caller's query included) is redacted the same way.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { NodeSDK } from '@opentelemetry/sdk-node'
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import type { MappingDocument } from '../engine/index.js'
import { createRequest, UPSTREAM_CHANNEL } from '../extensions/request/index.js'
import { REDACTED, redactUrl } from '../support/redact.js'
import { buildServer } from '../server.js'
import { rsaKeys, sign } from './auth-support.js'
import { capturedLog } from './log-support.js'
import { upstream } from './request-support.js'
import { freePort } from './startup-support.js'

const exporter = new InMemorySpanExporter()
const sdk = new NodeSDK({ spanProcessors: [new SimpleSpanProcessor(exporter)], autoDetectResources: false, metricReaders: [], logRecordProcessors: [] })
sdk.start()
t.teardown(() => sdk.shutdown())

/** The planted credentials: one in the query, one as the password, one as the user name. */
const KEY = 'k3y-Planted-9f2c71'
const PASSWORD = 'pw-Planted-4e1b08'
const USER = 'usr-Planted-77aa31'
const PLANTED = [KEY, PASSWORD, USER]

const published: string[] = []
const onUpstream = (message: unknown): void => {
  const call = message as { url: string; error: unknown }
  published.push(call.url, call.error instanceof Error ? `${call.error.message} ${String(call.error.cause)}` : String(call.error))
}
subscribe(UPSTREAM_CHANNEL, onUpstream)
t.teardown(() => unsubscribe(UPSTREAM_CHANNEL, onUpstream))

/** Every place a secret could surface, as one text. */
function everything(log: ReturnType<typeof capturedLog>, answers: readonly string[]): string {
  const spans = exporter.getFinishedSpans().map((span) => JSON.stringify({ name: span.name, attributes: span.attributes, status: span.status, events: span.events }))
  return [log.text(), ...answers, ...spans, ...published].join('\n')
}

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

function assertNoSecret(t: Tap, text: string): void {
  for (const secret of PLANTED) t.notOk(text.includes(secret), `${secret} appears nowhere`)
  // Not percent-encoded either (a credential in a search value is encoded).
  for (const secret of PLANTED) t.notOk(text.includes(encodeURIComponent(secret)), `${secret} appears nowhere encoded`)
}

const fetching = (id: string, request: Record<string, unknown>): MappingDocument => ({ $id: id, mapping: { '/got': { request } } }) as MappingDocument

/** A service with three request plugins (open, quick to time out, guarded), isolation off (all in this process). */
async function serve(t: Tap, mappings: MappingDocument[], log: ReturnType<typeof capturedLog>): Promise<FastifyInstance> {
  const extensions = {
    plugins: {
      request: createRequest({ maxResponseBytes: 64 * 1024 }),
      quick: createRequest({ timeoutMs: 300 }),
      guarded: createRequest({ denyPrivateNetworks: true }),
    },
  }
  const app = await buildServer({ mappings, extensions, logger: log.logger, options: { isolation: false, errorDetail: 'full', underPressure: false } })
  t.teardown(() => app.close())
  return app
}

t.test('failing upstream calls: the planted credential is in no answer, log line, span or channel message', async (t) => {
  const up = await upstream(t, (req, res) => {
    const path = (req.url ?? '').split('?')[0]
    if (path === '/stall') return // never answers: the deadline passes
    if (path === '/moved') {
      res.writeHead(302, { location: `https://${USER}:${PASSWORD}@elsewhere.example.test/next?sig=${KEY}` })
      res.end()
      return
    }
    if (path === '/huge') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ pad: 'x'.repeat(200_000) }))
      return
    }
    if (path === '/broken') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"not json')
      return
    }
    if (path === '/deep') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('['.repeat(300) + ']'.repeat(300))
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{}')
  })
  const port = Number(new URL(up.origin).port)
  const closed = await freePort()
  const withSecrets = (p: number, path: string): string => `http://${USER}:${PASSWORD}@127.0.0.1:${p}${path}?api_key=${KEY}&page=2`
  const cases: Array<[what: string, mapping: MappingDocument, input: unknown, status: number]> = [
    ['connection refused', fetching('refused', { url: { input: '/url' } }), { url: withSecrets(closed, '/x') }, 500],
    ['connection refused, the key from search', fetching('search', { origin: `http://${USER}:${PASSWORD}@127.0.0.1:${closed}`, pathname: '/x', search: { access_token: 'token' } }), { token: KEY }, 500],
    ['timeout', fetching('stall', { url: { input: '/url' } }), { url: withSecrets(port, '/stall') }, 500],
    ['over maxResponseBytes', fetching('huge', { url: { input: '/url' } }), { url: withSecrets(port, '/huge') }, 500],
    ['invalid JSON', fetching('broken', { url: { input: '/url' } }), { url: withSecrets(port, '/broken') }, 500],
    ['too deep', fetching('deep', { url: { input: '/url' } }), { url: withSecrets(port, '/deep') }, 500],
    ['redirect refused (the Location has credentials too)', fetching('moved', { url: { input: '/url' } }), { url: withSecrets(port, '/moved') }, 422],
    ['private network refused', fetching('private', { url: { input: '/url' } }), { url: withSecrets(port, '/x') }, 422],
    ['protocol refused', fetching('ftp', { url: { input: '/url' } }), { url: `ftp://${USER}:${PASSWORD}@127.0.0.1/x?api_key=${KEY}` }, 422],
    ['a URL that does not parse', fetching('unparsed', { url: { input: '/url' } }), { url: `http://${USER}:${PASSWORD}@[::1/x?api_key=${KEY}` }, 422],
  ]
  // The timeout and the private network go through their own plugins.
  const plugin = (id: string): string => (id === 'stall' ? 'quick' : id === 'private' ? 'guarded' : 'request')
  const mappings = cases.map(([, mapping]) => {
    const request = (mapping.mapping as Record<string, { request: unknown }>)['/got']!.request
    return { $id: mapping.$id, mapping: { '/got': { [plugin(mapping.$id!)]: request } } } as MappingDocument
  })
  const log = capturedLog()
  const app = await serve(t, mappings, log)
  const answers: string[] = []
  for (const [what, mapping, input, status] of cases) {
    const response = await app.inject({ method: 'POST', url: '/map', payload: { mapping: mapping.$id, input } })
    t.equal(response.statusCode, status, `${what}: ${status}`)
    answers.push(response.body)
  }
  // A caller's own query: the request span's url.path carries it redacted (the log line has the path alone).
  const queried = await app.inject({ method: 'POST', url: `/map?access_token=${KEY}`, payload: { mapping: 'refused', input: { url: withSecrets(closed, '/x') } } })
  t.equal(queried.statusCode, 500)
  answers.push(queried.body)
  const text = everything(log, answers)
  assertNoSecret(t, text)
  // The URLs are still there to read, redacted.
  t.match(text, `http://${REDACTED}@127.0.0.1:${closed}/x?api_key=${REDACTED}&page=${REDACTED}`, 'the connection failure names the redacted URL')
  t.match(text, `/x?access_token=${REDACTED}`, 'a search parameter keeps its name')
  t.match(text, `Request timed out after 300 ms: http://${REDACTED}@127.0.0.1:${port}/stall?api_key=${REDACTED}`)
  t.match(text, `https://${REDACTED}@elsewhere.example.test/next?sig=${REDACTED}`, 'the refused Location, redacted')
  t.match(text, `Invalid JSON in response from http://${REDACTED}@127.0.0.1:${port}/broken?api_key=${REDACTED}`)
  t.ok(exporter.getFinishedSpans().some((span) => String(span.attributes['url.full']).includes(`api_key=${REDACTED}`)), 'the span carries url.full, redacted')
  t.ok(exporter.getFinishedSpans().some((span) => span.attributes['url.path'] === `/map?access_token=${REDACTED}`), 'the request span carries url.path, redacted')
  // The upstream did get the credential: redaction is for printing only.
  t.ok(up.hits.some((hit) => hit.includes(`api_key=${KEY}`)), 'the upstream was sent the real query')
})

t.test('an unreachable JWKS: the key set URL is logged without its query values', async (t) => {
  const closed = await freePort()
  const log = capturedLog()
  const app = await buildServer({
    mappings: [{ $id: 'echo', mapping: { '/v': '/v' } } as MappingDocument],
    logger: log.logger,
    options: { isolation: false, errorDetail: 'full', underPressure: false, auth: { jwksUri: `http://127.0.0.1:${closed}/.well-known/jwks.json?tenant=acme&token=${KEY}` } },
  })
  t.teardown(() => app.close())
  const rsa = rsaKeys()
  const token = sign({ sub: 'alice' }, { key: rsa.privatePem, algorithm: 'RS256', kid: 'k1' })
  const response = await app.inject({ method: 'POST', url: '/map', headers: { authorization: `Bearer ${token}` }, payload: { mapping: 'echo', input: { v: 1 } } })
  t.equal(response.statusCode, 500)
  const text = everything(log, [response.body])
  assertNoSecret(t, text)
  t.match(text, `/.well-known/jwks.json?tenant=${REDACTED}&token=${REDACTED} is not available`)
})

t.test('redactUrl: query values and userinfo replaced, names kept, whatever the spelling', async (t) => {
  const cases: Array<[string, string]> = [
    [`https://${USER}:${PASSWORD}@api.example.test:8443/v1/items?api_key=${KEY}&flag&x=1#frag`, `https://${REDACTED}@api.example.test:8443/v1/items?api_key=${REDACTED}&flag&x=${REDACTED}`],
    [`https://${USER}@api.example.test/`, `https://${REDACTED}@api.example.test/`],
    [`https://:${PASSWORD}@api.example.test/`, `https://${REDACTED}@api.example.test/`],
    ['https://api.example.test/plain', 'https://api.example.test/plain'],
    [`http://h/p?a=${KEY}&a=${KEY}`, `http://h/p?a=${REDACTED}&a=${REDACTED}`],
    [`http://h/?=${KEY}`, `http://h/?=${REDACTED}`],
    // Not a URL: redacted by its shape.
    [`http://${USER}:${PASSWORD}@[::1/x?api_key=${KEY}`, `http://${REDACTED}@[::1/x?api_key=${REDACTED}`],
    [`/relative/path?token=${KEY}`, `/relative/path?token=${REDACTED}`],
    [`not a url at all ?token=${KEY}#x`, `not a url at all ?token=${REDACTED}`],
  ]
  for (const [given, expected] of cases) {
    t.equal(redactUrl(given), expected, given.slice(0, 40))
    assertNoSecret(t, redactUrl(given))
  }
  t.equal(redactUrl(new URL(`https://${USER}:${PASSWORD}@h.test/a?b=${KEY}`)), `https://${REDACTED}@h.test/a?b=${REDACTED}`, 'a URL object too')
})
