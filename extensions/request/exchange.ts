// One HTTP exchange with its redirects (request-plugin.md §3): send through undici (which never
// follows by itself), then refuse a 3xx or, under `'follow'`, take the hop only when the policy
// allows it and the hop passes `checkUrl` again. Private destinations are refused by the
// connector of the plugin's Agent on every connection, hops included.
import type { IncomingHttpHeaders } from 'node:http'
import type { Dispatcher } from 'undici'
import { redactUrl } from '../../support/redact.js'
import { discardBody } from './body.js'
import type { RequestPolicy } from './config.js'
import type { Deadline } from './deadline.js'
import { HOP_HEADER, HOP_VALUE } from './headers.js'
import { PrivateNetworkRefusedError } from './private-network.js'
import { isAllowedHop, REDIRECT_STATUSES, RedirectRefusedError } from './redirect.js'

interface Outgoing {
  readonly url: URL
  readonly method: string
  readonly headers: ReadonlyMap<string, string>
  readonly body: string | undefined
}

interface Incoming {
  readonly url: URL
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: Dispatcher.ResponseData['body']
}

function single(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value
  return first === undefined || first === '' ? undefined : first
}

/** The private-network refusal when it is what failed, wherever undici put it. */
function privateNetworkRefusal(error: unknown): PrivateNetworkRefusedError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof PrivateNetworkRefusedError) return cause
  }
  return undefined
}

async function send(dispatcher: Dispatcher, outgoing: Outgoing, url: URL, deadline: Deadline): Promise<Dispatcher.ResponseData> {
  const headers: string[] = []
  for (const [name, value] of outgoing.headers) {
    // A JSON body is labelled as JSON whatever the mapping wrote.
    if (outgoing.body === undefined || name !== 'content-type') headers.push(name, value)
  }
  if (outgoing.body !== undefined) headers.push('content-type', 'application/json')
  headers.push(HOP_HEADER, HOP_VALUE)
  try {
    return await dispatcher.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: outgoing.method,
      headers,
      body: outgoing.body ?? null,
      signal: deadline.signal,
    })
  } catch (error) {
    deadline.check()
    const refusal = privateNetworkRefusal(error)
    if (refusal !== undefined) throw refusal
    throw new Error(`Request to ${redactUrl(url)} failed: ${(error as Error).message}`, { cause: error })
  }
}

export async function exchange(outgoing: Outgoing, policy: RequestPolicy, dispatcher: Dispatcher, deadline: Deadline): Promise<Incoming> {
  let url = outgoing.url
  for (let hops = 0; ; hops++) {
    deadline.url = url.href
    // A call cancelled before it goes out (its evaluation stopped while it was being prepared)
    // opens no connection: undici would still open one for an already aborted request.
    deadline.check()
    const response = await send(dispatcher, outgoing, url, deadline)
    const status = response.statusCode
    if (!REDIRECT_STATUSES.has(status)) return { url, status, headers: response.headers, body: response.body }

    const location = single(response.headers.location)
    const refuse = (target: string | undefined): never => {
      discardBody(response.body)
      throw new RedirectRefusedError(url.href, status, target)
    }
    if (policy.redirect === 'refuse' || location === undefined) refuse(location)
    let target: URL
    try {
      target = new URL(location!, url)
    } catch {
      return refuse(location)
    }
    if (outgoing.method !== 'GET' || hops >= policy.maxRedirects || !isAllowedHop(target, url, policy)) refuse(target.href)

    // Drain a small 3xx body so the connection can be reused; a big one is simply closed.
    await deadline.race(response.body.dump({ limit: 65_536 }).catch(() => undefined))
    url = target
    deadline.url = url.href
    if (policy.checkUrl !== undefined) await deadline.race(policy.checkUrl(url.href))
  }
}
