// The parse envelope (request-plugin.md §1 "Result"): one branch per content type, matched
// case-insensitively; non-2xx responses are data; the same response always gives the same envelope.
import t from 'tap'
import { Mapper, type EvaluationContext } from '../engine/index.js'
import { createRequest, MAX_RESPONSE_DEPTH } from '../extensions/request/index.js'
import { upstream, type Upstream } from './request-support.js'

interface Fixture {
  status?: number
  type?: string
  body: string | Buffer
}

const HTML = `<!doctype html><html><head>
<title>On Mapping</title>
<meta name="Description" content="A book">
<meta property="og:title" content="On Mapping">
<meta name="keywords" content="maps"><meta name="keywords" content="charts">
<meta charset="utf-8">
<script type="Application/LD+JSON">{"@type":"Book","name":"On Mapping"}</script>
<script type="application/ld+json">{"@type":"Second"}</script>
</head><body><h1>On Mapping</h1></body></html>`

const XML = `<?xml version="1.0" encoding="UTF-8"?>
<!-- a feed -->
<feed xmlns="http://www.w3.org/2005/Atom">
  <title type="text">Maps &amp; Charts</title>
  <entry id="1"><title>First</title></entry>
  <entry id="2"><title><![CDATA[Second <b>bold</b>]]></title></entry>
  <empty/>
</feed>`

const FIXTURES: Record<string, Fixture> = {
  '/json': { type: 'application/json', body: '{"title":"On Mapping","year":1998}' },
  '/upper': { type: 'Application/JSON; Charset=UTF-8', body: '{"ok":true}' },
  '/problem': { status: 404, type: 'application/problem+json', body: '{"title":"Not Found"}' },
  '/empty-json': { type: 'application/json', body: '' },
  '/bad-json': { type: 'application/json', body: '{"broken":' },
  '/text': { type: 'text/plain; charset=utf-8', body: 'plain words' },
  '/csv': { type: 'text/csv', body: 'a,b\n1,2' },
  '/latin1': { type: 'text/plain; charset=ISO-8859-1', body: Buffer.from([0x63, 0x61, 0x66, 0xe9]) },
  '/error': { status: 500, type: 'text/plain', body: 'upstream broke' },
  '/choices': { status: 300, type: 'text/plain', body: 'pick one' },
  '/none': { body: 'no type at all' },
  '/binary': { type: 'application/octet-stream', body: 'bytes' },
  '/garbage-type': { type: 'not a media type', body: 'odd' },
  '/xml': { type: 'application/xml', body: XML },
  '/text-xml': { type: 'text/xml', body: '<a><b>1</b><b>2</b></a>' },
  '/atom': { type: 'application/atom+xml; charset=utf-8', body: '<feed><id>x</id></feed>' },
  '/html': { type: 'text/html; charset=UTF-8', body: HTML },
  '/html-plain': { type: 'TEXT/HTML', body: '<p>no head</p><script type="application/ld+json">{not json</script>' },
}

async function fixtures(t: { teardown(fn: () => unknown): void }): Promise<Upstream> {
  return upstream(t, (req, res) => {
    const fixture = FIXTURES[req.url ?? '']
    if (fixture === undefined) {
      res.statusCode = 404
      res.end()
      return
    }
    res.statusCode = fixture.status ?? 200
    if (fixture.type !== undefined) res.setHeader('content-type', fixture.type)
    res.end(fixture.body)
  })
}

async function envelopes(origin: string, paths: string[]): Promise<Record<string, unknown>> {
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const mapping: Record<string, unknown> = {}
  for (const path of paths) mapping[path] = { request: { origin, pathname: path } }
  const result = await mapper.map({ mapping }, {})
  if (!result.valid) throw new Error(`unexpected errors: ${JSON.stringify(result.errors)}`)
  return result
}

t.test('JSON: application/json and any +json, matched case-insensitively', async (t) => {
  const up = await fixtures(t)
  const out = await envelopes(up.origin, ['/json', '/upper', '/problem', '/empty-json'])
  t.same(out.json, { status: 200, 'content-type': 'application/json', json: { title: 'On Mapping', year: 1998 } })
  t.same(out.upper, { status: 200, 'content-type': 'application/json', json: { ok: true } })
  t.same(out.problem, { status: 404, 'content-type': 'application/problem+json', json: { title: 'Not Found' } }, 'a 404 is data')
  t.same(out['empty-json'], { status: 200, 'content-type': 'application/json', json: null })
})

