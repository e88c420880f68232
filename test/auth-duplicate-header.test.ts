// Two Authorization headers (http.md §5): Node keeps the first in `request.headers` and drops the
// rest, while a proxy in front may have checked the last; on a route that authenticates, such a
// request is refused 400 BadRequest whatever the tokens. Public routes, and a deployment without
// auth, read no Authorization header and are not concerned. Through a real listening server: an
// injected request cannot carry the same header twice.
import t from 'tap'
import { SECRET, token } from './http-support.js'
import { listening, rawExchange } from './transport-support.js'

const request = (path: string, authorizations: readonly string[]): string =>
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${authorizations.map((line) => `${line}\r\n`).join('')}Connection: close\r\n\r\n`

t.test('with auth on: two Authorization headers are refused 400 on an authenticated route', async (t) => {
  const { port } = await listening(t, { options: { auth: { secret: SECRET } } })
  const alice = `Bearer ${token({ sub: 'alice' })}`
  const mallory = `Bearer ${token({ sub: 'mallory' }, { key: 'not-the-secret-but-long-enough-0123456789' })}`
  const refused = [
    ['the same valid token twice', [`Authorization: ${alice}`, `Authorization: ${alice}`]],
    ['a forged token first, a valid one second', [`Authorization: ${mallory}`, `Authorization: ${alice}`]],
    ['a valid token first, a forged one second', [`Authorization: ${alice}`, `Authorization: ${mallory}`]],
    ['names that differ in case', [`authorization: ${alice}`, `AUTHORIZATION: ${alice}`]],
    ['an empty second header', [`Authorization: ${alice}`, 'Authorization: ']],
  ] as const
  for (const [what, lines] of refused) {
    const response = await rawExchange(t, port, request('/mappings', lines))
    t.equal(response.status, 400, what)
    t.strictSame(JSON.parse(response.body), { code: 'BadRequest', message: 'Only one Authorization header is allowed', requestId: response.headers['x-request-id'] }, what)
  }
  t.equal((await rawExchange(t, port, request('/mappings', [`Authorization: ${alice}`]))).status, 200, 'one header with a valid token is served')
  t.equal((await rawExchange(t, port, request('/nope', [`Authorization: ${alice}`, `Authorization: ${alice}`]))).status, 400, 'unknown paths authenticate too')
  t.equal((await rawExchange(t, port, request('/health', [`Authorization: ${alice}`, `Authorization: ${mallory}`]))).status, 200, 'a public route reads no Authorization header')
})

t.test('with auth off: Authorization headers are not read, two of them included', async (t) => {
  const { port } = await listening(t)
  t.equal((await rawExchange(t, port, request('/mappings', ['Authorization: Bearer a', 'Authorization: Bearer b']))).status, 200)
})
