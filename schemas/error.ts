// The error body (http.md §3): code, message, the code's extra field, then requestId.
import { Type } from '@sinclair/typebox'
import { ReportSchema } from './report.js'

const ErrorBodySchema = Type.Object(
  {
    code: Type.String({ description: 'Stable error code, e.g. BadRequest, InvalidMappingDocument.' }),
    message: Type.String(),
    report: Type.Optional(ReportSchema),
    errors: Type.Optional(Type.Array(Type.Unknown(), { description: 'Only on ValidationError: the evaluation errors.' })),
    location: Type.Optional(Type.String({ description: 'Only on 422 RedirectRefused: the refused target.' })),
    requestId: Type.String({ description: 'The same id as the X-Request-Id header.' }),
  }
)

/** The error responses a route may give, each with the error body. */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorBodySchema> {
  return Object.fromEntries(statuses.map((status) => [status, ErrorBodySchema]))
}
