// Redirects (request-plugin.md §3): refused by default with a typed error; under 'follow', GET only,
// bounded hops, same origin or the https upgrade, every hop checked again. Real upstreams on
// 127.0.0.1; the https cases route example.test names to them through a test connector.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { Agent, buildConnector } from 'undici'
import { Mapper } from '../engine/index.js'
import { createRequest, RedirectRefusedError, type RequestConfig } from '../extensions/request/index.js'
import { upstream } from './request-support.js'

/** 301 to `location` for the listed paths, `{ ok: true, path }` for every other one. */
function redirecting(redirects: Record<string, string | null>, status = 301) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const location = redirects[req.url ?? '']
    if (location !== undefined) {
      res.statusCode = status
      if (location !== null) res.setHeader('location', location)
      res.end()
      return
    }
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ ok: true, path: req.url }))
  }
}

function fetchJson(config: RequestConfig, request: Record<string, unknown>): Promise<unknown> {
  const mapper = new Mapper({}, { plugins: { request: createRequest(config) } })
  return mapper.map({ mapping: { '/r': { request: { ...request, pointer: '/json' } } } }, {}).then((result) => result.r)
}

t.test('refuse (the default): RedirectRefusedError with code, status, raw location and message', async (t) => {
  const up = await upstream(t, redirecting({ '/moved': '/elsewhere' }, 302))
  const error = await t.rejects(fetchJson({}, { origin: up.origin, pathname: '/moved' }), {
    name: 'RedirectRefusedError',
    code: 'E_REDIRECT_REFUSED',
    status: 302,
    location: '/elsewhere',
    message: `Redirect refused: ${up.origin}/moved responded 302 to /elsewhere`,
  })
  t.ok(error instanceof RedirectRefusedError)
  t.same(up.hits, ['GET /moved'])
})

t.test('refuse: every redirect status, with or without Location', async (t) => {
  for (const status of [301, 302, 303, 307, 308]) {
    const up = await upstream(t, redirecting({ '/a': '/b' }, status))
    await t.rejects(fetchJson({}, { origin: up.origin, pathname: '/a' }), { code: 'E_REDIRECT_REFUSED', status, location: '/b' }, String(status))
  }
  const bare = await upstream(t, redirecting({ '/a': null }, 307))
  const error = (await t.rejects(fetchJson({}, { origin: bare.origin, pathname: '/a' }), {
    message: `Redirect refused: ${bare.origin}/a responded 307`,
  })) as RedirectRefusedError
  t.notOk(Object.hasOwn(error, 'location'), 'no location when the response had none')
})

t.test('refuse: maxRedirects alone does not enable following', async (t) => {
  const up = await upstream(t, redirecting({ '/a': '/b' }))
  await t.rejects(fetchJson({ maxRedirects: 5 }, { origin: up.origin, pathname: '/a' }), { code: 'E_REDIRECT_REFUSED' })
  t.same(up.hits, ['GET /a'])
})

t.test('follow: an absolute same-origin Location', async (t) => {
  let origin = ''
  const up = await upstream(t, (req, res) => redirecting({ '/article': `${origin}/article/` })(req, res))
  origin = up.origin
  t.same(await fetchJson({ redirect: 'follow' }, { origin: up.origin, pathname: '/article' }), { ok: true, path: '/article/' })
  t.same(up.hits, ['GET /article', 'GET /article/'])
})

t.test('follow: a relative Location is resolved against the current URL', async (t) => {
  const up = await upstream(t, redirecting({ '/docs/article': 'article/', '/docs/article/': '../final' }))
  t.same(await fetchJson({ redirect: 'follow' }, { origin: up.origin, pathname: '/docs/article' }), { ok: true, path: '/docs/final' })
  t.same(up.hits, ['GET /docs/article', 'GET /docs/article/', 'GET /docs/final'])
})

