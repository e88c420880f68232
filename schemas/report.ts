// The validation report (validation.md §1): `{ valid, errors, warnings }`.
import { Type } from '@sinclair/typebox'

const DiagnosticSchema = Type.Object(
  {
    rule: Type.String({ description: 'Rule id, e.g. KW-transform-1.' }),
    message: Type.String(),
    pointer: Type.String({ description: 'RFC 6901 pointer into the submitted document.' }),
    descriptor: Type.Unknown({ description: 'The offending value found at the pointer.' }),
    differences: Type.Optional(
      Type.Array(
        Type.Object({
          pointer: Type.String({ description: 'Where in the envelope the example and the evaluation differ.' }),
          expected: Type.Optional(Type.Unknown({ description: 'What the example states there (absent: nothing).' })),
          actual: Type.Optional(Type.Unknown({ description: 'What evaluation gave there (absent: nothing).' })),
        }),
        { description: 'EXAMPLE-1: where the envelope differs from the failing example.' }
      )
    ),
  }
)

export const ReportSchema = Type.Object(
  {
    valid: Type.Boolean(),
    errors: Type.Array(DiagnosticSchema),
    warnings: Type.Array(DiagnosticSchema),
    expansion: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Static upper bound of the mapping levels one evaluation enters on any input (each `each` counted once); absent when references recurse.',
      })
    ),
  },
  { $id: 'ValidationReport', description: 'A validation report: valid, the errors and the warnings, each naming its rule and where it applies.' }
)
