// The service's errors (http.md §3): every one is created with its answer — the status
// (`statusCode`), the code of the error body (`responseCode`) and the members the body carries
// beside code and message (`responseFields`) — and `shapeError` reads that answer back, for the
// HTTP error handler, the stream route's error lines, the worker threads and the CLI alike. The
// engine's errors keep their own codes; ENGINE_STATUSES is the one table of their statuses. No
// Fastify import: Fastify's own errors are recognised by their codes.
import createError, { type FastifyError } from '@fastify/error'
import { BudgetExceeded, type ValidationReport } from '../engine/index.js'

/** An error that declares its answer; the service's own, an extension's refusal, the engine's document errors. */
export interface DeclaredAnswer {
  readonly statusCode: number
  readonly responseCode: string
  readonly responseFields?: unknown
  readonly message: string
}

/** A catalogue error class: made by @fastify/error (a `code` upper-cased, `statusCode`), its body code declared on the prototype. */
function define(code: string, status: number, message = '%s') {
  const defined = createError(code, message, status)
  Object.defineProperty(defined.prototype, 'responseCode', { value: code })
  return defined as unknown as new (...args: Array<string | number | { cause?: unknown }>) => FastifyError & DeclaredAnswer
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
/** A write to the mapping store whose If-Match or If-None-Match the stored version does not meet. */
export const PreconditionFailed = define('PreconditionFailed', 412)
/** A write to an id that MAPPINGS (the files) defines: those change with the files, never over HTTP. */
export const ReadOnlyMapping = define('ReadOnlyMapping', 409)
/** A write whose document defines an id that another stored document defines. */
export const MappingConflict = define('MappingConflict', 409)
/** A write of a new mapping when the store holds options.store.maxMappings. */
export const StoreFull = define('StoreFull', 409)
/** The mapping store cannot be reached: writes wait for it, reads and evaluations go on from memory. */
export const StoreUnavailable = define('StoreUnavailable', 503)
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
export class InvalidMappingDocument extends Error implements DeclaredAnswer {
  readonly code = 'InvalidMappingDocument'
  readonly responseCode = 'InvalidMappingDocument'
  readonly statusCode = 422
  constructor(readonly report: ValidationReport) {
    super(MESSAGES.invalidDocument)
  }

  get responseFields(): Record<string, unknown> {
    return { report: this.report }
  }
}

/** 409: a write or deletion in the mapping store would break the mappings named (`dependents`), which use what it changes. */
export class MappingInUse extends Error implements DeclaredAnswer {
  readonly code = 'MappingInUse'
  readonly responseCode = 'MappingInUse'
  readonly statusCode = 409
  constructor(
    message: string,
    readonly dependents: readonly string[]
  ) {
    super(message)
  }

  get responseFields(): Record<string, unknown> {
    return { dependents: this.dependents }
  }
}

/** A `valid: false` result promoted to `map.invalidStatus`, carrying the evaluation errors. */
export class ValidationError extends Error implements DeclaredAnswer {
  readonly code = 'ValidationError'
  readonly responseCode = 'ValidationError'
  constructor(
    readonly statusCode: number,
    readonly errors: unknown[]
  ) {
    super(MESSAGES.invalidResult)
  }

  get responseFields(): Record<string, unknown> {
    return { errors: this.errors }
  }
}

/** 422: the output nests deeper than JSON can be printed (the host stack's bound). */
export class OutputNotSerializable extends Error implements DeclaredAnswer {
  readonly code = 'OutputNotSerializable'
  readonly responseCode = 'OutputNotSerializable'
  readonly statusCode = 422
  constructor() {
    super('The mapping output nests too deeply to be serialized as JSON')
  }
}

/**
 * `map.invalidStatus` (http.md §4): a `valid: false` result becomes a ValidationError answered
 * with that status; without it the result is answered 200 as it is. The one place /map and
 * /map/stream decide it.
 */
export function refuseInvalid(outcome: { readonly valid: boolean; readonly errors: readonly unknown[] }, invalidStatus: number | undefined): void {
  if (!outcome.valid && invalidStatus !== undefined) throw new ValidationError(invalidStatus, [...outcome.errors])
}

/** The status of each engine error, by its code: the engine knows no HTTP. */
export const ENGINE_STATUSES: Readonly<Record<string, number>> = {
  BudgetExceeded: 422,
  EvaluationError: 422,
  MappingDocumentError: 422,
}

/** An error shaped for an answer: status, body code, message and the body's other members. */
export interface Shaped {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly extra: Record<string, unknown>
}

/** The members of the error body that stay the shaper's whatever an error declares. */
const BODY_MEMBERS = new Set(['code', 'message', 'requestId'])

function declaresAnswer(value: unknown): value is DeclaredAnswer {
  const candidate = value as Partial<DeclaredAnswer>
  return value instanceof Error && typeof candidate.responseCode === 'string' && candidate.responseCode !== '' && Number.isInteger(candidate.statusCode) && candidate.statusCode! >= 400 && candidate.statusCode! <= 599
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

/** The members a declared answer adds to the body (not code, message or requestId). */
function fieldsOf(fields: unknown): Record<string, unknown> {
  const extra: Record<string, unknown> = {}
  if (fields !== null && typeof fields === 'object') {
    for (const [key, value] of Object.entries(fields)) if (!BODY_MEMBERS.has(key)) extra[key] = value
  }
  return extra
}

/** The fields a BudgetExceeded body carries beside code and message. */
export function budgetFields(error: BudgetExceeded): Record<string, unknown> {
  const { code: _code, ...fields } = error.toJSON()
  return fields
}

/** What a failed body schema check looks like (Fastify's `validation` member). */
interface SchemaFailure {
  readonly instancePath: string
  readonly message?: string
}

/**
 * The 400 message of a body that failed its schema, named after the failing field: the property
 * the first error points into. A body that is not an object holds none of its fields: it is
 * answered as its first required one. The field's catalogued message, or one naming it.
 */
function schemaFailure(validation: readonly SchemaFailure[], bodySchema: unknown): string {
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

/** Fastify's own errors, by their code, as the catalogue's. */
function frameworkError(code: unknown, maxBodyBytes: number): DeclaredAnswer | undefined {
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLarge(maxBodyBytes)
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new URITooLong()
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new BadRequest(MESSAGES.invalidJson)
    default:
      return undefined
  }
}

const answered = (declared: DeclaredAnswer): Shaped => ({ status: declared.statusCode, code: declared.responseCode, message: String(declared.message), extra: fieldsOf(declared.responseFields) })

/**
 * Anything thrown, as its answer: what the error (or a cause) declares; an engine error by its
 * code (ENGINE_STATUSES); Fastify's own errors as the catalogue's; anything else 500
 * InternalError, its message kept for the log (`shownMessage` hides it from callers).
 * `maxBodyBytes` names the limit in a 413; `bodySchema` is the route's, for a schema failure's message.
 */
export function shapeError(error: unknown, maxBodyBytes: number, bodySchema?: unknown): Shaped {
  if (error instanceof BudgetExceeded) return { status: ENGINE_STATUSES.BudgetExceeded!, code: error.code, message: error.message, extra: budgetFields(error) }
  if (declaresAnswer(error)) return answered(error)
  const e = error as { code?: unknown; message?: unknown; validation?: readonly SchemaFailure[] } | null | undefined
  // An engine error answers as itself, whatever caused it.
  if (error instanceof Error && typeof e!.code === 'string' && Object.hasOwn(ENGINE_STATUSES, e!.code)) return { status: ENGINE_STATUSES[e!.code]!, code: e!.code, message: error.message, extra: {} }
  const declared = declaredAnswer(error)
  if (declared !== undefined) return answered(declared)
  if (e?.validation !== undefined) return answered(new BadRequest(schemaFailure(e.validation, bodySchema)))
  const framework = frameworkError(e?.code, maxBodyBytes)
  if (framework !== undefined) return answered(framework)
  return answered(new InternalError(String(e?.message ?? error)))
}

/** The message a caller is shown: a 5xx's detail only with `errorDetail: full` (the log keeps it always). */
export function shownMessage(shaped: Shaped, errorDetail: 'minimal' | 'full'): string {
  return shaped.status >= 500 && errorDetail !== 'full' ? MESSAGES.hidden : shaped.message
}
