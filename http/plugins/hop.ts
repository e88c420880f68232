// Loop protection: the request plugin marks every upstream request with the hop header
// (extensions/request/headers.ts). A request carrying it was made by a mapping — of this instance
// or of another one behind the same name — and serving it could let one call fan out into an
// unbounded chain of nested calls, so it is refused before authentication, the body or any
// mapping runs.
// Wrapped with fastify-plugin so the hook covers every route of the context registering it.
import fp from 'fastify-plugin'
import { Forbidden } from '../../service/errors.js'
import { HOP_HEADER } from '../../extensions/request/index.js'

export const LOOP_REFUSED = 'Requests made by a mapping of this service are refused (loop protection)'

export const hopPlugin = fp(
  async (app) => {
    // A callback hook: no promise per request.
    app.addHook('onRequest', (request, _reply, done) => {
      if (request.headers[HOP_HEADER] === undefined) done()
      else done(new Forbidden(LOOP_REFUSED))
    })
  },
  { name: 'mapper-hop', fastify: '5.x' }
)
