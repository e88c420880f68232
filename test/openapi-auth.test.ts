// GET /openapi.json with auth on (issue 30): public, but what it says of the registered mappings
// (each one's typed operation, its inferred output with the constants the mapping writes) follows
// the auth of GET /mappings/{id}/schema: a caller whose token verifies gets it, anyone else the
// document without it (the generic POST /map/{id}), and a bad token is 401 as anywhere else.
import t from 'tap'
import { bearer, SECRET, serve } from './http-support.js'

const PLANTED = 'planted-constant-4b1d9e'
const SECRETIVE = { $id: 'secretive', mapping: { '/tier': { constant: PLANTED }, '/kind': { source: '/kind', enum: ['gold-enum-77', 'silver'] }, '/name': '/name' } }

t.test('auth on: the unauthenticated document names no registered mapping and carries none of their constants', async (t) => {
  const app = await serve(t, { mappings: [SECRETIVE], options: { auth: { secret: SECRET } } })
  const anonymous = await app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(anonymous.statusCode, 200, 'public')
  t.match(anonymous.headers.vary, /authorization/i, 'the answer varies by the Authorization header')
  t.notOk(anonymous.body.includes(PLANTED), 'the planted constant is not in the public document')
  t.notOk(anonymous.body.includes('gold-enum-77'), 'nor an enum value')
  t.notOk(anonymous.body.includes('secretive'), 'nor the mapping id')
  const document = anonymous.json() as { paths: Record<string, unknown> }
  t.ok(document.paths['/map/{id}'], 'the generic path form is listed instead')

  const schema = await app.inject({ method: 'GET', url: '/mappings/secretive/schema' })
  t.equal(schema.statusCode, 401, 'as the mapping\'s own schema is behind auth')

  const authorized = await app.inject({ method: 'GET', url: '/openapi.json', headers: bearer({ sub: 'reader' }) })
  t.equal(authorized.statusCode, 200)
  t.ok(authorized.body.includes(PLANTED), 'an authenticated caller gets the mappings\' operations, constants included')
  t.ok((authorized.json() as { paths: Record<string, unknown> }).paths['/map/secretive'])

  const forged = await app.inject({ method: 'GET', url: '/openapi.json', headers: bearer({ sub: 'reader' }, { key: 'another-secret-that-is-long-enough-0123456789' }) })
  t.equal(forged.statusCode, 401, 'a token that does not verify is 401, not the full document')
  t.notOk(forged.body.includes(PLANTED))
  const empty = await app.inject({ method: 'GET', url: '/openapi.json', headers: { authorization: 'Basic abc' } })
  t.equal(empty.statusCode, 401, 'an Authorization header that is no bearer token: 401')
})

t.test('auth off: the document carries every mapping\'s operation, as before', async (t) => {
  const app = await serve(t, { mappings: [SECRETIVE] })
  const open = await app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(open.statusCode, 200)
  t.ok(open.body.includes(PLANTED))
  t.equal(open.headers.vary, undefined)
})
