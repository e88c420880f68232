// URLs as they may be printed (README "Security"): a query value or a user:password@ can be a
// credential (`?api_key=…`, a `search: { access_token }`, a JWKS URL with a token), so every URL
// that reaches a log line, an error message or a trace attribute goes through `redactUrl` first.
// No imports: the request plugin (the public sub-export `mapper-service/request`) uses it as the
// service does, without pulling in anything of the service.

/** What stands in for every query value and for userinfo. */
export const REDACTED = 'REDACTED'

/** The query with every value replaced and the parameter names kept (`a=REDACTED&b`). */
function redactQuery(query: string): string {
  if (query === '') return ''
  return query
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=')
      return equals === -1 ? pair : `${pair.slice(0, equals)}=${REDACTED}`
    })
    .join('&')
}

/**
 * Text that did not parse as a URL, redacted by its shape: whatever lies between `scheme://` and
 * the first `@` of the authority is userinfo, everything after the first `?` is a query (a
 * fragment, after `#`, is dropped).
 */
function redactText(text: string): string {
  let rest = text
  const hash = rest.indexOf('#')
  if (hash !== -1) rest = rest.slice(0, hash)
  const question = rest.indexOf('?')
  const query = question === -1 ? undefined : rest.slice(question + 1)
  let head = question === -1 ? rest : rest.slice(0, question)
  const scheme = head.indexOf('//')
  const authorityStart = scheme === -1 ? 0 : scheme + 2
  const pathStart = head.indexOf('/', authorityStart)
  const authorityEnd = pathStart === -1 ? head.length : pathStart
  const at = head.lastIndexOf('@', authorityEnd - 1)
  if (at >= authorityStart) head = `${head.slice(0, authorityStart)}${REDACTED}@${head.slice(at + 1)}`
  return query === undefined ? head : `${head}?${redactQuery(query)}`
}

/**
 * A URL fit to print: every query value and any userinfo (`user:password@`) replaced by
 * `REDACTED`, the parameter names kept, the fragment left out. Text that is not a URL is
 * redacted by its shape all the same, so an unparseable URL in an error message leaks nothing.
 */
export function redactUrl(url: URL | string): string {
  let parsed: URL
  if (typeof url === 'string') {
    try {
      parsed = new URL(url)
    } catch {
      return redactText(url)
    }
  } else {
    parsed = url
  }
  const userinfo = parsed.username !== '' || parsed.password !== '' ? `${REDACTED}@` : ''
  const scheme = parsed.protocol
  // Opaque URLs (`mailto:`, `data:`) have no authority: their path is printed as it is.
  const prefix = parsed.href.startsWith(`${scheme}//`) ? `${scheme}//${userinfo}${parsed.host}` : scheme
  const query = parsed.search === '' ? '' : `?${redactQuery(parsed.search.slice(1))}`
  return `${prefix}${parsed.pathname}${query}`
}