t.test('follow: at most maxRedirects hops; the refused hop names its resolved target', async (t) => {
  const chain: Record<string, string> = {}
  for (let n = 1; n <= 5; n++) chain[`/${n}`] = `/${n + 1}`
  const up = await upstream(t, redirecting(chain))
  await t.rejects(fetchJson({ redirect: 'follow', maxRedirects: 2 }, { origin: up.origin, pathname: '/1' }), {
    code: 'E_REDIRECT_REFUSED',
    status: 301,
    location: `${up.origin}/4`,
    message: `Redirect refused: ${up.origin}/3 responded 301 to ${up.origin}/4`,
  })
  t.same(up.hits, ['GET /1', 'GET /2', 'GET /3'])

  const none = await upstream(t, redirecting({ '/a': '/b' }))
  await t.rejects(fetchJson({ redirect: 'follow', maxRedirects: 0 }, { origin: none.origin, pathname: '/a' }), { code: 'E_REDIRECT_REFUSED' })
  t.same(none.hits, ['GET /a'])
})

t.test('follow: another origin is refused and never contacted', async (t) => {
  const other = await upstream(t, redirecting({}))
  const up = await upstream(t, redirecting({ '/a': `${other.origin}/stolen` }))
  await t.rejects(fetchJson({ redirect: 'follow' }, { origin: up.origin, pathname: '/a' }), {
    code: 'E_REDIRECT_REFUSED',
    location: `${other.origin}/stolen`,
  })
  t.same(up.hits, ['GET /a'])
  t.same(other.hits, [], 'zero hits on the other origin')
})

t.test('follow: only GET; a redirected POST is refused', async (t) => {
  const up = await upstream(t, (req, res) => {
    req.resume()
    redirecting({ '/items': '/items/1' }, 303)(req, res)
  })
  await t.rejects(
    fetchJson({ redirect: 'follow' }, { origin: up.origin, pathname: '/items', method: 'POST', body: { mapping: { '/a': { constant: 1 } } } }),
    { code: 'E_REDIRECT_REFUSED', status: 303, location: `${up.origin}/items/1` }
  )
  t.same(up.hits, ['POST /items'])
})

t.test('follow: a redirect without Location, or with one that is not a URL, is refused', async (t) => {
  const up = await upstream(t, redirecting({ '/none': null, '/bad': 'http://[broken' }))
  const error = (await t.rejects(fetchJson({ redirect: 'follow' }, { origin: up.origin, pathname: '/none' }), {
    message: `Redirect refused: ${up.origin}/none responded 301`,
  })) as RedirectRefusedError
  t.notOk(Object.hasOwn(error, 'location'))
  await t.rejects(fetchJson({ redirect: 'follow' }, { origin: up.origin, pathname: '/bad' }), {
    code: 'E_REDIRECT_REFUSED',
    location: 'http://[broken',
  })
  t.same(up.hits, ['GET /none', 'GET /bad'])
})

t.test('follow: checkUrl runs before the first request and before every hop', async (t) => {
  const up = await upstream(t, redirecting({ '/public': '/next', '/next': '/secret' }))
  const checked: string[] = []
  const checkUrl = (url: string): void => {
    checked.push(url)
    if (url.endsWith('/secret')) throw new Error('destination not allowed')
  }
  await t.rejects(fetchJson({ redirect: 'follow', maxRedirects: 5, checkUrl }, { origin: up.origin, pathname: '/public' }), {
    message: 'destination not allowed',
  })
  t.same(checked, [`${up.origin}/public`, `${up.origin}/next`, `${up.origin}/secret`])
  t.same(up.hits, ['GET /public', 'GET /next'], '/secret was never requested')
})

t.test('a refusal escapes mapper.map as a host exception, not an error object', async (t) => {
  const up = await upstream(t, redirecting({ '/a': '/b' }))
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  await t.rejects(mapper.map({ mapping: { '/r': { request: { origin: up.origin, pathname: '/a' } } } }, {}), RedirectRefusedError)
})

