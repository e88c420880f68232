// The one place errors become the error body (http.md §3): `{ code, message, <extra>, requestId }`.
// 5xx detail reaches clients only with `errorDetail: full`; it is always kept for the log line.
import fp from 'fastify-plugin'
import type { FastifyError, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify'
import { BudgetExceeded, EvaluationError } from '../engine/index.js'
import {
  BODY_CODES,
  BadRequest,
  FIELD_MESSAGES,
  InternalError,
  InvalidMappingDocument,
  MESSAGES,
  NotFound,
  OutputNotSerializable,
  PayloadTooLarge,
  URITooLong,
  ValidationError,
} from '../errors.js'
import { IsolatedFailure } from '../runtime/isolation.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The error behind a response, for the log line (with its real message). */
    failure: Error | null
  }
}

interface Shaped {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly extra: Record<string, unknown>
}

/**
 * What an error declares about its own answer (http.md §3), as fastify's errors declare
 * `statusCode`: a 4xx status (or 503, busy: the request may succeed later), the code of the error
 * body, and the members the body carries beside code and message. An extension's refusals declare
 * theirs (the request plugin's RedirectRefused, DestinationRefused, ProtocolRefused, InvalidUrl,
 * InvalidRequestOptions, UpstreamBusy), so this handler knows no extension's codes.
 */
interface DeclaredAnswer {
  readonly statusCode: number
  readonly responseCode: string
  readonly responseFields?: unknown
  readonly message: string
}

const BODY_MEMBERS = new Set(['code', 'message', 'requestId'])

function declaresAnswer(value: unknown): value is DeclaredAnswer {
  const candidate = value as Partial<DeclaredAnswer>
  return (
    value instanceof Error &&
    typeof candidate.responseCode === 'string' &&
    candidate.responseCode !== '' &&
    Number.isInteger(candidate.statusCode) &&
    ((candidate.statusCode! >= 400 && candidate.statusCode! < 500) || candidate.statusCode === 503)
  )
}

/**
 * The error, or the first of its causes, that declares its answer: a refusal may be kept as the
 * cause of a plain error. An error with a status of its own (a 503 that wraps a failed canary)
 * decides for its causes.
 */
function declaredAnswer(error: unknown): DeclaredAnswer | undefined {
  let current = error as { cause?: unknown; statusCode?: unknown } | undefined
  for (let hops = 0; hops < 8 && current !== null && typeof current === 'object'; hops++) {
    if (declaresAnswer(current)) return current
    if (current.statusCode !== undefined) return undefined
    current = current.cause as typeof current
  }
  return undefined
}

/** The fields a BudgetExceeded body carries beside code and message. */
export function budgetFields(error: BudgetExceeded): Record<string, unknown> {
  const { code: _code, ...fields } = error.toJSON()
  return fields
}

/** The budget fields of a failure that exceeded one (inline, or in a worker thread), else undefined. */
export function exceededBudget(failure: unknown): Record<string, unknown> | undefined {
  if (failure instanceof BudgetExceeded) return budgetFields(failure)
  if (failure instanceof IsolatedFailure && failure.budget !== undefined) return failure.extra
  return undefined
}

/**
 * The 400 message of a body that failed its schema, named after the failing field: the property
 * the first error points into. A body that is not an object holds none of its fields: it is
 * answered as its first required one. The field's catalogued message, or one naming it.
 */
