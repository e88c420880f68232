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

/**
 * True when the request's logger already carries this service's id (a host's child logger per
 * request). buildServer's loggers never do (one logger for every request): pino's `bindings()`
 * parses the logger's bound fields anew at each call, so a logger found without a `requestId`
 * binding is remembered and never asked again.
 */
const unbound = new WeakSet<object>()
function boundToRequestId(request: FastifyRequest): boolean {
  const log = request.log as { bindings?: () => Record<string, unknown> }
  if (unbound.has(log) || typeof log.bindings !== 'function') return false
  const bound = log.bindings().requestId
  if (bound === undefined) unbound.add(log)
  return bound === request.requestId
}

/** The path of a request URL, without its query. */
function pathOf(url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
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
      // A JSON line never holds the same key twice; built as one literal (a spread per request
      // made a dictionary-mode object for pino to walk).
      const path = pathOf(request.url)
      const status = reply.statusCode
      const line: Record<string, unknown> = boundToRequestId(request)
        ? { method: request.method, path, status, durationMs }
        : { requestId: request.requestId, method: request.method, path, status, durationMs }
      if (level === 'error') {
        line.err = failure ?? undefined
        request.log.error(line, 'request failed')
      } else if (budget !== undefined) {
        request.log.warn(Object.assign(line, budget), 'evaluation budget exceeded')
      } else if (level === 'warn') {
        request.log.warn(line, 'slow request')
      } else {
        request.log.info(line, 'request completed')
      }
    })
  },
  { name: 'mapper-logging', fastify: '5.x' }
)
