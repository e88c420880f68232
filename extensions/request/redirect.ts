// The redirect policy (request-plugin.md §3). undici is never asked to follow; the plugin sees
// every 3xx and either refuses it (the default) or follows it within strict bounds.
import { redactUrl } from '../../support/redact.js'
import type { RequestPolicy } from './config.js'

export const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])

/**
 * A redirect the policy does not follow. It declares the answer a host gives it (request-plugin.md
 * §3, http.md §3): 422 `RedirectRefused`, with the refused `location` in the body when there is one.
 * Both URLs are kept redacted (query values and userinfo), message and `location` alike: a
 * redirect target can carry a credential (a signed URL), and the error is shown and logged.
 */
export class RedirectRefusedError extends Error {
  override readonly name = 'RedirectRefusedError'
  readonly code = 'E_REDIRECT_REFUSED'
  readonly statusCode = 422
  readonly responseCode = 'RedirectRefused'
  /** The 3xx status of the refused response. */
  readonly status: number
  /** The refused target, redacted; absent (not even an own key) when the response carried no `Location`. */
  declare readonly location?: string

  constructor(url: string, status: number, target?: string) {
    const location = target === undefined || target === '' ? target : redactUrl(target)
    super(`Redirect refused: ${redactUrl(url)} responded ${status}${location === undefined ? '' : ` to ${location}`}`)
    this.status = status
    if (location !== undefined) Object.defineProperty(this, 'location', { value: location, enumerable: true })
  }

  /** The members the error body carries beside code and message. */
  get responseFields(): Readonly<Record<string, unknown>> {
    return this.location === undefined || this.location === '' ? {} : { location: this.location }
  }
}

/** The one hop `'follow'` may take from `current`: same origin, or the https upgrade on default ports. */
export function isAllowedHop(target: URL, current: URL, policy: RequestPolicy): boolean {
  if (!policy.allowedProtocols.includes(target.protocol)) return false
  if (target.origin === current.origin) return true
  return (
    policy.redirectHttpsUpgrade &&
    current.protocol === 'http:' &&
    target.protocol === 'https:' &&
    target.hostname === current.hostname &&
    current.port === '' &&
    target.port === ''
  )
}
