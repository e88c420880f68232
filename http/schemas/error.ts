// The error body (http.md §3): code, message, the code's extra field, then requestId. One named
// schema, `ErrorBody` (registered with addSchema, so the OpenAPI document names it in components),
// referenced by every error response of every route.
import { Type } from '@sinclair/typebox'
import { ReportSchema } from './report.js'

/** Every code the service itself answers with; an extension may declare its own (a 4xx). */
export const ERROR_CODES = [
  'BadRequest',
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'MethodNotAllowed',
  'RequestTimeout',
  'StreamIdle',
  'StreamTooLong',
  'PayloadTooLarge',
  'URITooLong',
  'InvalidMappingDocument',
  'ValidationError',
  'BudgetExceeded',
  'EvaluationError',
  'OutputNotSerializable',
  'RedirectRefused',
  'DestinationRefused',
  'ProtocolRefused',
  'InvalidUrl',
  'TooManyRequests',
  'HeadersTooLarge',
  'InternalError',
  'Unavailable',
  'PreconditionFailed',
  'ReadOnlyMapping',
  'MappingConflict',
  'MappingInUse',
  'StoreFull',
  'StoreUnavailable',
] as const

export const ErrorBodySchema = Type.Object(
  {
    code: Type.Union([Type.Union(ERROR_CODES.map((code) => Type.Literal(code))), Type.String({ description: 'An extension\'s own code (its error declared responseCode).' })], {
      description: 'Stable error code: one of the service\'s, or an extension\'s own.',
    }),
    message: Type.String(),
    report: Type.Optional(ReportSchema),
    errors: Type.Optional(Type.Array(Type.Unknown(), { description: 'Only on ValidationError: the evaluation errors.' })),
    location: Type.Optional(Type.String({ description: 'Only on 422 RedirectRefused: the refused target.' })),
    dependents: Type.Optional(Type.Array(Type.String(), { description: 'Only on 409 MappingInUse: the mappings the write or deletion would break.' })),
    requestId: Type.String({ description: 'The same id as the X-Request-Id header.' }),
  },
  { $id: 'ErrorBody', additionalProperties: true, description: 'The error body: code, message, the code\'s own fields (a budget\'s name and limit, a report…), requestId.' }
)

/** What each error status means, as the OpenAPI document describes it. */
export const ERROR_STATUSES: Readonly<Record<number, string>> = {
  400: 'Malformed request: the body is not JSON, nests too deep, or does not match the schema.',
  401: 'Authentication is on and the bearer token is missing or does not verify.',
  403: 'The token lacks the claims this operation needs, or the explicit form is not enabled.',
  404: 'No mapping is registered under the id given.',
  405: 'The path does not answer this method (see the Allow header).',
  408: 'The request was not received in time.',
  409: 'A managed mapping cannot be written: the files define its id, another stored document does, the store is full, or mappings that use it would break.',
  412: 'The stored version does not meet If-Match or If-None-Match.',
  413: 'The body is over the size limit.',
  422: 'The mapping document is invalid, a budget was exceeded, or the evaluation failed.',
  429: 'Rate limited: too many requests from this caller.',
  431: 'The request headers are over the size limit.',
  500: 'An unexpected failure (an upstream\'s included).',
  503: 'The service is overloaded or shutting down, the health canary failed, or the mapping store cannot be reached.',
}

/** The error responses a route may give, each with the error body and its meaning. */
export function errorResponses(...statuses: number[]): Record<number, { $ref: string; description: string }> {
  return errorResponsesOf(statuses)
}

/** `errorResponses` of a list of statuses. */
export function errorResponsesOf(statuses: readonly number[]): Record<number, { $ref: string; description: string }> {
  return Object.fromEntries(statuses.map((status) => [status, { $ref: 'ErrorBody#', description: ERROR_STATUSES[status] ?? 'An error.' }]))
}
