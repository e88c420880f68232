// One log line per request when it completes (http.md §7): requestId, method, path (no query),
// status, durationMs; `error` with the real error for 5xx, `warn` "evaluation budget exceeded"
// with the budget's fields, `warn` "slow request" above the threshold, `info` otherwise. Headers
// are never logged (the logger also redacts Authorization).
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { exceededBudget } from './errors.js'

interface LoggingPluginOptions {
  readonly slowThreshold: number
}

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'request.headers.authorization',
  'headers.authorization',
  'authorization',
  '*.authorization',
]

/** True when the request's logger already carries this service's id (buildServer's log label). */
function boundToRequestId(request: FastifyRequest): boolean {
  const log = request.log as { bindings?: () => Record<string, unknown> }
  return typeof log.bindings === 'function' && log.bindings().requestId === request.requestId
}

export const loggingPlugin = fp<LoggingPluginOptions>(
  async (app, { slowThreshold }) => {
    app.addHook('onResponse', (request, reply, done) => {
      done()
      const durationMs = Math.round(reply.elapsedTime * 1000) / 1000
      const failure = request.failure
      const budget = exceededBudget(failure)
      const level = reply.statusCode >= 500 ? 'error' : budget !== undefined || durationMs > slowThreshold ? 'warn' : 'info'
      // Nothing is built for a line the logger would drop.
      const log = request.log as typeof request.log & { isLevelEnabled?: (level: string) => boolean }
      if (log.isLevelEnabled !== undefined && !log.isLevelEnabled(level)) return
      // A JSON line never holds the same key twice.
      const line = {
        ...(boundToRequestId(request) ? {} : { requestId: request.requestId }),
        method: request.method,
        path: request.url.split('?')[0],
        status: reply.statusCode,
        durationMs,
      }
      if (level === 'error') request.log.error({ ...line, err: failure ?? undefined }, 'request failed')
      else if (budget !== undefined) request.log.warn({ ...line, ...budget }, 'evaluation budget exceeded')
      else if (level === 'warn') request.log.warn(line, 'slow request')
      else request.log.info(line, 'request completed')
    })
  },
  { name: 'mapper-logging', fastify: '5.x' }
)
