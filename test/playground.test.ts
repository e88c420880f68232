// The playground (options.playground): off by default (404), served as fixed static files under a
// self-only Content-Security-Policy when on, its script the bundle `npm run build` makes
// (scripts/build-playground.mjs); without the bundle the service refuses to start with a line that
// says how to make it. How a person uses it in a real browser is test/browser/playground.test.ts
// (`npm run test:browser`: it needs Debian's Chromium).
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { load } from 'cheerio'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import t from 'tap'
import { ConfigError, resolveConfig } from '../config/resolve.js'
import { PLAYGROUND_BUNDLE, PLAYGROUND_CSP, playgroundRoutes } from '../http/routes/playground.js'
import { buildServer, isStartupError, startupFailureLine } from '../server.js'
import { packageInfo } from '../support/package.js'
import { SECRET } from './auth-support.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const quiet = () => pino({ level: 'silent' })

async function service(t: Pick<Tap, 'teardown'>, options: Record<string, unknown>): Promise<FastifyInstance> {
  const app = await buildServer({ options, mappings: [], logger: quiet() })
  t.teardown(() => app.close())
  return app
}

/** The tests of `{ playground: true }` alone share one service (a build costs a few hundred milliseconds); closed when the file ends. */
let playgroundOnly: Promise<FastifyInstance> | undefined
const served = (): Promise<FastifyInstance> => (playgroundOnly ??= service(t, { playground: true }))

// ---- served files ----------------------------------------------------------------------------

t.test('options.playground: false by default, a boolean only', async (t) => {
  t.equal(resolveConfig({}).playground, false)
  t.equal(resolveConfig({ playground: true }).playground, true)
  t.throws(() => resolveConfig({ playground: 'yes' }), ConfigError)
})

t.test('off (the default): every playground path is a 404 that names the option turning it on', async (t) => {
  const app = await service(t, { map: { explicit: true } })
  for (const url of ['/playground', '/playground/playground.js', '/playground/config.json', '/playground/licenses.txt']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 404, url)
    const message = `No route for GET ${url}: the playground is not enabled on this deployment; the option playground turns this on (in OPTIONS, OPTIONS_FILE or the plugin's options)`
    t.same(response.json(), { code: 'NotFound', message, requestId: response.headers['x-request-id'] })
  }
})

