// CORS (http.md §6) with @fastify/cors: `*`, or listed origins echoed back (others get no CORS
// headers); bearer-only, so credentials are never enabled; X-Request-Id is exposed. Preflights are
// answered by the OPTIONS routes of the known paths (http/routes/methods.ts), so an unknown path stays
// 404 even for OPTIONS.
import fastifyCors from '@fastify/cors'
import fp from 'fastify-plugin'
import type { CorsConfig } from '../../config/resolve.js'

interface CorsPluginOptions {
  readonly cors: CorsConfig | null
}

export const corsPlugin = fp<CorsPluginOptions>(
  async (app, { cors }) => {
    if (cors === null) return
    await app.register(fastifyCors, {
      origin: cors.origin === '*' ? '*' : [...cors.origin],
      credentials: false,
      // Preflight headers are added by the OPTIONS routes themselves.
      preflight: false,
    })
    // @fastify/cors would expose the header to every origin, listed or not: an unlisted origin
    // gets no CORS header at all.
    app.addHook('onRequest', async (_request, reply) => {
      if (reply.hasHeader('access-control-allow-origin')) reply.header('access-control-expose-headers', 'X-Request-Id')
    })
  },
  { name: 'mapper-cors', fastify: '5.x' }
)
