// The playground used the way a person would use it: a real listening server, Debian's Chromium
// driven by playwright-core. Type a mapping and an input, see the output; type an invalid mapping,
// see the rule and its pointer highlighted in the text; with auth on, see the 401 until a token is
// pasted. One browser per file, closed at teardown. Run by `npm run test:browser` (and .ci/run,
// which installs Chromium first), not by `npm test`: it needs a system package.
import { existsSync } from 'node:fs'
import Fastify from 'fastify'
import pino from 'pino'
import { chromium, type Browser, type Page } from 'playwright-core'
import t from 'tap'
import mapperService from '../../app.js'
import { buildServer } from '../../server.js'
import { SECRET, sign } from '../auth-support.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const WAIT_MS = 15_000

async function listening(t: Tap, options: Record<string, unknown>): Promise<string> {
  const app = await buildServer({ options, mappings: [], logger: pino({ level: 'silent' }) })
  t.teardown(() => app.close())
  return app.listen({ port: 0, host: '127.0.0.1' })
}

// ---- in a real browser -----------------------------------------------------------------------

if (!existsSync(CHROMIUM)) {
  t.fail(`Chromium is not installed at ${CHROMIUM}: the playground's browser tests need Debian's chromium package (apt-get install chromium; .ci/run installs it), or CHROMIUM_PATH`)
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
