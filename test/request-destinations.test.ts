// Where the plugin may connect (request-plugin.md §2): the checkUrl hook, denyPrivateNetworks on
// the resolved address at connect time, and allowedProtocols. Real upstream on 127.0.0.1; the name
// `localhost` stands for "a host name that resolves to loopback".
import { type IncomingMessage, type ServerResponse } from 'node:http'
import t from 'tap'
import { Mapper } from '../engine/index.js'
import { createRequest, isPrivateAddress, PrivateNetworkRefusedError, type RequestConfig } from '../extensions/request/index.js'
import { upstream } from './request-support.js'

const ok = (_req: IncomingMessage, res: ServerResponse): void => {
  res.setHeader('content-type', 'application/json')
  res.end('{"ok":true}')
}

function fetchJson(config: RequestConfig, request: Record<string, unknown>, input: unknown = {}): Promise<unknown> {
  const mapper = new Mapper({}, { plugins: { request: createRequest(config) } })
  return mapper.map({ mapping: { '/r': { source: '/u', request: { ...request, pointer: '/json' } } } }, input).then((result) => result.r)
}

t.test('checkUrl refusal: its error propagates and the upstream has zero hits', async (t) => {
  const up = await upstream(t, ok)
  const seen: string[] = []
  await t.rejects(
    fetchJson({
      checkUrl: (url) => {
        seen.push(url)
        throw new Error('destination not allowed')
      }
    }, { origin: up.origin, pathname: '/things', search: { q: 'a b' } }),
    { message: 'destination not allowed' }
  )
  await t.rejects(fetchJson({ checkUrl: async () => Promise.reject(new Error('async no')) }, { origin: up.origin }), { message: 'async no' })
  t.same(seen, [`${up.origin}/things?q=a+b`], 'checkUrl sees the URL that would be fetched')
  t.same(up.hits, [])
})

t.test('checkUrl that allows: the request goes through', async (t) => {
  const up = await upstream(t, ok)
  const allowOnlyUpstream = (url: string): void => {
    if (!url.startsWith(`${up.origin}/`)) throw new Error('destination not allowed')
  }
  t.same(await fetchJson({ checkUrl: allowOnlyUpstream }, { origin: up.origin, pathname: '/fine' }), { ok: true })
  await t.rejects(fetchJson({ checkUrl: allowOnlyUpstream }, { url: { source: '' } }, { u: 'http://192.0.2.1/internal' }), {
    message: 'destination not allowed',
  })
  t.same(up.hits, ['GET /fine'])
})

t.test('denyPrivateNetworks refuses a host name that resolves to loopback, at connect time', async (t) => {
  const up = await upstream(t, ok)
  const { port } = new URL(up.origin)
  // checkUrl sees only the name and lets it through: the refusal comes from the resolved address.
  const error = (await t.rejects(
    fetchJson({ denyPrivateNetworks: true, checkUrl: () => {} }, { origin: `http://localhost:${port}`, pathname: '/x' }),
    { name: 'PrivateNetworkRefusedError', code: 'E_PRIVATE_NETWORK', message: /^Refused destination localhost: it resolves to (127\.0\.0\.1|::1), a private network address/ }
  )) as PrivateNetworkRefusedError
  t.ok(error instanceof PrivateNetworkRefusedError)
  t.same(up.hits, [])
})

t.test('denyPrivateNetworks refuses IP literals (v4 and v6) before connecting', async (t) => {
  const up = await upstream(t, ok)
  const { port } = new URL(up.origin)
  await t.rejects(fetchJson({ denyPrivateNetworks: true }, { origin: up.origin, pathname: '/x' }), {
    message: 'Refused destination 127.0.0.1: a private network address (denyPrivateNetworks)',
  })
  // The URL parser turns these spellings into 127.0.0.1; none of them slips through.
  for (const host of ['2130706433', '0x7f.1', '127.1']) {
    await t.rejects(fetchJson({ denyPrivateNetworks: true }, { origin: `http://${host}:${port}` }), { code: 'E_PRIVATE_NETWORK' }, host)
  }
  await t.rejects(fetchJson({ denyPrivateNetworks: true }, { origin: `http://[::1]:${port}` }), { code: 'E_PRIVATE_NETWORK' })
  await t.rejects(fetchJson({ denyPrivateNetworks: true }, { origin: `http://[::ffff:127.0.0.1]:${port}` }), { code: 'E_PRIVATE_NETWORK' })
  t.same(up.hits, [])
})