t.test('on: the page, its files and the bundled script, each with its type and the strict headers', async (t) => {
  const app = await service(t, { map: { explicit: true }, playground: true })
  const files: Array<[string, RegExp]> = [
    ['/playground', /^text\/html; charset=utf-8$/],
    ['/playground/playground.js', /^text\/javascript; charset=utf-8$/],
    ['/playground/playground.css', /^text\/css; charset=utf-8$/],
    ['/playground/favicon.svg', /^image\/svg\+xml$/],
    ['/playground/config.json', /^application\/json; charset=utf-8$/],
    ['/playground/licenses.txt', /^text\/plain; charset=utf-8$/],
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
  t.same(config.json(), { auth: false, explicit: true, explain: true }, 'explain follows the explicit form by default')
  const plain = await service(t, { map: { explicit: true, explain: false }, playground: true })
  t.same((await plain.inject({ method: 'GET', url: '/playground/config.json' })).json(), { auth: false, explicit: true, explain: false }, 'explain off: the page offers no traces')

  // The script is the bundle, byte for byte: one ES module, no import of anything (everything it
  // needs is in it), CodeMirror and the yaml package inside; their licenses beside it.
  const script = await app.inject({ method: 'GET', url: '/playground/playground.js' })
  const bundle = readFileSync(join(packageInfo().root, 'playground', PLAYGROUND_BUNDLE))
  t.ok(script.rawPayload.equals(bundle), 'the bundle as built')
  t.notMatch(script.body, /^\s*import[\s{*"']/m, 'no import: nothing else is loaded')
  t.notMatch(script.body, /\bimport\(/, 'no dynamic import')
  t.match(script.body, /cm-content/, 'CodeMirror is in it')
  // Sent gzip-compressed to a browser that accepts it (compressed once, at registration).
  for (const encoding of ['gzip, deflate, br', 'br;q=1.0, gzip;q=0.8', '*']) {
    const compressed = await app.inject({ method: 'GET', url: '/playground/playground.js', headers: { 'accept-encoding': encoding } })
    t.equal(compressed.headers['content-encoding'], 'gzip', `Accept-Encoding: ${encoding}`)
    t.equal(compressed.headers.vary, 'accept-encoding')
    t.equal(compressed.headers['content-security-policy'], PLAYGROUND_CSP)
    t.ok(gunzipSync(compressed.rawPayload).equals(bundle), 'the same bytes once decompressed')
    t.ok(compressed.rawPayload.length < bundle.length / 2, `${compressed.rawPayload.length} bytes sent for ${bundle.length}`)
  }
  for (const encoding of ['identity', 'gzip;q=0', 'br']) {
    const plain = await app.inject({ method: 'GET', url: '/playground/playground.js', headers: { 'accept-encoding': encoding } })
    t.equal(plain.headers['content-encoding'], undefined, `Accept-Encoding: ${encoding}: as it is`)
    t.ok(plain.rawPayload.equals(bundle))
  }
  const licenses = (await app.inject({ method: 'GET', url: '/playground/licenses.txt' })).body
  for (const name of ['@codemirror/view', '@codemirror/lint', '@lezer/yaml', 'yaml@']) t.match(licenses, name, `${name} named with its license`)

  // The page loads nothing from elsewhere and runs no inline script or style.
  const $ = load((await app.inject({ method: 'GET', url: '/playground' })).body)
  // Each panel, for tests and users' scripts.
  for (const panel of ['mapping', 'input', 'output', 'report', 'explain', 'examples']) t.equal($(`[data-panel="${panel}"]`).length, 1, `data-panel="${panel}"`)
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
    t.match(target, /^(playground\/[a-z]+\.[a-z]+|schema\/mapping\.json)$/, `${target} is a path of this service, relative to the page`)
  }
  // Every control has a label, every pane a heading that names it.
  for (const id of ['token', 'source', 'format', 'input-format', 'copy-text']) t.equal($(`label[for="${id}"]`).length, 1, `label for #${id}`)
  for (const id of ['auto', 'explain-on']) t.equal($(`label:has(#${id})`).length, 1, `label around #${id}`)
  for (const pane of $('[data-panel]').toArray()) t.equal($(`#${$(pane).attr('aria-labelledby')}`).prop('tagName'), 'H2', `${$(pane).attr('data-panel')} is named by its heading`)
})

t.test('on: only GET and HEAD, only the files in the table', async (t) => {
  const app = await served()
  const post = await app.inject({ method: 'POST', url: '/playground', payload: {} })
  t.equal(post.statusCode, 405)
  t.equal(post.headers.allow, 'GET, HEAD, OPTIONS')
  for (const url of [
    '/playground/index.html',
    '/playground/build/playground.js',
    '/playground/src/main.js',
    '/playground/yaml/index.js',
    '/playground/%2e%2e/package.json',
    '/playground/..%2fpackage.json',
    '/playground/build/THIRD-PARTY-LICENSES.txt',
    '/playground/nothing.js',
    '/playground/../package.json',
  ]) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 404, url)
    t.equal(response.json().code, 'NotFound', url)
    t.notMatch(response.json().message, /option playground/, 'on: a plain 404, naming no option')
  }
})

t.test('/playground/ (a trailing slash) sends the browser to the page, whose relative links then resolve', async (t) => {
  const app = await served()
  for (const [url, location] of [['/playground/', '../playground'], ['/playground/?doc=a%20b', '../playground?doc=a%20b']] as const) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 308, url)
    t.equal(response.headers.location, location)
    const page = new URL(location, `http://localhost${url}`)
    t.equal(page.pathname, '/playground', 'the Location resolves to the page')
    t.equal((await app.inject({ method: 'GET', url: page.pathname + page.search })).statusCode, 200)
  }
})

t.test('on, with auth: the page is public, the API is not; hidden from the OpenAPI document', async (t) => {
  const app = await service(t, { auth: { secret: SECRET }, playground: true })
  for (const url of ['/playground', '/playground/playground.js', '/playground/config.json', '/playground/licenses.txt']) {
    t.equal((await app.inject({ method: 'GET', url })).statusCode, 200, `${url} without a token`)
  }
  t.same((await app.inject({ method: 'GET', url: '/playground/config.json' })).json(), { auth: true, explicit: false, explain: false })
  t.equal((await app.inject({ method: 'POST', url: '/validate', payload: { mapping: { mapping: {} } } })).statusCode, 401)
  const openapi = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> }
  t.same(Object.keys(openapi.paths).filter((path) => path.startsWith('/playground')), [])
})

t.test('on, without the bundle: registration fails with one line that says how to build it', async (t) => {
  // A copy of the page's folder without build/: what a checkout has before `npm run build`.
  const folder = mkdtempSync(join(tmpdir(), 'playground-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const source = join(packageInfo().root, 'playground')
  for (const name of ['index.html', 'playground.css', 'favicon.svg']) cpSync(join(source, name), join(folder, name))
  const app = Fastify({ logger: false })
  t.teardown(() => app.close())
  const error = await app.register(playgroundRoutes, { auth: false, explicit: true, folder }).ready().then(() => undefined, (failure: unknown) => failure)
  t.ok(error instanceof ConfigError, 'a ConfigError')
  t.equal((error as Error).message, `options.playground: the page's script is not built (${join(folder, PLAYGROUND_BUNDLE)} is missing): run \`npm run build\`, which bundles it (scripts/build-playground.mjs), or turn the playground off`)
  t.ok(isStartupError(error), 'reported as a startup failure')
  t.equal(startupFailureLine(error), `mapper-service: ${(error as Error).message}\n`, 'one line on stderr, no stack')
})