function schemaFailure(validation: readonly FastifySchemaValidationError[], bodySchema: unknown): string {
  const first = validation[0]
  const token = first?.instancePath.split('/')[1]
  const required = (bodySchema as { required?: unknown } | undefined)?.required
  const field = token !== undefined ? token.replaceAll('~1', '/').replaceAll('~0', '~') : Array.isArray(required) ? String(required[0]) : undefined
  if (field === undefined) return 'Body must be a JSON object'
  // A member the body's schema does not have (the bodies refuse additional members): name the ones it has.
  const members = (bodySchema as { properties?: Record<string, unknown> } | undefined)?.properties
  if (members !== undefined && !Object.hasOwn(members, field)) {
    const named = JSON.stringify(field.length > 64 ? `${field.slice(0, 64)}…` : field)
    return `Body member ${named} is not one of ${Object.keys(members).map((name) => JSON.stringify(name)).join(', ')}`
  }
  if (Object.hasOwn(FIELD_MESSAGES, field)) return FIELD_MESSAGES[field]!
  const problem = first?.message ?? 'is invalid'
  return `"${field}" is invalid: ${problem.charAt(0).toLowerCase()}${problem.slice(1)}`
}

/**
 * Classify anything thrown into a status, code, message and the code's extra field; `bodySchema`
 * is the route's, for a schema failure's message.
 */
export function shapeError(error: unknown, maxBodyBytes: number, bodySchema?: unknown): Shaped {
  const e = error as Partial<FastifyError>
  if (error instanceof BudgetExceeded) return { status: 422, code: error.code, message: error.message, extra: budgetFields(error) }
  // Shaped by this function in the worker thread that ran it (runtime/isolation.ts).
  if (error instanceof IsolatedFailure) return { status: error.statusCode, code: error.code, message: error.message, extra: error.extra }
  if (error instanceof EvaluationError) return { status: 422, code: error.code, message: error.message, extra: {} }
  if (error instanceof OutputNotSerializable) return { status: 422, code: error.code, message: error.message, extra: {} }
  if (error instanceof InvalidMappingDocument) return { status: 422, code: e.code!, message: e.message!, extra: { report: error.report } }
  if (error instanceof ValidationError) return { status: error.statusCode, code: e.code!, message: e.message!, extra: { errors: error.errors } }
  const declared = declaredAnswer(error)
  if (declared !== undefined) {
    const fields = declared.responseFields
    const extra: Record<string, unknown> = {}
    if (fields !== null && typeof fields === 'object') {
      // The body's own members stay the handler's.
      for (const [key, value] of Object.entries(fields)) if (!BODY_MEMBERS.has(key)) extra[key] = value
    }
    return { status: declared.statusCode, code: declared.responseCode, message: String(declared.message), extra }
  }
  const shaped = catalogued(e)
  if (shaped !== undefined) return shaped
  // Fastify's own errors, as the catalogue's.
  if (e.validation !== undefined) return catalogued(new BadRequest(schemaFailure(e.validation, bodySchema)))!
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return catalogued(new PayloadTooLarge(maxBodyBytes))!
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return catalogued(new URITooLong())!
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return catalogued(new BadRequest(MESSAGES.invalidJson))!
    default:
      return catalogued(new InternalError(String(e.message ?? error)))!
  }
}

/** An error of the catalogue (errors.ts), shaped; undefined for any other. */
function catalogued(error: Partial<FastifyError>): Shaped | undefined {
  const code = typeof error.code === 'string' ? BODY_CODES.get(error.code) : undefined
  if (code === undefined || typeof error.statusCode !== 'number') return undefined
  return { status: error.statusCode, code, message: String(error.message), extra: {} }
}

interface ErrorsPluginOptions {
  readonly maxBodyBytes: number
  readonly errorDetail: 'minimal' | 'full'
}

function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown, options: ErrorsPluginOptions): FastifyReply {
  const shaped = shapeError(error, options.maxBodyBytes, request.routeOptions.schema?.body)
  request.failure = error instanceof Error ? error : new Error(String(error))
  const message = shaped.status >= 500 && options.errorDetail !== 'full' ? MESSAGES.hidden : shaped.message
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
      const path = request.url.split('?')[0]
      return sendError(request, reply, new NotFound(`No route for ${request.method} ${path}`), options)
    })
  },
  { name: 'mapper-errors', fastify: '5.x' }
)
