// `denyPrivateNetworks` (request-plugin.md §2): the check runs on the address a connection is
// actually made to, inside the connector, so a name that resolves to a public address when a
// policy hook looks and to a private one when the socket opens (DNS rebinding) is still refused.
// `allowHosts` names the exceptions a deployment vouches for (an internal upstream).
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { BlockList, isIP } from 'node:net'
import { buildConnector } from 'undici'

// IPv4 destinations no mapping has reason to reach: the IANA special-purpose ranges that are not
// globally reachable, plus the carrier-grade NAT space, private in practice. Link-local is where
// cloud metadata services live.
const REFUSED_IPV4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // carrier-grade NAT shared space
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local
  ['172.16.0.0', 12], // private (RFC 1918)
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private (RFC 1918)
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, with the limited broadcast 255.255.255.255
]

const refusedIPv4 = new BlockList()
for (const [network, prefix] of REFUSED_IPV4) refusedIPv4.addSubnet(network, prefix, 'ipv4')

// IPv6 is judged the other way round: only global unicast (2000::/3) can pass. That alone refuses
// ::, ::1, IPv4-compatible ::/96, the 100::/64 discard prefix, local-use NAT64 64:ff9b:1::/48,
// unique-local fc00::/7, link-local fe80::/10, site-local fec0::/10 and multicast ff00::/8.
const globalUnicast = new BlockList()
globalUnicast.addSubnet('2000::', 3, 'ipv6')

// Inside global unicast, the blocks IANA marks as not globally reachable.
const refusedIPv6 = new BlockList()
refusedIPv6.addSubnet('2001::', 23, 'ipv6') // IETF protocol assignments (Teredo, ORCHID, benchmarking)
refusedIPv6.addSubnet('2001:db8::', 32, 'ipv6') // documentation
refusedIPv6.addSubnet('3fff::', 20, 'ipv6') // documentation

/** Eight 16-bit groups of an IPv6 address (already known to be one). */
function hextets(address: string): number[] {
  let text = address.toLowerCase()
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted !== null) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number]
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined]
  const left = head === '' || head === undefined ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const fill = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0')
  return [...left, ...fill, ...right].map((group) => parseInt(group, 16))
}

const zero = (groups: number[], from: number, to: number): boolean => groups.slice(from, to).every((g) => g === 0)

/**
 * The IPv4 address an IPv6 address stands for, whose table then decides: IPv4-mapped
 * (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
function embeddedIPv4(groups: number[]): string | null {
  const quad = (high: number, low: number): string => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.')
  if (zero(groups, 0, 5) && groups[5] === 0xffff) return quad(groups[6]!, groups[7]!)
  if (zero(groups, 0, 4) && groups[4] === 0xffff && groups[5] === 0) return quad(groups[6]!, groups[7]!)
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(groups, 2, 6)) return quad(groups[6]!, groups[7]!)
  if (groups[0] === 0x2002) return quad(groups[1]!, groups[2]!)
  return null
}

const unbracketed = (host: string): string => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host)

/** True for an address the plugin refuses under `denyPrivateNetworks` (and for anything not an IP). */
export function isPrivateAddress(address: string): boolean {
  const bare = unbracketed(address)
  const family = isIP(bare)
  if (family === 4) return refusedIPv4.check(bare, 'ipv4')
  // Not an address, or one with a zone index (fe80::1%eth0), is not vouched for.
  if (family !== 6 || bare.includes('%')) return true
  const inner = embeddedIPv4(hextets(bare))
  if (inner !== null) return refusedIPv4.check(inner, 'ipv4')
  return !globalUnicast.check(bare, 'ipv6') || refusedIPv6.check(bare, 'ipv6')
}

/**
 * The refusal: an error with a stable code that declares the answer a host gives it (http.md §3:
 * 422 `DestinationRefused`, the mapping asked for a destination the policy refuses).
 */
export class PrivateNetworkRefusedError extends Error {
  override readonly name = 'PrivateNetworkRefusedError'
  readonly code = 'E_PRIVATE_NETWORK'
  readonly statusCode = 422
  readonly responseCode = 'DestinationRefused'
  readonly address: string

  constructor(host: string, address: string) {
    super(
      host === address
        ? `Refused destination ${host}: a private network address (denyPrivateNetworks)`
        : `Refused destination ${host}: it resolves to ${address}, a private network address (denyPrivateNetworks)`
    )
    this.address = address
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** A `dns.lookup` that fails when any address a name resolves to is private. */
function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, options, (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => {
    if (error !== null) {
      callback(error, address, family)
      return
    }
    const addresses = typeof address === 'string' ? [address] : address.map((entry) => entry.address)
    const refused = addresses.find(isPrivateAddress)
    if (refused !== undefined) {
      callback(new PrivateNetworkRefusedError(hostname, refused), address, family)
      return
    }
    callback(null, address, family)
  })
}

/**
 * The form `allowHosts` entries and connection hosts are compared in: the WHATWG URL host
 * (lowercase; numeric IPv4 spellings such as `127.1` as dotted quads; IPv6 compressed), without
 * brackets. Null for anything that is not a bare host (a port, path, credentials …).
 */
export function canonicalHost(host: string): string | null {
  if (host === '' || /[/?#@\\\s]/.test(host)) return null
  const bare = unbracketed(host)
  if (bare.includes(':') && isIP(bare) !== 6) return null
  try {
    return unbracketed(new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}/`).hostname)
  } catch {
    return null
  }
}

/**
 * An undici connector that refuses private destinations: IP literals are judged here (Node skips
 * `lookup` for them), names in the lookup the socket itself uses. A host in `allowHosts` connects
 * unchecked, whatever it resolves to.
 */
export function guardedConnector(allowHosts: ReadonlySet<string> = new Set()): buildConnector.connector {
  const guarded = buildConnector({ lookup: guardedLookup })
  const unchecked = buildConnector({})
  return (options, callback) => {
    const host = unbracketed(options.hostname).toLowerCase()
    if (allowHosts.has(host)) {
      unchecked(options, callback)
      return
    }
    if (isIP(host) !== 0 && isPrivateAddress(host)) {
      callback(new PrivateNetworkRefusedError(host, host), null)
      return
    }
    guarded(options, callback)
  }
}
