// The playground (options.playground): off by default (404), served as fixed static files under a
// self-only Content-Security-Policy when on. How a person uses it in a real browser is
// test/browser/playground.test.ts (`npm run test:browser`: it needs Debian's Chromium).
import { load } from 'cheerio'
import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import t from 'tap'
import { ConfigError, resolveConfig } from '../config/resolve.js'
import { PLAYGROUND_CSP } from '../http/routes/playground.js'
import { buildServer } from '../server.js'
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
  for (const url of ['/playground', '/playground/playground.js', '/playground/config.json', '/playground/yaml/index.js']) {
    const response = await app.inject({ method: 'GET', url })
    t.equal(response.statusCode, 404, url)
    const message = `No route for GET ${url}: the playground is not enabled on this deployment; the option playground turns this on (in OPTIONS, OPTIONS_FILE or the plugin's options)`
    t.same(response.json(), { code: 'NotFound', message, requestId: response.headers['x-request-id'] })
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
  const app = await served()
  const post = await app.inject({ method: 'POST', url: '/playground', payload: {} })
  t.equal(post.statusCode, 405)
  t.equal(post.headers.allow, 'GET, HEAD, OPTIONS')
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
  for (const url of ['/playground', '/playground/playground.js', '/playground/config.json', '/playground/yaml/index.js']) {
    t.equal((await app.inject({ method: 'GET', url })).statusCode, 200, `${url} without a token`)
  }
  t.same((await app.inject({ method: 'GET', url: '/playground/config.json' })).json(), { auth: true, explicit: false })
  t.equal((await app.inject({ method: 'POST', url: '/validate', payload: { mapping: { mapping: {} } } })).statusCode, 401)
  const openapi = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> }
  t.same(Object.keys(openapi.paths).filter((path) => path.startsWith('/playground')), [])
})
