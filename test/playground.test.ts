// The playground (options.playground): off by default (404), served as fixed static files under a
// self-only Content-Security-Policy when on, and used the way a person would use it — a real
// listening server, Debian's Chromium driven by playwright-core: type a mapping and an input, see
// the output; type an invalid mapping, see the rule and its pointer highlighted in the text; with
// auth on, see the 401 until a token is pasted. One browser per file, closed at teardown.
import { existsSync } from 'node:fs'
import { load } from 'cheerio'
import Fastify, { type FastifyInstance } from 'fastify'
import pino from 'pino'
import { chromium, type Browser, type Page } from 'playwright-core'
import t from 'tap'
import mapperService from '../app.js'
import { ConfigError, resolveConfig } from '../config/resolve.js'
import { PLAYGROUND_CSP } from '../routes/playground.js'
import { buildServer } from '../server.js'
import { SECRET, sign } from './auth-support.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const CHROMIUM = '/usr/bin/chromium'
const WAIT_MS = 15_000
const quiet = () => pino({ level: 'silent' })

async function service(t: Tap, options: Record<string, unknown>): Promise<FastifyInstance> {
  const app = await buildServer({ options, mappings: [], logger: quiet() })
  t.teardown(() => app.close())
  return app
}

async function listening(t: Tap, options: Record<string, unknown>): Promise<string> {
  const app = await service(t, options)
  return app.listen({ port: 0, host: '127.0.0.1' })
}

// ---- served files ----------------------------------------------------------------------------

t.test('options.playground: false by default, a boolean only', async (t) => {
  t.equal(resolveConfig({}).playground, false)
  t.equal(resolveConfig({ playground: true }).playground, true)
  t.throws(() => resolveConfig({ playground: 'yes' }), ConfigError)
})

t.test('off (the default): every playground path is an unknown route', async (t) => {
  const app = await service(t, { map: { explicit: true } })
  for (const url of ['/playground', '/playground/playground.js', '/playground/config.json', '/playground/yaml/index.js']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 404, url)
    t.same(response.json(), { code: 'NotFound', message: `No route for GET ${url}`, requestId: response.headers['x-request-id'] })
  }
})

t.test('on: the page, its files and the yaml browser build, each with its type and the strict headers', async (t) => {
  const app = await service(t, { map: { explicit: true }, playground: true })
  const files: Array<[string, RegExp]> = [
    ['/playground', /^text\/html; charset=utf-8$/],
    ['/playground/playground.js', /^text\/javascript; charset=utf-8$/],
    ['/playground/playground.css', /^text\/css; charset=utf-8$/],
    ['/playground/favicon.svg', /^image\/svg\+xml$/],
    ['/playground/config.json', /^application\/json; charset=utf-8$/],
    ['/playground/yaml/index.js', /^text\/javascript; charset=utf-8$/],
    ['/playground/yaml/parse/lexer.js', /^text\/javascript; charset=utf-8$/],
  ]
  for (const [url, type] of files) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 200, url)
    t.match(response.headers['content-type'], type, `${url} content type`)
    t.equal(response.headers['content-security-policy'], PLAYGROUND_CSP, `${url} CSP`)
    t.equal(response.headers['x-content-type-options'], 'nosniff')
    t.ok(response.body.length > 0)
    const head = await app.inject({ method: 'HEAD', url })
    t.equal(head.statusCode, 200, `HEAD ${url}`)
    t.equal(head.body, '')
  }
  t.match(PLAYGROUND_CSP, /default-src 'none'/)
  t.match(PLAYGROUND_CSP, /script-src 'self'(;|$)/)
  t.notMatch(PLAYGROUND_CSP, /unsafe-inline|unsafe-eval|\*/)

  const config = await app.inject({ method: 'GET', url: '/playground/config.json' })
  t.same(config.json(), { auth: false, explicit: true })

  // The page loads nothing from elsewhere and runs no inline script or style.
  const $ = load((await app.inject({ method: 'GET', url: '/playground' })).body)
  const scripts = $('script').toArray()
  t.ok(scripts.length > 0)
  for (const script of scripts) {
    t.equal($(script).attr('src'), 'playground/playground.js')
    t.equal($(script).text().trim(), '')
  }
  t.equal($('style').length, 0)
  t.equal($('[style]').length, 0)
  for (const element of $('[src], [href]').toArray()) {
    const target = $(element).attr('src') ?? $(element).attr('href') ?? ''
    t.match(target, /^playground\/[a-z]+\.[a-z]+$/, `${target} is one of the page's own files`)
  }
  // Every editor and pane has a label.
  for (const id of ['mapping', 'input', 'token', 'format']) t.equal($(`label[for="${id}"]`).length, 1, `label for #${id}`)
})

