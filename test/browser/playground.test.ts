// The playground used the way a person would use it: a real listening server (explicit documents,
// explain traces, registered mappings with examples), Debian's Chromium driven by playwright-core.
// Type, wait, and assert on what shows: highlighted tokens, a squiggle on the line of each error
// with its rule on hover, completion and hover docs from the language's schema, the explain trace
// and the marks a chosen pairing puts in the mapping and the output, a registered mapping's
// examples and the differences of a failing one, a share link that restores the page elsewhere,
// the auth token flow, keyboard use. Every visit also checks that the page raised no error, that
// the Content-Security-Policy refused nothing, and that no request left the service's origin.
// Screenshots of each state, at 1280 x 800 and at a narrow width, go to .tap/screenshots/ (not
// in git). One browser per file, closed at teardown. Run by `npm run test:browser` (and .ci/run,
// which installs Chromium first), not by `npm test`: it needs a system package.
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import Fastify from 'fastify'
import pino from 'pino'
import { chromium, type Browser, type Locator, type Page } from 'playwright-core'
import t from 'tap'
import mapperService from '../../app.js'
import type { Extensions } from '../../engine/index.js'
import { buildServer } from '../../server.js'
import { SECRET, sign } from '../auth-support.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const WAIT_MS = 15_000
const SCREENSHOTS = join(import.meta.dirname, '..', '..', '.tap', 'screenshots')
const WIDE = { width: 1280, height: 800 }
const NARROW = { width: 420, height: 860 }

/** Registered mappings whose examples pass (the service refuses to start otherwise). */
const MAPPINGS = [
  {
    $id: 'citation',
    description: 'A record reshaped into a citation.',
    mapping: {
      '/title': '/title',
      '/year': { source: '/issued', as: 'number' },
      '/kind': { constant: 'article' },
    },
    examples: [
      { description: 'a record with a year', input: { title: 'On Mappings', issued: '1999' }, output: { title: 'On Mappings', year: 1999, kind: 'article' } },
      { description: 'no year', input: { title: 'Untitled' }, output: { title: 'Untitled', kind: 'article' } },
    ],
  },
  { $id: 'greet', mapping: { '/text': '/message' }, examples: [{ input: { message: 'hello' }, output: { text: 'hello' } }] },
]

async function listening(t: Tap, options: Record<string, unknown>, mappings: unknown[] = [], extensions?: Extensions): Promise<string> {
  const app = await buildServer({ options, mappings: mappings as never, ...(extensions === undefined ? {} : { extensions }), logger: pino({ level: 'silent' }) })
  t.teardown(() => app.close())
  return app.listen({ port: 0, host: '127.0.0.1' })
}

const WORKBENCH = { map: { explicit: true, explain: true }, playground: true }

// ---- in a real browser -----------------------------------------------------------------------

if (!existsSync(CHROMIUM)) {
  t.fail(`Chromium is not installed at ${CHROMIUM}: the playground's browser tests need Debian's chromium package (apt-get install chromium; .ci/run installs it), or CHROMIUM_PATH`)
} else {
  mkdirSync(SCREENSHOTS, { recursive: true })
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

async function visit(t: Tap, browser: Browser, url: string, viewport = WIDE): Promise<Visit> {
  const context = await browser.newContext({ viewport })
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
  // Chromium reports a refused style or script as an event too; the page itself never listens for it.
  // (Page functions are strings here: this file is type-checked without the DOM's types.)
  await page.addInitScript("document.addEventListener('securitypolicyviolation', (event) => console.error('Content-Security-Policy refused ' + event.violatedDirective + ' from ' + event.sourceFile + ':' + event.lineNumber))")
  await page.goto(url)
  await page.locator('body[data-ready="true"]').waitFor()
  return { page, requests, problems }
}

/** What a visit must not have done: fail, be refused by the CSP, or ask anything of another origin. */
function clean(t: Tap, { requests, problems }: Visit, origin: string): void {
  t.same(problems, [], 'no page error, no CSP violation')
  t.same(requests.filter((url) => !url.startsWith(`${origin}/`)), [], 'every request went to the service that served the page')
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: page.viewportSize()!.width < 800 })
}

/** Waits until the element shows the text. */
const shows = (page: Page, selector: string, text: string | RegExp) => page.locator(selector, { hasText: text }).first().waitFor()

const textOf = async (page: Page, selector: string): Promise<string> => (await page.locator(selector).textContent()) ?? ''

/** An editor's content (CodeMirror, in its panel): what a person types into. */
const editor = (page: Page, panel: 'mapping' | 'input' | 'output'): Locator => page.locator(`[data-panel="${panel}"] .cm-content`)

