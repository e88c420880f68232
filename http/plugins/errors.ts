// The one place errors become the HTTP error body (http.md §3): `{ code, message, <extra>, requestId }`,
// as service/errors.ts `shapeError` reads each error's answer. 5xx detail reaches clients only with
// `errorDetail: full`; it is always kept for the log line.
import fp from 'fastify-plugin'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { BudgetExceeded } from '../../engine/index.js'
import { budgetFields, NotFound, shapeError, shownMessage } from '../../service/errors.js'
import { IsolatedFailure } from '../../workers/isolation.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The error behind a response, for the log line (with its real message). */
    failure: Error | null
  }
}

/** The budget fields of a failure that exceeded one (inline, or in a worker thread), else undefined. */
export function exceededBudget(failure: unknown): Record<string, unknown> | undefined {
  if (failure instanceof BudgetExceeded) return budgetFields(failure)
  if (failure instanceof IsolatedFailure && failure.budget !== undefined) return failure.extra
  return undefined
}

/**
 * How an answer refusing a feature that is off says what turns it on: the option's path in the
 * options object, and where options are given (there are no per-option environment variables).
 */
export const enabledBy = (option: string): string => `the option ${option} turns this on (in OPTIONS, OPTIONS_FILE or the plugin's options)`

/**
 * The paths a deployment serves only with an option on, by what they serve; a GET of one that has
 * no route is a 404 that names the option. The metrics may be served at another path
 * (`metrics.path`), so theirs says that too.
 */
const OPTIONAL_PATHS: ReadonlyArray<{ readonly path: string; readonly what: string; readonly option: string }> = [
  { path: '/playground', what: 'the playground is not enabled on this deployment', option: 'playground' },
  { path: '/openapi.json', what: 'the OpenAPI document is not enabled on this deployment', option: 'openapi' },
  { path: '/metrics', what: 'the metrics are off on this deployment, or served at another path (metrics.path)', option: 'metrics' },
]

interface ErrorsPluginOptions {
  readonly maxBodyBytes: number
  readonly errorDetail: 'minimal' | 'full'
}

function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown, options: ErrorsPluginOptions): FastifyReply {
  const shaped = shapeError(error, options.maxBodyBytes, request.routeOptions.schema?.body)
  request.failure = error instanceof Error ? error : new Error(String(error))
  const message = shownMessage(shaped, options.errorDetail)
  if (shaped.status === 401) reply.header('www-authenticate', 'Bearer')
  const allow = (error as { allow?: string }).allow
  if (allow !== undefined) reply.header('allow', allow)
  return reply
    .code(shaped.status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ code: shaped.code, message, ...shaped.extra, requestId: request.requestId }))
}

/**
 * Fastify's `frameworkErrors` option for buildServer: a URL that does not decode (`/%zz`) fails
 * before routing, so no hook of this service runs; it is still an error body with X-Request-Id.
 */
export function frameworkErrorHandler(options: ErrorsPluginOptions) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    request.requestId = request.id
    reply.header('x-request-id', request.id).header('cache-control', 'no-store')
    const failure = error.code === 'FST_ERR_BAD_URL' ? new NotFound(`No route for ${request.method} ${request.url.split('?')[0]}`) : error
    return sendError(request, reply, failure, options)
  }
}

export const errorsPlugin = fp<ErrorsPluginOptions>(
  async (app, options) => {
    app.decorateRequest('failure', null)
    app.setErrorHandler((error, request, reply) => sendError(request, reply, error, options))
    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0]!
      return sendError(request, reply, new NotFound(`No route for ${request.method} ${path}${featureOff(request.method, path)}`), options)
    })

    /** For a GET of an optional feature's path that has no route (under this instance's prefix, in the plugin form): what turns it on. */
    function featureOff(method: string, path: string): string {
      if ((method !== 'GET' && method !== 'HEAD') || !path.startsWith(app.prefix)) return ''
      const own = path.slice(app.prefix.length)
      const feature = OPTIONAL_PATHS.find((optional) => own === optional.path || own.startsWith(optional.path + '/'))
      if (feature === undefined || app.hasRoute({ method: 'GET', url: app.prefix + feature.path })) return ''
      return `: ${feature.what}; ${enabledBy(feature.option)}`
    }
  },
  { name: 'mapper-errors', fastify: '5.x' }
)