t.test('on: only GET and HEAD, only the files in the table', async (t) => {
  const app = await service(t, { playground: true })
  const post = await app.inject({ method: 'POST', url: '/playground', payload: {} })
  t.equal(post.statusCode, 405)
  t.equal(post.headers.allow, 'GET')
  for (const url of [
    '/playground/index.html',
    '/playground/yaml/../../package.json',
    '/playground/yaml/%2e%2e/%2e%2e/package.json',
    '/playground/yaml/..%2f..%2fpackage.json',
    '/playground/yaml/index.d.ts',
    '/playground/yaml/',
    '/playground/yaml/nothing.js',
    '/playground/../package.json',
  ]) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 404, url)
    t.equal(response.json().code, 'NotFound', url)
  }
})

t.test('on, with auth: the page is public, the API is not; hidden from the OpenAPI document', async (t) => {
  const app = await service(t, { auth: { secret: SECRET }, playground: true })
  for (const url of ['/playground', '/playground/playground.js', '/playground/config.json', '/playground/yaml/index.js']) {
    t.equal((await app.inject({ method: 'GET', url })).statusCode, 200, `${url} without a token`)
  }
  t.same((await app.inject({ method: 'GET', url: '/playground/config.json' })).json(), { auth: true, explicit: false })
  t.equal((await app.inject({ method: 'POST', url: '/validate', payload: { mapping: { mapping: {} } } })).statusCode, 401)
  const openapi = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> }
  t.same(Object.keys(openapi.paths).filter((path) => path.startsWith('/playground')), [])
})

// ---- in a real browser -----------------------------------------------------------------------

if (!existsSync(CHROMIUM)) {
  t.fail(`Chromium is not installed at ${CHROMIUM}: the playground's browser tests need Debian's chromium package (.ci/run installs it)`)
} else {
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Root in a container needs --no-sandbox; the rest keeps Chromium off the (closed) network.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  t.teardown(() => browser.close())
  browserTests(browser)
}

interface Visit {
  readonly page: Page
  /** Every URL the page requested. */
  readonly requests: string[]
  /** Uncaught page errors and Content-Security-Policy violations. */
  readonly problems: string[]
}

async function visit(t: Tap, browser: Browser, url: string): Promise<Visit> {
  const context = await browser.newContext()
  t.teardown(() => context.close())
  const page = await context.newPage()
  page.setDefaultTimeout(WAIT_MS)
  const requests: string[] = []
  const problems: string[] = []
  page.on('request', (request) => requests.push(request.url()))
  page.on('pageerror', (error) => problems.push(error.message))
  page.on('console', (message) => {
    if (/Content.Security.Policy/i.test(message.text())) problems.push(message.text())
  })
  await page.goto(url)
  await page.locator('body[data-ready="true"]').waitFor()
  return { page, requests, problems }
}

/** Waits until the element shows the text. */
const shows = (page: Page, selector: string, text: string | RegExp) => page.locator(selector, { hasText: text }).waitFor()

const textOf = async (page: Page, selector: string): Promise<string> => (await page.locator(selector).textContent()) ?? ''

/** The text selected in the mapping editor. */
const selectedMapping = (page: Page) =>
  page.evaluate<string>('(() => { const editor = document.getElementById("mapping"); return editor.value.slice(editor.selectionStart, editor.selectionEnd) })()')

