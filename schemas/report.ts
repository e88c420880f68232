// The validation report (validation.md §1): `{ valid, errors, warnings }`.
import { Type, type Static } from '@sinclair/typebox'

export const DiagnosticSchema = Type.Object(
  {
    rule: Type.String({ description: 'Rule id, e.g. KW-transform-1.' }),
    message: Type.String(),
    pointer: Type.String({ description: 'RFC 6901 pointer into the submitted document.' }),
    descriptor: Type.Unknown({ description: 'The offending value found at the pointer.' }),
  }
)

export const ReportSchema = Type.Object(
  {
    valid: Type.Boolean(),
    errors: Type.Array(DiagnosticSchema),
    warnings: Type.Array(DiagnosticSchema),
  }
)

export type Report = Static<typeof ReportSchema>