/** The text an editor shows, line by line. */
const editorText = async (page: Page, panel: 'mapping' | 'input' | 'output'): Promise<string> =>
  (await page.locator(`[data-panel="${panel}"] .cm-line`).allTextContents()).join('\n')

/** The text selected in the mapping editor (which lives in a shadow root). */
const selectedMapping = (page: Page) => page.evaluate<string>('document.querySelector("#mapping").shadowRoot.getSelection()?.toString() ?? ""')

/** Replaces an editor's text, as a paste over a selection of everything would. */
async function paste(page: Page, panel: 'mapping' | 'input', text: string): Promise<void> {
  await editor(page, panel).click()
  await page.keyboard.press('Control+a')
  await page.keyboard.insertText(text)
}

/** The output envelope, once it shows `text`. */
async function output(page: Page, text: string): Promise<unknown> {
  await shows(page, '[data-panel="output"] .cm-content', text)
  return JSON.parse(await editorText(page, 'output'))
}

/**
 * Accepts the selected completion. CodeMirror ignores an Enter that comes within 75 ms of the list
 * changing (a person's does not come that fast; a script's does): wait as a person would.
 */
async function accept(page: Page): Promise<void> {
  await page.waitForTimeout(200)
  await page.keyboard.press('Enter')
}

/** The 1-based numbers of the mapping editor's lines that carry an error squiggle. */
async function squiggledLines(page: Page, severity = 'error'): Promise<number[]> {
  const lines = page.locator('[data-panel="mapping"] .cm-line')
  const found: number[] = []
  for (let i = 0; i < await lines.count(); i++) {
    if (await lines.nth(i).locator(`.cm-lintRange-${severity}`).count() > 0) found.push(i + 1)
  }
  return found
}