function browserTests(browser: Browser): void {
  t.test('browser: type a mapping and an input, see the output; type an invalid one, see the rule and its pointer marked', async (t) => {
    const origin = await listening(t, { map: { explicit: true }, playground: true })
    const { page, requests, problems } = await visit(t, browser, `${origin}/playground`)

    // The example the page opens with is mapped straight away.
    await shows(page, '#output', '"Ada"')
    t.equal(await textOf(page, '#report-status'), 'Valid.')
    t.equal(await page.locator('#token-row').isVisible(), false, 'no token field without auth')

    await page.fill('#mapping', '{"mapping": {"/out": "/in"}}')
    await page.fill('#input', '{"in": {"marker": "first", "list": [1, 2]}}')
    await shows(page, '#output', '"first"')
    t.same(JSON.parse(await textOf(page, '#output')), { out: { marker: 'first', list: [1, 2] }, valid: true, errors: [] })
    t.equal(await textOf(page, '#detected'), 'read as JSON')

    // YAML, detected as such.
    await page.fill('#mapping', 'mapping:\n  /greeting: /in/marker\n')
    await shows(page, '#output', '"greeting"')
    t.same(JSON.parse(await textOf(page, '#output')), { greeting: 'first', valid: true, errors: [] })
    t.equal(await textOf(page, '#detected'), 'read as YAML')

    // An invalid mapping: the rule, the pointer, the message; the pointer is the active entry and
    // its member is marked in the text.
    await page.fill('#mapping', 'mapping:\n  /out:\n    source: /in\n    as: integer\n')
    await shows(page, '#report', 'KW-pipeline-1')
    t.equal(await textOf(page, '#report-status'), 'Invalid: 1 error.')
    const entry = page.locator('#report .entry.error')
    t.equal(await entry.count(), 1)
    t.equal(await textOf(page, '#report .entry.error .rule'), 'KW-pipeline-1')
    t.equal(await textOf(page, '#report .entry.error .pointer'), '/mapping/~1out/as')
    t.match(await textOf(page, '#report .entry.error .message'), /^as must be/)
    t.equal(await entry.getAttribute('aria-current'), 'true')
    t.equal(await textOf(page, '#mapping-backdrop mark'), 'as: integer')
    await shows(page, '#output-status', 'Not mapped: the mapping is invalid')
    // Clicking the pointer selects its member in the editor.
    await page.click('#report .entry.error .pointer')
    t.equal(await selectedMapping(page), 'as: integer')

    // The same in JSON: the marked member is the JSON text of the key and its value.
    await page.fill('#mapping', '{"mapping": {"/out": {"source": "/in", "as": "integer"}}}')
    await shows(page, '#mapping-backdrop mark', '"as": "integer"')
    t.equal(await textOf(page, '#mapping-backdrop mark'), '"as": "integer"')

    // A warning is listed with its rule and pointer too.
    await page.fill('#mapping', 'mapping:\n  /out:\n    source: /in\n    bogus: 1\n')
    await shows(page, '#report .entry.warning', 'KW-2')
    t.equal(await textOf(page, '#report .entry.warning .pointer'), '/mapping/~1out/bogus')
    t.equal(await textOf(page, '#mapping-backdrop mark'), 'bogus: 1')
    t.equal(await textOf(page, '#report-status'), 'Valid, with 1 warning.')

    // Text that does not parse is reported by the page itself, its position marked.
    await page.fill('#mapping', 'mapping:\n  /out: [unclosed\n')
    await shows(page, '#report', 'YAML syntax')
    t.equal(await textOf(page, '#report-status'), 'The mapping text does not parse.')

    // With "map as I type" off, the Map button maps.
    await page.fill('#mapping', '{"mapping": {"/copy": "/in/marker"}}')
    await shows(page, '#output', '"copy"')
    await page.uncheck('#auto')
    await page.fill('#input', '{"in": {"marker": "second"}}')
    await page.click('#run')
    await shows(page, '#output', '"second"')
    t.same(JSON.parse(await textOf(page, '#output')), { copy: 'second', valid: true, errors: [] })
    // And so does Ctrl+Enter, from the input editor.
    await page.fill('#input', '{"in": {"marker": "third"}}')
    await page.press('#input', 'Control+Enter')
    await shows(page, '#output', '"third"')
    t.same(JSON.parse(await textOf(page, '#output')), { copy: 'third', valid: true, errors: [] })

    t.same(problems, [], 'no page error, no CSP violation')
    t.same(requests.filter((url) => !url.startsWith(`${origin}/`)), [], 'every request went to this server')
    t.ok(requests.includes(`${origin}/playground/yaml/index.js`), 'YAML is parsed by the served yaml build')
  })

  t.test('browser: explicit documents off — the page says so and still validates', async (t) => {
    const origin = await listening(t, { playground: true })
    const { page, problems } = await visit(t, browser, `${origin}/playground`)
    t.match(await textOf(page, '#notice'), /validates only/)
    t.equal(await page.locator('#run').isDisabled(), true)
    await page.fill('#mapping', 'mapping:\n  /out:\n    as: integer\n')
    await shows(page, '#report', 'KW-pipeline-1')
    t.equal(await textOf(page, '#report .entry.error .pointer'), '/mapping/~1out/as')
    t.equal(await textOf(page, '#output'), '')
    t.same(problems, [])
  })

  t.test('browser: auth on — 401 shown until a valid token is pasted, then validate and map work', async (t) => {
    const origin = await listening(t, { auth: { secret: SECRET }, map: { explicit: true }, playground: true })
    const { page, problems } = await visit(t, browser, `${origin}/playground`)
    t.equal(await page.locator('#token').isVisible(), true)
    await shows(page, '#report-status', '401 Unauthorized: Missing bearer token')

    await page.fill('#token', sign({ sub: 'someone' }, { key: 'another-secret-of-32-characters!!' }))
    await shows(page, '#report-status', '401 Unauthorized: Invalid token signature')

    await page.fill('#mapping', '{"mapping": {"/who": "/in"}}')
    await page.fill('#input', '{"in": "authorized"}')
    await page.fill('#token', sign({ sub: 'someone' }, { key: SECRET }))
    await shows(page, '#output', '"authorized"')
    t.same(JSON.parse(await textOf(page, '#output')), { who: 'authorized', valid: true, errors: [] })
    t.equal(await textOf(page, '#report-status'), 'Valid.')
    t.same(problems, [])
  })

  t.test('browser: under a prefix, in a host app, the page calls the prefixed endpoints', async (t) => {
    const host = Fastify({ logger: false })
    t.teardown(() => host.close())
    await host.register(mapperService, { prefix: '/mapper', mappings: [], options: { map: { explicit: true }, playground: true } })
    const origin = await host.listen({ port: 0, host: '127.0.0.1' })
    const { page, requests, problems } = await visit(t, browser, `${origin}/mapper/playground`)
    await shows(page, '#output', '"Ada"')
    t.ok(requests.includes(`${origin}/mapper/validate`))
    t.ok(requests.includes(`${origin}/mapper/map`))
    t.same(problems, [])
  })
}
