// GET /playground (options.playground): a static authoring page that edits a mapping document and
// an input, and calls this server's own POST /validate, POST /map, GET /mappings, GET /extensions
// and GET /schema/mapping.json. Everything it needs is served from here (the page, its style, its
// script: one ES module that `npm run build` bundles from playground/src/ with CodeMirror and the
// `yaml` package, scripts/build-playground.mjs), so it works on a closed network and under a
// self-only Content-Security-Policy. Every file is read once, at registration, into a fixed table:
// no request ever names a file on disk. The routes are public (a browser cannot send a bearer token
// while loading a page); the page asks for a token and sends it with its API calls when the server
// has auth on.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { ConfigError } from '../../support/config-error.js'
import { packageInfo } from '../../support/package.js'

interface PlaygroundRoutesOptions {
  /** Whether the server authenticates: the page then asks for a bearer token. */
  readonly auth: boolean
  /** Whether POST /map takes explicit documents: without it the page only validates. */
  readonly explicit: boolean
  /** Whether the deployment gives explain traces to any caller (`map.explain` not false); a caller its claims refuse still meets the 403. */
  readonly explain?: boolean
  /** The folder holding the page's files; the package's `playground/` unless a test says otherwise. */
  readonly folder?: string
}

/** The page's own client config, at `/playground/config.json`. */
export interface PlaygroundConfig {
  readonly auth: boolean
  readonly explicit: boolean
  readonly explain: boolean
}

interface Asset {
  readonly type: string
  readonly body: Buffer
  /** The body gzip-compressed, for the files worth it (the script: 559 KiB, 184 KiB so). */
  readonly gzip?: Buffer
}

/** Files larger than this are kept gzip-compressed too, and sent so to a browser that accepts it. */
const GZIP_FROM_BYTES = 8 * 1024

const withGzip = (asset: Asset): Asset => (asset.body.length < GZIP_FROM_BYTES ? asset : { ...asset, gzip: gzipSync(asset.body) })

/** Whether the request accepts a gzip body (`Accept-Encoding: gzip`, not refused with q=0). */
function acceptsGzip(request: FastifyRequest): boolean {
  const header = request.headers['accept-encoding']
  if (typeof header !== 'string') return false
  return header.split(',').some((part) => {
    const [coding, ...parameters] = part.trim().toLowerCase().split(';')
    if (coding !== 'gzip' && coding !== '*') return false
    const q = parameters.map((parameter) => parameter.trim()).find((parameter) => parameter.startsWith('q='))
    return q === undefined || Number(q.slice(2)) > 0
  })
}

const TYPES = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json; charset=utf-8',
  svg: 'image/svg+xml',
  text: 'text/plain; charset=utf-8',
} as const

/** The bundled script, below the page's folder: built by `npm run build`, not kept in git. */
export const PLAYGROUND_BUNDLE = join('build', 'playground.js')

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

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset): FastifyReply {
  reply
    .header('content-security-policy', PLAYGROUND_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-resource-policy', 'same-origin')
    .type(asset.type)
  if (asset.gzip === undefined) return reply.send(asset.body)
  reply.header('vary', 'accept-encoding')
  return acceptsGzip(request) ? reply.header('content-encoding', 'gzip').send(asset.gzip) : reply.send(asset.body)
}

/** The bundle, or a ConfigError (one line at startup) saying how to make it. */
function readBundle(folder: string): { script: Asset, licenses: Asset } {
  const script = join(folder, PLAYGROUND_BUNDLE)
  if (!existsSync(script)) {
    throw new ConfigError(`options.playground: the page's script is not built (${script} is missing): run \`npm run build\`, which bundles it (scripts/build-playground.mjs), or turn the playground off`)
  }
  const notices = join(folder, 'build', 'THIRD-PARTY-LICENSES.txt')
  return {
    script: withGzip({ type: TYPES.js, body: readFileSync(script) }),
    licenses: { type: TYPES.text, body: existsSync(notices) ? readFileSync(notices) : Buffer.from('') },
  }
}

export const playgroundRoutes: FastifyPluginAsync<PlaygroundRoutesOptions> = async (app, { auth, explicit, explain = false, folder = join(packageInfo().root, 'playground') }) => {
  const read = (name: string, type: string): Asset => ({ type, body: readFileSync(join(folder, name)) })
  const { script, licenses } = readBundle(folder)
  const page = read('index.html', TYPES.html)
  const files = new Map<string, Asset>([
    ['playground.js', script],
    ['playground.css', read('playground.css', TYPES.css)],
    ['favicon.svg', read('favicon.svg', TYPES.svg)],
    ['licenses.txt', withGzip(licenses)],
    ['config.json', { type: TYPES.json, body: Buffer.from(JSON.stringify({ auth, explicit, explain } satisfies PlaygroundConfig)) }],
  ])
  const route = { config: { public: true }, schema: { hide: true } }

  app.get('/playground', route, async (request, reply) => send(request, reply, page))
  // With a trailing slash the page's relative links would miss its files: send the browser to the
  // page itself. The Location is relative, so it holds behind a proxy that adds a path prefix.
  app.get('/playground/', route, async (request, reply) => {
    const query = request.url.indexOf('?')
    return reply.redirect(`../playground${query === -1 ? '' : request.url.slice(query)}`, 308)
  })
  for (const [name, asset] of files) app.get(`/playground/${name}`, route, async (request, reply) => send(request, reply, asset))
}
