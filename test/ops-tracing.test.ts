// Tracing (OpenTelemetry): with an SDK started before the server is built (here with an in-memory
// exporter, as the standalone server does from OTEL_*), each POST /map is a span tree — the request
// (continuing the caller's traceparent), the evaluation, the request plugin's upstream call — and
// the upstream sees `traceparent` only when the plugin's header allowlist lets it through. Real
// listening servers, real upstreams on 127.0.0.1. Load shedding is off in the servers built here:
// a loaded machine's event-loop delay must not answer 503 for what these tests are about.
import { compiledEntry } from './proc-compiled.js'
import type { IncomingHttpHeaders } from 'node:http'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { NodeSDK } from '@opentelemetry/sdk-node'
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import t from 'tap'
import { tracingConfigured } from '../observability/telemetry.js'
import type { Extensions } from '../engine/index.js'
import { createRequest } from '../extensions/request/index.js'
import { ECHO, STRICT, originOf, serve, upstream } from './http-support.js'
import { exchange, freePort, spawnEntryPoint, waitForHealth } from './startup-support.js'

const exporter = new InMemorySpanExporter()
const sdk = new NodeSDK({ spanProcessors: [new SimpleSpanProcessor(exporter)], autoDetectResources: false, metricReaders: [], logRecordProcessors: [] })
sdk.start()
t.teardown(() => sdk.shutdown())

let traces = 0
/** A fresh caller trace: its id, and the traceparent header that carries it. */
function callerTrace(): { traceId: string; traceparent: string } {
  traces += 1
  const traceId = traces.toString(16).padStart(32, 'a')
  return { traceId, traceparent: `00-${traceId}-00f067aa0ba902b7-01` }
}

/** The finished spans of one trace. */
const spansOf = (traceId: string): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId)

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId

/** Whether `ancestor` is on the parent chain of `span` within `spans`. */
function descendsFrom(span: ReadableSpan, ancestor: ReadableSpan, spans: readonly ReadableSpan[]): boolean {
  for (let current: ReadableSpan | undefined = span; current !== undefined;) {
    const parent = parentOf(current)
    if (parent === ancestor.spanContext().spanId) return true
    current = spans.find((candidate) => candidate.spanContext().spanId === parent)
  }
  return false
}