t.test('JSON that does not parse is an error naming the URL', async (t) => {
  const up = await fixtures(t)
  await t.rejects(envelopes(up.origin, ['/bad-json']), { name: 'SyntaxError', message: new RegExp(`^Invalid JSON in response from ${up.origin}/bad-json: `) })
})

t.test('text: text/*, and any missing or unknown type, decoded by charset', async (t) => {
  const up = await fixtures(t)
  const out = await envelopes(up.origin, ['/text', '/csv', '/latin1', '/error', '/choices', '/none', '/binary', '/garbage-type'])
  t.same(out.text, { status: 200, 'content-type': 'text/plain', text: 'plain words' })
  t.same(out.csv, { status: 200, 'content-type': 'text/csv', text: 'a,b\n1,2' })
  t.same(out.latin1, { status: 200, 'content-type': 'text/plain', text: 'café' })
  t.same(out.error, { status: 500, 'content-type': 'text/plain', text: 'upstream broke' }, 'a 500 is data')
  t.same(out.choices, { status: 300, 'content-type': 'text/plain', text: 'pick one' }, '300 is not a redirect status')
  t.same(out.none, { status: 200, 'content-type': null, text: 'no type at all' })
  t.same(out.binary, { status: 200, 'content-type': 'application/octet-stream', text: 'bytes' })
  t.same(out['garbage-type'], { status: 200, 'content-type': null, text: 'odd' })
})

t.test('XML: application/xml, text/xml and +xml give the raw xml and its json', async (t) => {
  const up = await fixtures(t)
  const out = await envelopes(up.origin, ['/xml', '/text-xml', '/atom'])
  t.same(out.xml, {
    status: 200,
    'content-type': 'application/xml',
    xml: XML,
    json: {
      feed: {
        '@_xmlns': 'http://www.w3.org/2005/Atom',
        title: { '@_type': 'text', '#text': 'Maps & Charts' },
        entry: [
          { '@_id': '1', title: 'First' },
          { '@_id': '2', title: 'Second <b>bold</b>' },
        ],
        empty: '',
      },
    },
  })
  t.same(out['text-xml'], { status: 200, 'content-type': 'text/xml', xml: '<a><b>1</b><b>2</b></a>', json: { a: { b: ['1', '2'] } } })
  t.same(out.atom, { status: 200, 'content-type': 'application/atom+xml', xml: '<feed><id>x</id></feed>', json: { feed: { id: 'x' } } })
})

t.test('XML element names cannot reach a prototype', async (t) => {
  const up = await upstream(t, (_req, res) => {
    res.setHeader('content-type', 'application/xml')
    res.end('<r><__proto__><polluted>yes</polluted></__proto__><constructor>c</constructor></r>')
  })
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const result = await mapper.map({ mapping: { '/e': { request: { origin: up.origin, pointer: '/json/r' } } } }, {})
  const envelope = result.e as Record<string, unknown>
  t.ok(Object.hasOwn(envelope, '__proto__'), '__proto__ is an own member')
  t.equal(Object.getPrototypeOf(envelope), Object.prototype)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  t.equal(envelope.constructor, 'c')
})

t.test('HTML: html, the first JSON-LD block, meta tags by name/property/itemprop', async (t) => {
  const up = await fixtures(t)
  const out = await envelopes(up.origin, ['/html', '/html-plain'])
  t.same(out.html, {
    status: 200,
    'content-type': 'text/html',
    html: HTML,
    ld: { '@type': 'Book', name: 'On Mapping' },
    meta: { description: ['A book'], 'og:title': ['On Mapping'], keywords: ['maps', 'charts'] },
  })
  t.same(Object.keys(out.html as object), ['status', 'content-type', 'html', 'ld', 'meta'], 'no data without a scraper')
  t.same(out['html-plain'], {
    status: 200,
    'content-type': 'text/html',
    html: '<p>no head</p><script type="application/ld+json">{not json</script>',
    ld: null,
    meta: {},
  })
})

t.test('the envelope is deterministic: two runs give identical whole-envelope writes', async (t) => {
  const up = await fixtures(t)
  const paths = ['/json', '/xml', '/html', '/text', '/none']
  const first = await envelopes(up.origin, paths)
  const second = await envelopes(up.origin, paths)
  t.equal(JSON.stringify(first), JSON.stringify(second))
  for (const path of paths) {
    t.notOk(JSON.stringify(first[path.slice(1)]).match(/cached|expires|date/i), `${path}: no time stamps`)
  }
})

