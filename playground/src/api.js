// The page's calls to the service that serves it. Every path is relative to the page
// (`validate`, not `/validate`), so the page works under any prefix a host or a proxy adds; the
// bearer token, when the service asks for one, is the one typed in the page (never stored).

export class Api {
  /**
   * @param {() => string} token the token typed in the page ('' for none)
   */
  constructor(token) {
    this.token = token
    /** Whether the service authenticates (from playground/config.json). */
    this.auth = false
  }

  headers(json) {
    const headers = json ? { 'content-type': 'application/json' } : {}
    const token = this.token().trim()
    if (this.auth && token !== '') headers.authorization = `Bearer ${token}`
    return headers
  }

  /** `{ status, payload }`: payload is the answer's JSON, or null when it is not JSON. */
  async request(method, path, body, signal) {
    const init = { method, headers: this.headers(body !== undefined), signal, credentials: 'omit', cache: 'no-store' }
    if (body !== undefined) init.body = JSON.stringify(body)
    const response = await fetch(path, init)
    const text = await response.text()
    let payload = null
    try {
      payload = JSON.parse(text)
    } catch {
      // Not the service's JSON (a proxy's page, say): described by its status alone.
    }
    return { status: response.status, payload }
  }

  get(path, signal) {
    return this.request('GET', path, undefined, signal)
  }

  post(path, body, signal) {
    return this.request('POST', path, body, signal)
  }

  /** One line for a failed answer: `401 Unauthorized: Missing bearer token (paste a token above)`. */
  describe({ status, payload }) {
    if (payload !== null && typeof payload === 'object' && typeof payload.code === 'string') {
      const hint = status === 401 && this.auth ? ' (paste a token above)' : ''
      return `${status} ${payload.code}: ${payload.message}${hint}`
    }
    return `${status}: the server answered without its error body`
  }
}

/** The URL of a path relative to the page, as a caller outside it would write it. */
export const absolute = (path) => new URL(path, document.baseURI).href

/** A POSIX shell word: single-quoted, a single quote written as '\''. */
const shellWord = (text) => `'${text.replace(/'/g, "'\\''")}'`

/**
 * The curl command for a request the page makes: one line, the body inline. The token is left to
 * the shell (`$MAPPER_TOKEN`), so a command copied into a ticket does not carry it.
 */
export function curlCommand(path, body, auth) {
  const parts = ['curl', '-sS', shellWord(absolute(path)), '-H', shellWord('content-type: application/json')]
  if (auth) parts.push('-H', '"authorization: Bearer $MAPPER_TOKEN"')
  parts.push('--data-binary', shellWord(JSON.stringify(body)))
  return parts.join(' ')
}