async function fetchingServer(t: Parameters<typeof serve>[0], extensions: Extensions, options: Record<string, unknown> = {}) {
  const seen: IncomingHttpHeaders[] = []
  const up = await upstream(t, (req, res) => {
    seen.push(req.headers)
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"title":"traced"}')
  })
  const app = await serve(t, {
    mappings: [ECHO, STRICT, { $id: 'fetch', mapping: { '/title': { request: { origin: up.origin, pathname: '/book', pointer: '/json/title' } } } }],
    extensions,
    // Function extensions run inline (isolation.test.ts covers workers).
    options: { isolation: false, underPressure: false, ...options },
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const post = async (body: unknown, traceparent: string): Promise<{ status: number; data: any }> => {
    const response = await fetch(`${originOf(app)}/map`, { method: 'POST', headers: { 'content-type': 'application/json', traceparent }, body: JSON.stringify(body) })
    return { status: response.status, data: await response.json() }
  }
  return { seen, post }
}

t.test('request → evaluation → upstream, in the caller\'s trace, traceparent sent where allowed', async (t) => {
  const { seen, post } = await fetchingServer(t, { plugins: { request: createRequest({ allowHeaders: ['traceparent'] }) } })
  const { traceId, traceparent } = callerTrace()
  const answer = await post({ mapping: 'fetch', input: {} }, traceparent)
  t.equal(answer.status, 200)
  t.same(answer.data, { title: 'traced', valid: true, errors: [] })

  const spans = spansOf(traceId)
  const request = spans.find((span) => span.name === 'request')
  const evaluation = spans.find((span) => span.name === 'mapping.evaluate')
  const call = spans.find((span) => span.kind === SpanKind.CLIENT)
  if (request === undefined || evaluation === undefined || call === undefined) {
    t.fail(`missing spans; got ${spans.map((span) => span.name).join(', ')}`)
    return
  }
  t.equal(parentOf(request), '00f067aa0ba902b7', "the request span continues the caller's span")
  t.equal(request.kind, SpanKind.SERVER)
  t.equal(request.attributes['http.route'], '/map')
  t.ok(descendsFrom(evaluation, request, spans), 'the evaluation runs within the request')
  t.equal(parentOf(call), evaluation.spanContext().spanId, 'the upstream call is a child of the evaluation')
  t.same(evaluation.attributes, { 'mapper.mapping': 'fetch', 'mapper.valid': true, 'mapper.errors': 0 })
  t.equal(call.name, 'GET')
  t.equal(call.attributes['http.request.method'], 'GET')
  t.equal(call.attributes['server.address'], '127.0.0.1')
  t.equal(call.attributes['http.response.status_code'], 200)
  t.match(call.attributes['url.full'], /^http:\/\/127\.0\.0\.1:\d+\/book$/)

  t.equal(seen.length, 1)
  t.equal(seen[0]!.traceparent, `00-${traceId}-${call.spanContext().spanId}-01`, 'the upstream continues the trace from the call span')
  t.notOk(seen[0]!.tracestate, 'tracestate is not on the allowlist')
})

t.test('allowHeaders: true forwards the trace context too', async (t) => {
  const { seen, post } = await fetchingServer(t, { plugins: { request: createRequest({ allowHeaders: true }) } })
  const { traceId, traceparent } = callerTrace()
  t.equal((await post({ mapping: 'fetch', input: {} }, traceparent)).status, 200)
  const call = spansOf(traceId).find((span) => span.kind === SpanKind.CLIENT)
  t.ok(call)
  t.equal(seen[0]!.traceparent, `00-${traceId}-${call!.spanContext().spanId}-01`)
})

t.test('an allowlist without traceparent (the stock surface\'s []) keeps the trace from the upstream, not the span', async (t) => {
  const { seen, post } = await fetchingServer(t, { plugins: { request: createRequest({ allowHeaders: [] }) } })
  const { traceId, traceparent } = callerTrace()
  t.equal((await post({ mapping: 'fetch', input: {} }, traceparent)).status, 200)
  t.equal(seen.length, 1)
  t.notOk(seen[0]!.traceparent, 'no traceparent upstream')
  t.notOk(seen[0]!.tracestate)
  const spans = spansOf(traceId)
  const evaluation = spans.find((span) => span.name === 'mapping.evaluate')
  const call = spans.find((span) => span.kind === SpanKind.CLIENT)
  t.ok(evaluation && call)
  t.equal(parentOf(call!), evaluation!.spanContext().spanId, 'the call is still traced, in the service')
})

t.test('valid: false, an explicit document and a failed evaluation as span attributes and status', async (t) => {
  const { post } = await fetchingServer(t, { plugins: { request: createRequest({ allowHeaders: [] }) } }, { map: { explicit: true }, limits: { explicit: { fanOut: 10 } } })

  const invalid = callerTrace()
  t.equal((await post({ mapping: 'strict', input: { name: 42 } }, invalid.traceparent)).status, 200)
  const invalidSpan = spansOf(invalid.traceId).find((span) => span.name === 'mapping.evaluate')
  t.same(invalidSpan?.attributes, { 'mapper.mapping': 'strict', 'mapper.valid': false, 'mapper.errors': 1 })
  t.equal(invalidSpan?.status.code, SpanStatusCode.UNSET, 'valid: false is a result, not a failure')

  const explicit = callerTrace()
  t.equal((await post({ mapping: { mapping: { '/x': '/y' } }, input: { y: 1 } }, explicit.traceparent)).status, 200)
  t.same(spansOf(explicit.traceId).find((span) => span.name === 'mapping.evaluate')?.attributes, { 'mapper.mapping': '(explicit)', 'mapper.valid': true, 'mapper.errors': 0 })

  const failed = callerTrace()
  const fanning = { mapping: { '/all': { input: '/list', each: { '/v': '/' } } } }
  const answer = await post({ mapping: fanning, input: { list: Array.from({ length: 50 }, (_, i) => i) } }, failed.traceparent)
  t.equal(answer.data.code, 'BudgetExceeded')
  const failedSpan = spansOf(failed.traceId).find((span) => span.name === 'mapping.evaluate')
  t.equal(failedSpan?.status.code, SpanStatusCode.ERROR)
  t.match(failedSpan?.status.message, /fanOut budget/)
  t.ok(failedSpan?.events.some((event) => event.name === 'exception'), 'the exception is recorded')
})

t.test('an id that is not served: the evaluation span says (unknown), never the id', async (t) => {
  const { post } = await fetchingServer(t, { plugins: { request: createRequest({ allowHeaders: [] }) } })
  const unknown = callerTrace()
  const madeUp = 'made-up-id-7f3a'
  t.equal((await post({ mapping: madeUp, input: {} }, unknown.traceparent)).status, 404)
  const span = spansOf(unknown.traceId).find((candidate) => candidate.name === 'mapping.evaluate')
  t.equal(span?.attributes['mapper.mapping'], '(unknown)')
  t.equal(span?.status.code, SpanStatusCode.ERROR)
  t.notOk(JSON.stringify({ attributes: span?.attributes, status: span?.status, events: span?.events }).includes(madeUp), 'the made-up id is in no attribute, status or event of the span')
})

t.test('with tracing on, unknown paths and errors keep the service\'s answers', async (t) => {
  const app = await serve(t, { options: { underPressure: false } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { traceId, traceparent } = callerTrace()
  const response = await fetch(`${originOf(app)}/nowhere/7`, { headers: { traceparent } })
  t.equal(response.status, 404)
  const body = (await response.json()) as { code: string; message: string }
  t.equal(body.code, 'NotFound')
  t.equal(body.message, 'No route for GET /nowhere/7')
  t.ok(response.headers.get('x-request-id'))
  const request = spansOf(traceId).find((span) => span.name === 'request')
  t.equal(request?.attributes['http.response.status_code'], 404)
  t.notOk(request?.attributes['http.route'], 'no route pattern for an unknown path')
})

t.test('the OTEL_* environment decides whether the standalone server starts the SDK', async (t) => {
  const cases: Array<[env: NodeJS.ProcessEnv, expected: boolean]> = [
    [{}, false],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ OTEL_TRACES_EXPORTER: 'console,otlp' }, true],
    [{ OTEL_TRACES_EXPORTER: 'none' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }, false],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'false' }, true],
    [{ OTEL_SERVICE_NAME: 'mapper' }, false],
  ]
  for (const [env, expected] of cases) t.equal(tracingConfigured(env), expected, JSON.stringify(env))
})