t.test('the plugin leaves pointer to the engine: a direct call returns the whole envelope', async (t) => {
  const up = await fixtures(t)
  const request = createRequest()
  let direct: unknown
  const mapper = new Mapper({}, {
    plugins: {
      probe: async (_options: unknown, _value: unknown, context: EvaluationContext) => {
        direct = await request({ origin: up.origin, pathname: '/json', pointer: '/json/title' }, {}, context)
        return undefined
      },
      request,
    },
  })
  const result = await mapper.map({ mapping: { '/x': { probe: {} }, '/title': { request: { origin: up.origin, pathname: '/json', pointer: '/json/title' } } } }, {})
  t.same(direct, { status: 200, 'content-type': 'application/json', json: { title: 'On Mapping', year: 1998 } })
  t.equal(result.title, 'On Mapping', 'through the engine, pointer narrows the envelope')
})

// HTML depth (request-plugin.md §1 "Result", docs/request-plugin.md "Hardening"): what counts is
// the tree the parser builds, `<html>` and `<body>` included, not the tags the text opens.

/** Fetch one HTML body through the plugin: the envelope, or the error it was refused with. */
async function fetchHtml(t: { teardown(fn: () => unknown): void }, body: string): Promise<{ envelope?: Record<string, unknown>; error?: Error; url: string }> {
  const up = await upstream(t, (_req, res) => {
    res.setHeader('content-type', 'text/html')
    res.end(body)
  })
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  try {
    const result = await mapper.map({ mapping: { '/page': { request: { origin: up.origin, pathname: '/page' } } } }, {})
    return { envelope: result.page as Record<string, unknown>, url: `${up.origin}/page` }
  } catch (error) {
    return { error: error as Error, url: `${up.origin}/page` }
  }
}

const OVER = MAX_RESPONSE_DEPTH + 1
const HTML_DEPTHS: Array<[name: string, body: string, refused: boolean]> = [
  // <html> and <body> are two levels: 254 divs inside them make 256.
  [`${MAX_RESPONSE_DEPTH - 2} nested div (the limit, with html and body)`, '<div>'.repeat(MAX_RESPONSE_DEPTH - 2), false],
  [`${MAX_RESPONSE_DEPTH - 1} nested div`, '<div>'.repeat(MAX_RESPONSE_DEPTH - 1), true],
  ['32,000 nested div, closed (352 KB)', '<div>'.repeat(32_000) + '</div>'.repeat(32_000), true],
  ['unclosed formatting elements, each inside the last', '<b x=1>'.repeat(OVER), true],
  ['tables in cells', '<table><tr><td>'.repeat(OVER), true],
  ['templates', '<template>'.repeat(OVER), true],
  ['SVG groups', '<svg><g>'.repeat(OVER), true],
  ['misnested <a><div></a>, re-parented by the parser', '<a><div></a>'.repeat(OVER), true],
  // Tags the text opens that the parser does not nest.
  ['unclosed <p>, each closing the last', '<p>x'.repeat(5_000), false],
  ['unclosed <li>', '<ul>' + '<li>x'.repeat(5_000), false],
  ['void elements', '<br><img src=a><input>'.repeat(5_000), false],
  ['unclosed <option>', '<select>' + '<option>x'.repeat(5_000), false],
  ['stray closing tags', '</div></b></p>'.repeat(5_000), false],
  ['closed siblings', '<b>x</b>'.repeat(5_000), false],
  ['<div> as text inside <textarea> and <script>', `<textarea>${'<div>'.repeat(OVER)}</textarea><script>${'<div>'.repeat(OVER)}</script>`, false],
]

t.test(`HTML nested deeper than ${MAX_RESPONSE_DEPTH} levels in the parsed tree is refused; shallow trees from sloppy markup are not`, async (t) => {
  for (const [name, body, refused] of HTML_DEPTHS) {
    const { envelope, error, url } = await fetchHtml(t, body)
    if (refused) {
      t.match(error, { name: 'ResponseTooDeepError', code: 'E_RESPONSE_TOO_DEEP', format: 'HTML', maxDepth: MAX_RESPONSE_DEPTH, message: `HTML in the response from ${url} nests deeper than ${MAX_RESPONSE_DEPTH} levels` }, name)
    } else {
      t.equal(error, undefined, `${name}: parsed`)
      t.equal(envelope?.html, body, `${name}: the raw html is kept`)
    }
  }
})
