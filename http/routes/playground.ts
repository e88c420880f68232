// GET /playground (options.playground): a static authoring page that edits a mapping document and
// an input, and calls this server's own POST /validate and POST /map. Everything it needs is served
// from here (the page, its script and style, the `yaml` package's browser build and a small
// config), so it works on a closed network and under a self-only Content-Security-Policy. Every
// file is read once, at registration, into a fixed table: no request ever names a file on disk.
// The routes are public (a browser cannot send a bearer token while loading a page); the page asks
// for a token and sends it with its API calls when the server has auth on.
import { readFileSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, sep } from 'node:path'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { packageInfo } from '../../support/package.js'

interface PlaygroundRoutesOptions {
  /** Whether the server authenticates: the page then asks for a bearer token. */
  readonly auth: boolean
  /** Whether POST /map takes explicit documents: without it the page only validates. */
  readonly explicit: boolean
}

/** The page's own client config, at `/playground/config.json`. */
export interface PlaygroundConfig {
  readonly auth: boolean
  readonly explicit: boolean
}

interface Asset {
  readonly type: string
  readonly body: Buffer
}

const TYPES = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json; charset=utf-8',
  svg: 'image/svg+xml',
} as const

/** Self only, no inline script or style, no framing, no form posts elsewhere. */
export const PLAYGROUND_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

function send(reply: FastifyReply, asset: Asset): FastifyReply {
  return reply
    .header('content-security-policy', PLAYGROUND_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-resource-policy', 'same-origin')
    .type(asset.type)
    .send(asset.body)
}

/** The `yaml` package's browser ES modules, keyed by their path below `browser/dist/` (with `/`). */
function yamlBrowserModules(): Map<string, Asset> {
  const manifest = createRequire(import.meta.url).resolve('yaml/package.json')
  const root = join(dirname(manifest), 'browser', 'dist')
  const modules = new Map<string, Asset>()
  for (const path of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    if (!path.endsWith('.js')) continue
    modules.set(path.split(sep).join('/'), { type: TYPES.js, body: readFileSync(join(root, path)) })
  }
  if (!modules.has('index.js')) throw new Error(`mapper-service: the yaml browser build is missing at ${root}`)
  return modules
}

export const playgroundRoutes: FastifyPluginAsync<PlaygroundRoutesOptions> = async (app, { auth, explicit }) => {
  const folder = join(packageInfo().root, 'playground')
  const read = (name: string, type: string): Asset => ({ type, body: readFileSync(join(folder, name)) })
  const page = read('index.html', TYPES.html)
  const files = new Map<string, Asset>([
    ['playground.js', read('playground.js', TYPES.js)],
    ['playground.css', read('playground.css', TYPES.css)],
    ['favicon.svg', read('favicon.svg', TYPES.svg)],
    ['config.json', { type: TYPES.json, body: Buffer.from(JSON.stringify({ auth, explicit } satisfies PlaygroundConfig)) }],
  ])
  const yaml = yamlBrowserModules()
  const route = { config: { public: true }, schema: { hide: true } }

  app.get('/playground', route, async (_request, reply) => send(reply, page))
  // With a trailing slash the page's relative links would miss its files: send the browser to the
  // page itself. The Location is relative, so it holds behind a proxy that adds a path prefix.
  app.get('/playground/', route, async (request, reply) => {
    const query = request.url.indexOf('?')
    return reply.redirect(`../playground${query === -1 ? '' : request.url.slice(query)}`, 308)
  })
  for (const [name, asset] of files) app.get(`/playground/${name}`, route, async (_request, reply) => send(reply, asset))
  app.get<{ Params: { '*': string } }>('/playground/yaml/*', route, async (request, reply) => {
    const asset = yaml.get(request.params['*'])
    return asset === undefined ? reply.callNotFound() : send(reply, asset)
  })
}