function browserTests(browser: Browser): void {
  t.test('browser: highlighting, a squiggle on the line of each error with its rule on hover, syntax errors placed, the diagnostics list', async (t) => {
    const origin = await listening(t, WORKBENCH, MAPPINGS)
    const visited = await visit(t, browser, `${origin}/playground`)
    const { page } = visited

    // The example the page opens with is mapped straight away.
    t.same(await output(page, '"Ada"'), { person: { name: 'Ada', born: 1815 }, valid: true, errors: [] })
    t.equal(await textOf(page, '#report-status'), 'Valid.')
    t.equal(await page.locator('#token-row').isVisible(), false, 'no token field without auth')
    // Highlighted: keys and strings are token spans of their own.
    t.ok(await page.locator('[data-panel="mapping"] .cm-line .tok-propertyName', { hasText: 'mapping' }).count() >= 1, 'YAML keys highlighted')
    t.ok(await page.locator('[data-panel="input"] .cm-line .tok-string', { hasText: '"Ada"' }).count() >= 1, 'JSON strings highlighted')
    t.ok(await page.locator('[data-panel="output"] .cm-line .tok-number', { hasText: '1815' }).count() >= 1, 'the output highlighted')
    t.equal(await textOf(page, '#detected'), 'read as YAML')
    await shot(page, 'wide-1-start')

    // Two errors on two lines: a squiggle on each of those lines, no other.
    await paste(page, 'mapping', 'mapping:\n  /a: { source: /x, as: integer }\n  /b: { source: /y, type: strin }\n  /c: /z\n')
    await shows(page, '#report-status', 'Invalid: 2 errors.')
    await page.locator('[data-panel="mapping"] .cm-lintRange-error').nth(1).waitFor()
    t.same(await squiggledLines(page), [2, 3])
    t.equal(await textOf(page, '[data-panel="mapping"] .cm-line:nth-child(2) .cm-lintRange-error'), 'as: integer', 'the member the pointer names')
    t.equal(await textOf(page, '[data-panel="mapping"] .cm-line:nth-child(3) .cm-lintRange-error'), 'type: strin')
    // The list: rule, line:column and pointer, message; in document order.
    const entries = page.locator('#report .entry.error')
    t.equal(await entries.count(), 2)
    t.same(await page.locator('#report .entry .rule').allTextContents(), ['KW-pipeline-1', 'KW-validate-1'])
    t.same(await page.locator('#report .entry .pointer').allTextContents(), ['2:25 /mapping/~1a/as', '3:27 /mapping/~1b/type'])
    t.match(await textOf(page, '#report .entry:nth-child(1) .message'), /^as must be/)
    await shows(page, '#output-status', 'Not mapped: the mapping is invalid')
    // Hovering a squiggle shows the message and the rule.
    await page.locator('[data-panel="mapping"] .cm-lintRange-error', { hasText: 'type: strin' }).hover()
    await shows(page, '[data-panel="mapping"] .cm-tooltip-lint', 'KW-validate-1')
    t.match(await textOf(page, '[data-panel="mapping"] .cm-tooltip-lint'), /type must be one of array/)
    await shot(page, 'wide-2-two-errors')
    // Choosing an entry selects its member in the editor.
    await page.click('#report .entry:nth-child(2) .pointer')
    t.equal(await page.locator('#report .entry:nth-child(2)').getAttribute('aria-current'), 'true')
    t.equal(await selectedMapping(page), 'type: strin', 'the member is selected')
    await page.mouse.move(0, 0)

    // The same in JSON: each squiggle on its own line.
    await paste(page, 'mapping', '{\n  "mapping": {\n    "/a": { "source": "/x", "as": "integer" },\n    "/b": "/y",\n    "/c": { "sourc": "/z" }\n  }\n}\n')
    await shows(page, '#report-status', 'Invalid: 1 error, 1 warning.')
    await page.locator('[data-panel="mapping"] .cm-lintRange-warning').waitFor()
    t.same(await squiggledLines(page), [3])
    t.same(await squiggledLines(page, 'warning'), [5])
    t.equal(await textOf(page, '[data-panel="mapping"] .cm-lintRange-error'), '"as": "integer"')
    t.equal(await textOf(page, '#detected'), 'read as JSON')
    t.match(await textOf(page, '#report .entry.warning .message'), /did you mean source\?/)

    // Text that does not parse: placed where the parser stopped, in either editor.
    await paste(page, 'mapping', 'mapping:\n  /out: /in\n  /list: [unclosed\n')
    await shows(page, '#report', 'YAML syntax')
    t.equal(await textOf(page, '#report-status'), 'The mapping text does not parse.')
    await page.locator('[data-panel="mapping"] .cm-lintRange-error, [data-panel="mapping"] .cm-lintPoint-error').first().waitFor({ state: 'attached' })
    t.match(await textOf(page, '#report .entry .pointer'), /^\d+:\d+$/, 'its line and column')
    await paste(page, 'mapping', '{"mapping": {"/out": "/in"}}')
    await paste(page, 'input', '{\n  "in": 1,\n  "oops": \n}\n')
    await shows(page, '#report', 'JSON syntax')
    await page.locator('[data-panel="input"] .cm-lintRange-error').waitFor()
    t.match(await textOf(page, '#input-status'), /unexpected "}" \(line 4, column 1\)/)
    t.equal(await page.locator('[data-panel="input"] .cm-line:nth-child(4) .cm-lintRange-error').count(), 1, 'on the line where it stops being JSON')
    await paste(page, 'input', 'in: {marker: yaml}\n')
    t.same(await output(page, '"yaml"'), { out: { marker: 'yaml' }, valid: true, errors: [] }, 'a YAML input is read as YAML')

    // Narrow: one column, every panel in reading order.
    await page.setViewportSize(NARROW)
    await paste(page, 'mapping', 'mapping:\n  /a: { source: /x, as: integer }\n  /b: { source: /y, type: strin }\n')
    await shows(page, '#report-status', 'Invalid: 2 errors.')
    await shot(page, 'narrow-1-two-errors')
    const boxes = await Promise.all(['mapping', 'input', 'output', 'report', 'explain', 'examples'].map((panel) => page.locator(`[data-panel="${panel}"]`).boundingBox()))
    for (let i = 1; i < boxes.length; i++) t.ok(boxes[i]!.y > boxes[i - 1]!.y, `panel ${i + 1} below panel ${i}`)
    for (const box of boxes) t.ok(box!.x >= 0 && box!.x + box!.width <= NARROW.width + 1, 'within the window')
    clean(t, visited, origin)
  })

  t.test('browser: completion and hover docs from the schema, the extensions and the registered mappings', async (t) => {
    // Extensions given as functions run inline (isolation would need them from a module).
    const extensions: Extensions = { transformers: { upper: (value) => String(value).toUpperCase() }, initializers: { today: () => '2024-01-01' }, plugins: { reqid: () => 'r-1' } }
    const origin = await listening(t, { ...WORKBENCH, isolation: false }, MAPPINGS, extensions)
    const visited = await visit(t, browser, `${origin}/playground`)
    const { page } = visited
    await output(page, '"Ada"')

    // Typing `sou` where a descriptor's keys go offers `source`, with its one-line description.
    await paste(page, 'mapping', 'mapping:\n  /out:\n    ')
    await page.keyboard.type('sou')
    const options = page.locator('[data-panel="mapping"] .cm-tooltip-autocomplete li')
    await shows(page, '[data-panel="mapping"] .cm-tooltip-autocomplete', 'source')
    t.equal(await options.first().locator('.cm-completionLabel').textContent(), 'source', 'the best match first')
    t.match(await options.first().textContent(), /Read from the current source at this JSON Pointer/, 'with its one-line description')
    await shot(page, 'wide-3-completion')
    await accept(page)
    await page.keyboard.type('/name')
    t.equal(await editorText(page, 'mapping'), 'mapping:\n  /out:\n    source: /name')

    // An enum's values after `as:`.
    await page.keyboard.press('Enter')
    await page.keyboard.type('as: ')
    await page.keyboard.press('Control+Space')
    await shows(page, '[data-panel="mapping"] .cm-tooltip-autocomplete', 'boolean')
    t.same((await page.locator('[data-panel="mapping"] .cm-tooltip-autocomplete .cm-completionLabel').allTextContents()).sort(), ['boolean', 'json', 'number', 'string'])
    await page.keyboard.type('nu')
    await page.locator('[data-panel="mapping"] .cm-tooltip-autocomplete li[aria-selected="true"]', { hasText: 'number' }).waitFor()
    await accept(page)
    t.equal(await editorText(page, 'mapping'), 'mapping:\n  /out:\n    source: /name\n    as: number')
    await paste(page, 'input', '{"name": "42"}')
    t.same(await output(page, '42'), { out: 42, valid: true, errors: [] })

    // The deployment's names: registered mappings after $ref, plugins beside the keywords.
    await paste(page, 'mapping', 'mapping:\n  /out:\n    $ref: ')
    await page.keyboard.type('ci')
    await shows(page, '[data-panel="mapping"] .cm-tooltip-autocomplete', 'citation')
    t.same(await page.locator('[data-panel="mapping"] .cm-tooltip-autocomplete .cm-completionLabel').allTextContents(), ['citation'])
    await page.keyboard.press('Escape')
    await paste(page, 'mapping', 'mapping:\n  /out:\n    source: /a\n    ')
    await page.keyboard.type('req')
    await shows(page, '[data-panel="mapping"] .cm-tooltip-autocomplete', 'reqid')
    t.same((await page.locator('[data-panel="mapping"] .cm-tooltip-autocomplete .cm-completionLabel').allTextContents()).sort(), ['reqid', 'required'], 'the keyword and the registered plugin')
    await page.keyboard.press('Escape')
    // Transformer names after `transform`, initializer names after `init`.
    await paste(page, 'mapping', 'mapping:\n  /out:\n    source: /a\n    transform: [')
    await page.keyboard.type('up')
    await shows(page, '[data-panel="mapping"] .cm-tooltip-autocomplete', 'upper')
    t.same(await page.locator('[data-panel="mapping"] .cm-tooltip-autocomplete .cm-completionLabel').allTextContents(), ['upper'])
    t.match(await textOf(page, '[data-panel="mapping"] .cm-tooltip-autocomplete'), /transformer/)
    await page.keyboard.press('Escape')
    await paste(page, 'mapping', 'mapping:\n  /out:\n    init: ')
    await page.keyboard.type('to')
    await shows(page, '[data-panel="mapping"] .cm-tooltip-autocomplete', 'today')
    await accept(page)
    await paste(page, 'input', '{}')
    t.same(await output(page, '2024-01-01'), { out: '2024-01-01', valid: true, errors: [] })

    // In JSON, inside the quotes of a key.
    await paste(page, 'mapping', '{"mapping": {"/out": {"')
    await page.keyboard.type('sou')
    await shows(page, '[data-panel="mapping"] .cm-tooltip-autocomplete', 'source')
    await accept(page)
    t.match(await editorText(page, 'mapping'), /^\{"mapping": \{"\/out": \{"source/)
    await page.keyboard.press('Escape')

    // Hovering a keyword shows its description (and its values, for an enum).
    await paste(page, 'mapping', 'mapping:\n  /out:\n    source: /a\n    as: string\n')
    await page.locator('[data-panel="mapping"] .cm-line', { hasText: 'as: string' }).locator('.tok-propertyName').hover()
    await shows(page, '[data-panel="mapping"] .cm-keyword-doc', 'Coerce the value')
    t.match(await textOf(page, '[data-panel="mapping"] .cm-keyword-doc'), /One of: string, number, boolean, json/)
    await shot(page, 'wide-4-hover-doc')
    clean(t, visited, origin)
  })

  t.test('browser: the explain panel lists the pairings; choosing one marks it in the mapping and its value in the output', async (t) => {
    const origin = await listening(t, WORKBENCH, MAPPINGS)
    const visited = await visit(t, browser, `${origin}/playground`)
    const { page } = visited
    await output(page, '"Ada"')
    await paste(page, 'input', '{"name": "Ada", "born": "1815", "books": [{"t": "Notes"}, {"t": "Letters"}]}')
    await paste(page, 'mapping', 'mapping:\n  /who: /name\n  /year:\n    source: /born\n    as: number\n  /titles:\n    source: /books\n    each:\n      /title: /t\n')
    t.same(await output(page, '"Letters"'), { who: 'Ada', year: 1815, titles: [{ title: 'Notes' }, { title: 'Letters' }], valid: true, errors: [] })
    await shows(page, '#explain-status', '5 pairing runs')
    t.same(await page.locator('#explain .pairing .target').allTextContents(), ['/who', '/year', '/titles', '/title', '/title'])
    t.same(await page.locator('#explain > li > .stages .stage').nth(0).locator('code').allTextContents(), ['source', '"Ada"'])
    t.match(await textOf(page, '#explain > li:nth-child(2)'), /finalize\s*as\s*1815/, 'each step and its value')

    // /year: its pairing in the mapping, its value in the output.
    await page.locator('#explain .pairing', { hasText: '/year' }).click()
    t.same((await page.locator('[data-panel="mapping"] .cm-chosen').allTextContents()).map((text) => text.trim()), ['/year:', 'source: /born', 'as: number'], 'the pairing, key through value (three lines)')
    t.equal(await textOf(page, '[data-panel="output"] .cm-chosen'), '"year": 1815')
    await shot(page, 'wide-5-explain')
    // A nested run of `each`: element 1 of /titles.
    await page.locator('#explain .pairing', { hasText: 'element 1' }).click()
    t.equal(await textOf(page, '[data-panel="mapping"] .cm-chosen'), '/title: /t')
    t.equal(await textOf(page, '[data-panel="output"] .cm-chosen'), '"title": "Letters"')
    t.match(await textOf(page, '#explain-status'), /^\/titles\/1\/title/)
    // By keyboard: the entries are buttons.
    await page.locator('#explain .pairing', { hasText: '/who' }).focus()
    await page.keyboard.press('Enter')
    t.equal(await textOf(page, '[data-panel="output"] .cm-chosen'), '"who": "Ada"')
    // Tracing off: no trace asked for.
    await page.uncheck('#explain-on')
    await shows(page, '#explain-status', 'Tracing is off.')
    t.equal(await page.locator('#explain .pairing').count(), 0)
    await page.setViewportSize(NARROW)
    await page.check('#explain-on')
    await shows(page, '#explain-status', 'pairing runs')
    await shot(page, 'narrow-2-explain')
    clean(t, visited, origin)
  })

  t.test('browser: a registered mapping read-only, its examples run; copied to edit, a changed value marked in the diff', async (t) => {
    const origin = await listening(t, WORKBENCH, MAPPINGS)
    const visited = await visit(t, browser, `${origin}/playground`)
    const { page } = visited
    await output(page, '"Ada"')
    t.same(await page.locator('#source option').allTextContents(), ['your document', 'citation', 'greet'])

    await page.selectOption('#source', 'citation')
    await shows(page, '#registered-row', 'citation')
    await shows(page, '[data-panel="mapping"] .cm-content', '/year')
    t.equal(await editorText(page, 'mapping'), [
      '$id: citation', 'description: A record reshaped into a citation.', 'mapping:', '  /title: /title', '  /year:', '    source: /issued', '    as: number', '  /kind:', '    constant: article', 'examples:',
      '  - description: a record with a year', '    input:', '      title: On Mappings', '      issued: "1999"', '    output:', '      title: On Mappings', '      year: 1999', '      kind: article',
      '  - description: no year', '    input:', '      title: Untitled', '    output:', '      title: Untitled', '      kind: article', '',
    ].join('\n'), 'the registered document as YAML, in its written order')
    // Read-only: typing changes nothing.
    await editor(page, 'mapping').click()
    await page.keyboard.type('xyz')
    t.notMatch(await editorText(page, 'mapping'), /xyz/)
    // Its examples: listed, run, passing, expected beside actual.
    t.same(await page.locator('#examples .example-name').allTextContents(), ['/examples/0 a record with a year', '/examples/1 no year'])
    await page.click('#run-examples')
    await shows(page, '#examples-status', '2 of 2 examples run: 2 passed, 0 failed.')
    t.same(await page.locator('#examples .verdict').allTextContents(), ['pass', 'pass'])
    await shows(page, '#example-detail', '/examples/0: passes')
    t.equal(await page.locator('#example-detail .json-line.differs').count(), 0)
    // Mapped as registered ({ mapping: "citation" }), explained too.
    await paste(page, 'input', '{"title": "T", "issued": "2001"}')
    t.same(await output(page, '2001'), { title: 'T', year: 2001, kind: 'article', valid: true, errors: [] })
    await shows(page, '#explain-status', '3 pairing runs')
    await page.locator('#explain .pairing', { hasText: '/year' }).click()
    t.same((await page.locator('[data-panel="mapping"] .cm-chosen').allTextContents()).map((text) => text.trim()), ['/year:', 'source: /issued', 'as: number'], 'a registered pairing marked in the read-only view')
    await shot(page, 'wide-6-registered')

    // Copy to edit: your document now; change how /year is written; its example fails at /year.
    await page.click('#copy-to-edit')
    t.equal(await page.locator('#source').inputValue(), '')
    t.equal(await page.locator('#registered-row').isVisible(), false)
    await page.locator('[data-panel="mapping"] .cm-line', { hasText: 'as: number' }).click()
    await page.keyboard.press('End')
    for (let i = 0; i < 'number'.length; i++) await page.keyboard.press('Backspace')
    await page.keyboard.type('string')
    await shows(page, '[data-panel="mapping"] .cm-content', 'as: string')
    await page.click('#examples .example-name >> nth=0')
    await shows(page, '#example-detail', '/examples/0: fails')
    t.same(await page.locator('#example-detail .differences li').allTextContents(), ['/year: expected 1999, got "1999"'])
    t.same(await page.locator('#example-detail figure:nth-child(1) .json-line.differs').allTextContents(), ['≠  "year": 1999,'], 'the expected value marked')
    t.same(await page.locator('#example-detail figure:nth-child(2) .json-line.differs').allTextContents(), ['≠  "year": "1999",'], 'the changed value marked')
    t.same(await page.locator('#examples .verdict').allTextContents(), ['fails: 1 difference', 'not run'])
    // The service's own verdict agrees: EXAMPLE-1 in the diagnostics, placed on the example.
    await shows(page, '#report .entry .rule', 'EXAMPLE-1')
    await shot(page, 'wide-7-example-diff')
    await page.setViewportSize(NARROW)
    await page.locator('#example-detail').scrollIntoViewIfNeeded()
    await shot(page, 'narrow-3-example-diff')
    // "Use input" puts an example's input in the input editor.
    await page.setViewportSize(WIDE)
    await page.click('#examples .example:nth-child(2) .use-input')
    t.same(JSON.parse(await editorText(page, 'input')), { title: 'Untitled' })
    // Ctrl+Z takes the copy back: your document before it.
    await editor(page, 'mapping').click()
    for (let i = 0; i < 8; i++) await page.keyboard.press('Control+z')
    await shows(page, '[data-panel="mapping"] .cm-content', '/person/born')
    clean(t, visited, origin)
  })

  t.test('browser: a share link restores the same state in a new page; the session is kept; copy as curl; YAML <-> JSON', async (t) => {
    const origin = await listening(t, WORKBENCH, MAPPINGS)
    const visited = await visit(t, browser, `${origin}/playground`)
    const { page } = visited
    await output(page, '"Ada"')
    const mapping = 'mapping:\n  /z/last: /b\n  /a/first: /a\n  /m: { constant: "shared ✓" }\n'
    await paste(page, 'mapping', mapping)
    await page.selectOption('#input-format', 'yaml')
    await paste(page, 'input', 'a: 1\nb: [2, 3]\n')
    t.same(await output(page, 'shared'), { z: { last: [2, 3] }, a: { first: 1 }, m: 'shared ✓', valid: true, errors: [] })

    await page.click('#share')
    await shows(page, '#copy-label', 'Link to this state')
    const link = await page.locator('#copy-text').inputValue()
    t.match(link, new RegExp(`^${origin}/playground#s=[A-Za-z0-9_-]+$`), 'the state is in the fragment, compressed')
    t.notMatch(link, /last|shared/, 'not as plain text')
    await shot(page, 'wide-8-share')

    // A new browser context (no localStorage of this one) opens the link: the same page.
    const other = await visit(t, browser, link)
    t.same(await output(other.page, 'shared'), { z: { last: [2, 3] }, a: { first: 1 }, m: 'shared ✓', valid: true, errors: [] })
    t.equal(await editorText(other.page, 'mapping'), mapping)
    t.equal(await editorText(other.page, 'input'), 'a: 1\nb: [2, 3]\n')
    t.equal(await other.page.locator('#input-format').inputValue(), 'yaml')
    t.equal(await other.page.locator('#format').inputValue(), 'auto')
    t.notOk(other.requests.some((url) => url.includes('#') || url.includes('s=')), 'the fragment never reached the server')
    clean(t, other, origin)

    // The last session is kept: the page without a fragment, in the same browser, restores it.
    await page.goto(`${origin}/playground`)
    await page.locator('body[data-ready="true"]').waitFor()
    await output(page, 'shared')
    t.equal(await editorText(page, 'mapping'), mapping)

    // Copy as curl: the request the page makes, runnable as it is.
    await page.click('#curl')
    await shows(page, '#copy-label', 'curl for this POST /map')
    const curl = await page.locator('#copy-text').inputValue()
    t.match(curl, new RegExp(`^curl -sS '${origin}/map' -H 'content-type: application/json' --data-binary '`))
    if (await commandExists('curl')) {
      const { stdout } = await promisify(execFile)('bash', ['-c', curl])
      const answer = JSON.parse(stdout)
      t.same({ ...answer, explain: undefined }, { z: { last: [2, 3] }, a: { first: 1 }, m: 'shared ✓', valid: true, errors: [], explain: undefined }, 'the command answers what the page shows')
      t.equal(answer.explain.pairings.length, 3, 'with its trace, as the page asked for it')
    } else {
      t.comment('curl is not installed: the command was not run')
    }

    // YAML to JSON and back, keys in their written order (pairings run in that order).
    await page.click('#convert')
    await shows(page, '[data-panel="mapping"] .cm-content', '"/z/last"')
    t.equal(await editorText(page, 'mapping'), '{\n  "mapping": {\n    "/z/last": "/b",\n    "/a/first": "/a",\n    "/m": {\n      "constant": "shared ✓"\n    }\n  }\n}\n')
    await shows(page, '#detected', 'read as JSON')
    t.equal(await textOf(page, '#convert'), 'To YAML')
    await page.click('#convert')
    await shows(page, '#detected', 'read as YAML')
    t.equal(await editorText(page, 'mapping'), 'mapping:\n  /z/last: /b\n  /a/first: /a\n  /m:\n    constant: shared ✓\n')
    clean(t, visited, origin)
  })

  t.test('browser: keyboard only — Tab reaches the editor, Escape then Tab leaves it, Ctrl+Enter maps, the diagnostics are buttons', async (t) => {
    const origin = await listening(t, WORKBENCH, MAPPINGS)
    const visited = await visit(t, browser, `${origin}/playground`)
    const { page } = visited
    await output(page, '"Ada"')
    await page.uncheck('#auto')
    // From the first control of the page (where Tab from the address bar lands).
    await page.focus('#share')
    // Tab from the top of the page until the mapping editor has the focus.
    const focused = () => page.evaluate<string>(`(() => {
      let active = document.activeElement
      while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement
      if (active?.classList.contains('cm-content')) return active.getRootNode().host.closest('[data-panel]').getAttribute('data-panel') + ' editor'
      return active?.id ?? ''
    })()`)
    let presses = 0
    while ((await focused()) !== 'mapping editor' && presses < 20) {
      await page.keyboard.press('Tab')
      presses++
    }
    t.equal(await focused(), 'mapping editor', `reached in ${presses} presses of Tab`)
    t.equal(presses, 5, 'after the header\'s two buttons and the mapping panel\'s three controls')
    t.equal(await page.locator('[data-panel="mapping"] .cm-content').getAttribute('aria-label'), 'Mapping document (JSON or YAML)')
    await page.keyboard.press('Control+a')
    await page.keyboard.type('{"mapping": {"/k": "/name", "/b": {"source": "/born", "as": "integer"}}}')
    t.equal(await editorText(page, 'mapping'), '{"mapping": {"/k": "/name", "/b": {"source": "/born", "as": "integer"}}}', 'typed as written (closing brackets typed over)')
    // Escape, then Tab: out of the editor (Tab alone indents). The first Escape closes completion.
    await page.keyboard.press('Escape')
    await page.locator('[data-panel="mapping"] .cm-tooltip-autocomplete').waitFor({ state: 'detached' })
    await page.keyboard.press('Escape')
    await page.keyboard.press('Tab')
    t.equal(await focused(), 'input-format', 'Escape then Tab leaves the editor, to the next control')
    await shows(page, '#report', 'KW-pipeline-1')
    // The diagnostics' places are buttons: Enter selects the member in the editor.
    await page.locator('#report .entry .pointer').focus()
    await page.keyboard.press('Enter')
    t.equal(await focused(), 'mapping editor')
    t.equal(await selectedMapping(page), '"as": "integer"')
    await page.keyboard.press('ArrowRight')
    await page.keyboard.press('ArrowLeft')
    for (let i = 0; i < 'integer'.length; i++) await page.keyboard.press('Backspace')
    await page.keyboard.type('string')
    await page.keyboard.press('Control+Enter')
    t.same(await output(page, '"k"'), { k: 'Ada', b: '1815', valid: true, errors: [] })
    // Every control has a name a screen reader reads.
    for (const id of ['source', 'format', 'input-format', 'token', 'auto', 'explain-on']) t.equal(await page.locator(`label[for="${id}"], label:has(#${id})`).count(), 1, `a label for #${id}`)
    for (const panel of ['mapping', 'input', 'output']) t.ok(await page.locator(`[data-panel="${panel}"] .cm-content`).getAttribute('aria-label'), `the ${panel} editor is named`)
    clean(t, visited, origin)
  })

  t.test('browser: explicit documents off — the page says so, validates your document and maps registered ones', async (t) => {
    const origin = await listening(t, { playground: true }, MAPPINGS)
    const visited = await visit(t, browser, `${origin}/playground`)
    const { page } = visited
    t.match(await textOf(page, '#notice'), /validates your document/)
    t.equal(await page.locator('#run').isDisabled(), true)
    // The page knows from its config that this deployment gives no traces (map.explain follows map.explicit).
    await shows(page, '#explain-status', 'No traces on this server')
    t.equal(await page.locator('#explain-on').isDisabled(), true)
    await paste(page, 'mapping', 'mapping:\n  /out:\n    as: integer\n')
    await shows(page, '#report', 'KW-pipeline-1')
    t.same(await squiggledLines(page), [3])
    t.equal(await editorText(page, 'output'), '')
    // A registered mapping is mapped (the registered form needs no map.explicit); explain is off.
    await page.selectOption('#source', 'greet')
    t.equal(await page.locator('#run').isDisabled(), false)
    await paste(page, 'input', '{"message": "hi"}')
    t.same(await output(page, '"hi"'), { text: 'hi', valid: true, errors: [] })
    t.equal(await page.locator('#explain-on').isDisabled(), true, 'no trace was asked for')
    clean(t, visited, origin)
  })

  t.test('browser: auth on — 401 shown until a valid token is pasted, then validate, map and the registered mappings work', async (t) => {
    const origin = await listening(t, { auth: { secret: SECRET }, map: { explicit: true, explain: true }, playground: true }, MAPPINGS)
    const visited = await visit(t, browser, `${origin}/playground`)
    const { page } = visited
    t.equal(await page.locator('#token').isVisible(), true)
    await shows(page, '#report-status', '401 Unauthorized: Missing bearer token')

    await page.fill('#token', sign({ sub: 'someone' }, { key: 'another-secret-of-32-characters!!' }))
    await shows(page, '#report-status', '401 Unauthorized: Invalid token signature')

    await paste(page, 'mapping', '{"mapping": {"/who": "/in"}}')
    await paste(page, 'input', '{"in": "authorized"}')
    await page.fill('#token', sign({ sub: 'someone' }, { key: SECRET }))
    t.same(await output(page, '"authorized"'), { who: 'authorized', valid: true, errors: [] })
    t.equal(await textOf(page, '#report-status'), 'Valid.')
    await shows(page, '#source', 'citation')
    t.same(await page.locator('#source option').allTextContents(), ['your document', 'citation', 'greet'], 'the registered mappings, read with the token')
    // The curl command names the token without holding it.
    await page.click('#curl')
    await shows(page, '#copy-label', 'curl')
    const curl = await page.locator('#copy-text').inputValue()
    t.match(curl, / -H "authorization: Bearer \$MAPPER_TOKEN" /)
    t.notMatch(curl, /eyJ/, 'no token in the command')
    await shot(page, 'wide-9-auth')
    clean(t, visited, origin)
  })

  t.test('browser: under a prefix, in a host app, the page calls the prefixed endpoints', async (t) => {
    const host = Fastify({ logger: false })
    t.teardown(() => host.close())
    await host.register(mapperService, { prefix: '/mapper', mappings: MAPPINGS as never, options: WORKBENCH })
    const origin = await host.listen({ port: 0, host: '127.0.0.1' })
    const visited = await visit(t, browser, `${origin}/mapper/playground`)
    const { page, requests } = visited
    await output(page, '"Ada"')
    for (const path of ['validate', 'map', 'mappings', 'extensions', 'schema/mapping.json', 'playground/playground.js']) t.ok(requests.includes(`${origin}/mapper/${path}`), `/mapper/${path}`)
    await shows(page, '#source', 'citation')
    clean(t, visited, origin)
  })
}

async function commandExists(name: string): Promise<boolean> {
  try {
    await promisify(execFile)('bash', ['-c', `command -v ${name}`])
    return true
  } catch {
    return false
  }
}