t.test('without denyPrivateNetworks the same upstream answers (the control case)', async (t) => {
  const up = await upstream(t, ok)
  t.same(await fetchJson({}, { origin: up.origin }), { ok: true })
  t.same(await fetchJson({ denyPrivateNetworks: false }, { origin: up.origin }), { ok: true })
})

t.test('the private address table', async (t) => {
  const table: Array<[string, boolean]> = [
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['8.8.8.8', false],
    ['93.184.216.34', false],
    ['::', true],
    ['::1', true],
    ['[::1]', true],
    ['fe80::1', true],
    ['fd12:3456::1', true],
    ['fc00::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:10.0.0.1', true],
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::a00:1', true],
    ['64:ff9b::808:808', false],
    ['2002:7f00:1::', true],
    ['2002:808:808::', false],
    ['2001:4860:4860::8888', false],
    ['not-an-address', true],
    // IANA special-purpose IPv4 ranges beyond the private ones, and their neighbours.
    ['192.0.0.8', true],
    ['192.0.2.1', true],
    ['192.0.3.1', false],
    ['192.88.99.1', true],
    ['198.18.0.1', true],
    ['198.19.255.255', true],
    ['198.20.0.1', false],
    ['198.51.100.7', true],
    ['203.0.113.9', true],
    ['100.63.255.255', false],
    ['100.128.0.0', false],
    ['224.0.0.1', true],
    ['239.255.255.250', true],
    ['240.0.0.1', true],
    ['255.255.255.255', true],
    ['223.255.255.255', false],
    // IPv6: only global unicast (2000::/3) passes, minus its special-purpose blocks; addresses
    // that carry an IPv4 address are judged by it.
    ['::ffff:0:7f00:1', true],
    ['::ffff:0:808:808', false],
    ['::127.0.0.1', true],
    ['::8.8.8.8', true],
    ['64:ff9b::7f00:1', true],
    ['64:ff9b::c612:1', true],
    ['64:ff9b:1::808:808', true],
    ['::ffff:198.18.0.1', true],
    ['::ffff:255.255.255.255', true],
    ['100::1', true],
    ['fec0::1', true],
    ['ff02::1', true],
    ['ff0e::1', true],
    ['5f00::1', true],
    ['4000::1', true],
    ['2001::1', true],
    ['2001:2::1', true],
    ['2001:db8::1', true],
    ['3fff::1', true],
    ['2001:200::1', false],
    ['2a00:1450:4001::1', false],
    ['fe80::1%eth0', true],
  ]
  for (const [address, expected] of table) t.equal(isPrivateAddress(address), expected, address)
})

t.test('allowedProtocols: other schemes are refused before anything is sent', async (t) => {
  const up = await upstream(t, ok)
  for (const url of ['file:///etc/passwd', 'data:application/json,{"ok":true}', 'ftp://127.0.0.1/x', 'javascript:alert(1)']) {
    const protocol = new URL(url).protocol
    await t.rejects(fetchJson({}, { url: { source: '' } }, { u: url }), {
      message: `Refused protocol ${protocol} for ${new URL(url).href}: allowed protocols are http:, https:`,
    }, url)
  }
  await t.rejects(fetchJson({ allowedProtocols: ['https:'] }, { origin: up.origin }), {
    message: `Refused protocol http: for ${up.origin}/: allowed protocols are https:`,
  })
  t.same(up.hits, [])
})