// The https upgrade needs default ports on one host name: example.test names are routed to local
// servers by a connector, and the https server presents a certificate made for this test run.
function makeCertificate(): { key: string; cert: string } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'request-redirects-'))
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
        '-subj', '/CN=articles.example.test', '-addext', 'subjectAltName=DNS:articles.example.test',
        '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
      { stdio: 'ignore', timeout: 20_000 }
    )
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') }
  } catch {
    return undefined
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const certificate = makeCertificate()

t.test('https upgrade and downgrade', { skip: certificate === undefined ? 'openssl is not available' : false }, async (t) => {
  const { key, cert } = certificate!
  const httpHits: string[] = []
  const httpsHits: string[] = []
  const routes: Record<string, string> = {
    'http /a': 'https://articles.example.test/a/',
    'https /a': 'http://articles.example.test/a/',
    'http /port': 'https://articles.example.test:8080/port/',
  }
  const handler = (scheme: string, hits: string[]) => (req: IncomingMessage, res: ServerResponse) => {
    hits.push(`${req.headers.host} ${req.url}`)
    const location = routes[`${scheme} ${req.url}`]
    redirecting(location === undefined ? {} : { [req.url ?? '']: location })(req, res)
  }
  const plain = createServer(handler('http', httpHits))
  const secure = createHttpsServer({ key, cert }, handler('https', httpsHits))
  for (const server of [plain, secure]) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    t.teardown(() => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(resolve))
    })
  }
  const httpPort = (plain.address() as AddressInfo).port
  const httpsPort = (secure.address() as AddressInfo).port
  const table: Record<string, number> = {
    'http:articles.example.test:80': httpPort,
    'http:articles.example.test:8080': httpPort,
    'https:articles.example.test:443': httpsPort,
    'https:articles.example.test:8080': httpsPort,
  }
  const connect = buildConnector({ ca: cert })
  const dispatcher = new Agent({
    connect: (options, callback) => {
      const port = options.port || (options.protocol === 'https:' ? '443' : '80')
      const to = table[`${options.protocol}${options.hostname}:${port}`]
      if (to === undefined) {
        callback(new Error(`no test route to ${options.hostname}:${port}`), null)
        return
      }
      connect({ ...options, hostname: '127.0.0.1', port: String(to), servername: options.hostname }, callback)
    },
  })
  t.teardown(() => dispatcher.close())
  const reset = (): void => {
    httpHits.length = 0
    httpsHits.length = 0
  }

  t.test('http → https on the same host with default ports is followed', async (t) => {
    reset()
    const mapper = new Mapper({}, { plugins: { request: createRequest({ redirect: 'follow', dispatcher }) } })
    const out = await mapper.map({ mapping: { '/r': { source: '/u', request: { url: { source: '' }, pointer: '/json' } } } }, {
      u: 'http://articles.example.test/a',
    })
    t.same(out.r, { ok: true, path: '/a/' })
    t.same(httpHits, ['articles.example.test /a'])
    t.same(httpsHits, ['articles.example.test /a/'])
  })

  t.test('the upgrade is refused when redirectHttpsUpgrade is false', async (t) => {
    reset()
    await t.rejects(fetchJson({ redirect: 'follow', redirectHttpsUpgrade: false, dispatcher }, { origin: 'http://articles.example.test', pathname: '/a' }), {
      code: 'E_REDIRECT_REFUSED',
      location: 'https://articles.example.test/a/',
    })
    t.same(httpHits, ['articles.example.test /a'])
    t.same(httpsHits, [])
  })

  t.test('the upgrade is refused when https: is not an allowed protocol', async (t) => {
    reset()
    await t.rejects(fetchJson({ redirect: 'follow', allowedProtocols: ['http:'], dispatcher }, { origin: 'http://articles.example.test', pathname: '/a' }), {
      code: 'E_REDIRECT_REFUSED',
    })
    t.same(httpsHits, [])
  })

  t.test('https → http (a downgrade) is refused', async (t) => {
    reset()
    await t.rejects(fetchJson({ redirect: 'follow', dispatcher }, { origin: 'https://articles.example.test', pathname: '/a' }), {
      code: 'E_REDIRECT_REFUSED',
      status: 301,
      location: 'http://articles.example.test/a/',
      message: 'Redirect refused: https://articles.example.test/a responded 301 to http://articles.example.test/a/',
    })
    t.same(httpsHits, ['articles.example.test /a'])
    t.same(httpHits, [], 'zero hits on the http side')
  })

  t.test('an upgrade on a non-default port is refused', async (t) => {
    reset()
    await t.rejects(fetchJson({ redirect: 'follow', dispatcher }, { origin: 'http://articles.example.test:8080', pathname: '/port' }), {
      code: 'E_REDIRECT_REFUSED',
      location: 'https://articles.example.test:8080/port/',
    })
    t.same(httpHits, ['articles.example.test:8080 /port'])
    t.same(httpsHits, [])
  })
})
