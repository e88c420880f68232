// The service's error catalogue (http.md §3): one place for every code, status and message. The
// error handler (plugins/errors.ts) is the only place that turns these into the error body.
import createError from '@fastify/error'
import type { ValidationReport } from './engine/index.js'

/** Body code by the code @fastify/error gives its instances (it upper-cases them). */
export const BODY_CODES = new Map<string, string>()

function define(code: string, status: number, message = '%s') {
  BODY_CODES.set(code.toUpperCase(), code)
  return createError(code, message, status)
}

export const BadRequest = define('BadRequest', 400)
export const Unauthorized = define('Unauthorized', 401)
export const Forbidden = define('Forbidden', 403)
export const NotFound = define('NotFound', 404)
export const MethodNotAllowed = define('MethodNotAllowed', 405)
export const RequestTimeout = define('RequestTimeout', 408, 'The request was not received in time')
export const PayloadTooLarge = define('PayloadTooLarge', 413, 'Request body exceeds the %s-byte limit')
/** A path parameter (a mapping id in /map/{id}, say) longer than the router takes (Fastify's maxParamLength, 100 by default). */
export const URITooLong = define('URITooLong', 414, 'A path segment is longer than this server accepts')
export const TooManyRequests = define('TooManyRequests', 429)
export const HeadersTooLarge = define('HeadersTooLarge', 431, 'Request headers exceed the %s-byte limit')
export const InternalError = define('InternalError', 500)
export const Unavailable = define('Unavailable', 503)
/** POST /map/stream answered no line within options.stream.idleTimeout: its last line, then closed. */
export const StreamIdle = define('StreamIdle', 408, 'No line was answered within %s ms: the stream is ended')
/** POST /map/stream ran for options.stream.maxDurationMs: its last line, then closed. */
export const StreamTooLong = define('StreamTooLong', 408, 'The stream reached its maximum duration of %s ms: it is ended')

export const MESSAGES = {
  invalidJson: 'Body must be valid JSON',
  explicitDisabled: 'The explicit mapping form is not enabled on this deployment',
  explainDisabled: 'Explain traces are not enabled on this deployment',
  hidden: 'An unexpected error occurred',
  invalidDocument: 'The submitted mapping document is invalid',
  invalidResult: 'Mapping validation failed',
  missingToken: 'Missing bearer token',
} as const

/** The 400 message of a body field that failed its schema, by field (others are named generically). */
export const FIELD_MESSAGES: Readonly<Record<string, string>> = {
  mapping: '"mapping" must be a string naming a registered mapping, or a mapping document object',
  concurrency: '"concurrency" must be an integer from 1 to 16',
}

export const lacksClaims = (what: string): InstanceType<typeof Forbidden> =>
  new Forbidden(`Caller lacks the claims required for ${what}`)

export const unknownMapping = (id: string): InstanceType<typeof NotFound> => new NotFound(`No mapping registered as "${id}"`)

/** 422 with the full validation report of a refused explicit document. */
export class InvalidMappingDocument extends Error {
  readonly code = 'InvalidMappingDocument'
  readonly statusCode = 422
  constructor(readonly report: ValidationReport) {
    super(MESSAGES.invalidDocument)
  }
}

/** A `valid: false` result promoted to `map.invalidStatus`, carrying the evaluation errors. */
export class ValidationError extends Error {
  readonly code = 'ValidationError'
  constructor(
    readonly statusCode: number,
    readonly errors: unknown[]
  ) {
    super(MESSAGES.invalidResult)
  }
}

/** 422: the output nests deeper than JSON can be printed (the host stack's bound). */
export class OutputNotSerializable extends Error {
  readonly code = 'OutputNotSerializable'
  readonly statusCode = 422
  constructor() {
    super('The mapping output nests too deeply to be serialized as JSON')
  }
}