/** A local OTLP/HTTP collector taking JSON: the span names of every export it received. */
async function collector(t: Parameters<typeof upstream>[0]): Promise<{ endpoint: string; spans: Array<{ name: string; service: unknown }> }> {
  const spans: Array<{ name: string; service: unknown }> = []
  const up = await upstream(t, (req, res) => {
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (text += chunk))
    req.on('end', () => {
      const body = JSON.parse(text) as { resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans: Array<{ spans: Array<{ name: string }> }> }> }
      for (const { resource, scopeSpans } of body.resourceSpans) {
        const service = resource.attributes.find((attribute) => attribute.key === 'service.name')?.value.stringValue
        for (const scope of scopeSpans) for (const span of scope.spans) spans.push({ name: span.name, service })
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{}')
    })
  })
  return { endpoint: `${up.origin}/v1/traces`, spans }
}

t.test('the standalone server exports its spans where OTEL_* says, and none without it', async (t) => {
  // The two processes (each with its own collector) start side by side: their start-ups, seconds
  // each, overlap instead of adding up.
  const run = async (configured: boolean) => {
    const sink = await collector(t)
    const port = await freePort()
    const otel = { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'mapper-under-test' }
    // Load shedding off: on a loaded machine a fresh process's first request may be shed (503).
    const service = spawnEntryPoint(t, { PORT: String(port), OPTIONS: '{"logging":{"level":"silent"},"underPressure":false}', ...otel, ...(configured ? { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: sink.endpoint } : {}) }, 120000, await compiledEntry())
    await waitForHealth(service, port)
    const status = (await exchange(port, 'POST', '/map', { mapping: 'echo', input: { traced: configured } })).status
    // Shutting down flushes what the batch processor still holds: the count is final once it exits.
    service.child.kill('SIGTERM')
    return { configured, status, exit: await service.exited, spans: sink.spans }
  }
  for (const { configured, status, exit, spans } of await Promise.all([run(true), run(false)])) {
    t.equal(status, 200)
    t.equal(exit.code, 0, exit.stderr)
    if (configured) {
      const names = spans.map((span) => span.name)
      t.ok(names.includes('request'), `request spans (${names.join(', ')})`)
      t.ok(names.includes('mapping.evaluate'), 'the evaluation span')
      t.ok(spans.every((span) => span.service === 'mapper-under-test'), 'the SDK read OTEL_SERVICE_NAME')
    } else {
      t.same(spans, [], 'no OTEL_* exporter setting: no SDK, nothing exported')
    }
  }
})
