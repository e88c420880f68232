// `denyPrivateNetworks` (request-plugin.md §2): the check runs on the address a connection is
// actually made to, inside the connector, so a name that resolves to a public address when a
// policy hook looks and to a private one when the socket opens (DNS rebinding) is still refused.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { BlockList, isIP } from 'node:net'
import { buildConnector } from 'undici'

const blocked = new BlockList()
// IPv4: "this network"/unspecified, loopback, the RFC 1918 private ranges, link-local (cloud
// metadata lives there) and the carrier-grade NAT shared space, which is private in practice.
blocked.addSubnet('0.0.0.0', 8, 'ipv4')
blocked.addSubnet('127.0.0.0', 8, 'ipv4')
blocked.addSubnet('10.0.0.0', 8, 'ipv4')
blocked.addSubnet('172.16.0.0', 12, 'ipv4')
blocked.addSubnet('192.168.0.0', 16, 'ipv4')
blocked.addSubnet('169.254.0.0', 16, 'ipv4')
blocked.addSubnet('100.64.0.0', 10, 'ipv4')
// IPv6: unspecified, loopback, unique-local, link-local and the deprecated site-local range.
// BlockList matches IPv4-mapped addresses (::ffff:a.b.c.d) against the IPv4 rules itself.
blocked.addAddress('::', 'ipv6')
blocked.addAddress('::1', 'ipv6')
blocked.addSubnet('fc00::', 7, 'ipv6')
blocked.addSubnet('fe80::', 10, 'ipv6')
blocked.addSubnet('fec0::', 10, 'ipv6')

/** Eight 16-bit groups of an IPv6 address, or null when it is not one. */
function hextets(address: string): number[] | null {
  if (isIP(address) !== 6) return null
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

/** The IPv4 address carried inside a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address. */
function embeddedIPv4(groups: number[]): string | null {
  const quad = (high: number, low: number): string => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.')
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)) {
    return quad(groups[6]!, groups[7]!)
  }
  if (groups[0] === 0x2002) return quad(groups[1]!, groups[2]!)
  return null
}

/** True for an address the plugin refuses under `denyPrivateNetworks` (and for anything not an IP). */
export function isPrivateAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  const family = isIP(bare)
  try {
    if (family === 4) return blocked.check(bare, 'ipv4')
    if (family !== 6) return true
    if (blocked.check(bare, 'ipv6')) return true
    const groups = hextets(bare)
    const inner = groups === null ? null : embeddedIPv4(groups)
    return inner !== null && blocked.check(inner, 'ipv4')
  } catch {
    // An address the table cannot judge (a zone index, say) is not vouched for.
    return true
  }
}

/** The refusal: an ordinary error with a stable code, kept as the cause of the request failure. */
export class PrivateNetworkRefusedError extends Error {
  override readonly name = 'PrivateNetworkRefusedError'
  readonly code = 'E_PRIVATE_NETWORK'
  readonly address: string

  constructor(host: string, address: string) {
    super(
      host === address
        ? `Refused destination ${host}: a private network address (denyPrivateNetworks)`
        : `Refused destination ${host}: it resolves to ${address}, a private network address (denyPrivateNetworks)`,
    )
    this.address = address
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** A `dns.lookup` that fails when any address a name resolves to is private. */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
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
 * An undici connector that refuses private destinations: IP literals are judged here (Node skips
 * `lookup` for them), names in the lookup the socket itself uses.
 */
export function guardedConnector(): buildConnector.connector {
  const connect = buildConnector({ lookup: guardedLookup })
  return (options, callback) => {
    const host = options.hostname.startsWith('[') ? options.hostname.slice(1, -1) : options.hostname
    if (isIP(host) !== 0 && isPrivateAddress(host)) {
      callback(new PrivateNetworkRefusedError(host, host), null)
      return
    }
    connect(options, callback)
  }
}
