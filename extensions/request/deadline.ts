// One deadline per call (request-plugin.md §2 `timeoutMs`): a single timer and a single abort
// signal over the policy hook, every hop and the body, so a slow chain of redirects cannot stretch
// the budget hop by hop. The host's own signal (`context.signal`) aborts the same way.
import { redactUrl } from '../../support/redact.js'

export class Deadline {
  private readonly controller = new AbortController()
  private readonly timer: NodeJS.Timeout
  private readonly detach: () => void
  /** The URL in flight, named (redacted) in the timeout message (a redirect target once a hop is taken). */
  url: string

  constructor(timeoutMs: number, url: string, outer: AbortSignal | undefined) {
    this.url = url
    this.timer = setTimeout(() => {
      this.controller.abort(new Error(`Request timed out after ${timeoutMs} ms: ${redactUrl(this.url)}`))
    }, timeoutMs)
    if (outer === undefined) {
      this.detach = () => {}
    } else {
      const onAbort = (): void => {
        this.controller.abort(new Error(`Request aborted: ${redactUrl(this.url)}`, { cause: outer.reason }))
      }
      if (outer.aborted) onAbort()
      outer.addEventListener('abort', onAbort, { once: true })
      this.detach = () => outer.removeEventListener('abort', onAbort)
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** Throw the abort reason if the deadline has passed or the host gave up. */
  check(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason
  }

  /** Settle with `work`, or reject with the abort reason if that comes first. */
  async race<T>(work: T | Promise<T>): Promise<T> {
    this.check()
    const signal = this.controller.signal
    let onAbort: (() => void) | undefined
    const aborted = new Promise<never>((_resolve, reject) => {
      onAbort = () => reject(signal.reason)
      signal.addEventListener('abort', onAbort, { once: true })
    })
    try {
      return await Promise.race([Promise.resolve(work), aborted])
    } finally {
      signal.removeEventListener('abort', onAbort!)
    }
  }

  dispose(): void {
    clearTimeout(this.timer)
    this.detach()
  }
}
