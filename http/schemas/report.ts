// The validation report (validation.md §1): `{ valid, errors, warnings }`, bounded (docs/engine.md,
// "The validation report"): a large descriptor is summarized, and past the report's bounds the
// diagnostics left out are counted (`truncated`, `omitted`).
import { Type } from '@sinclair/typebox'

const DiagnosticSchema = Type.Object(
  {
    rule: Type.String({ description: 'Rule id, e.g. KW-transform-1.' }),
    message: Type.String(),
    pointer: Type.String({ description: 'RFC 6901 pointer into the submitted document.' }),
    descriptor: Type.Unknown({
      description:
        'The offending value found at the pointer, as it is when its JSON text is at most 2048 bytes; a larger one is summarized as {"$omitted": "object" | "array" | "string", "bytes": <UTF-8 length of its JSON text>}.',
    }),
    differences: Type.Optional(
      Type.Array(
        Type.Object({
          pointer: Type.String({ description: 'Where in the envelope the example and the evaluation differ.' }),
          expected: Type.Optional(Type.Unknown({ description: 'What the example states there (absent: nothing).' })),
          actual: Type.Optional(Type.Unknown({ description: 'What evaluation gave there (absent: nothing).' })),
        }),
        { description: 'EXAMPLE-1: where the envelope differs from the failing example (the first 100; values as `descriptor` echoes them).' }
      )
    ),
    omittedDifferences: Type.Optional(Type.Integer({ minimum: 1, description: 'EXAMPLE-1: how many more differences there are than `differences` lists.' })),
  }
)

export const ReportSchema = Type.Object(
  {
    valid: Type.Boolean(),
    errors: Type.Array(DiagnosticSchema),
    warnings: Type.Array(DiagnosticSchema),
    truncated: Type.Optional(
      Type.Boolean({ description: 'True when the report reached its bounds (1000 diagnostics or 256 KiB of them): the diagnostics past them are counted in `omitted`, not listed. `valid` still counts every error.' })
    ),
    omitted: Type.Optional(Type.Integer({ minimum: 1, description: 'How many diagnostics (errors first, then warnings) the report does not list.' })),
    expansion: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Static upper bound of the mapping levels one evaluation enters on any input (each `each` counted once); absent when references recurse.',
      })
    ),
  },
  { $id: 'ValidationReport', description: 'A validation report: valid, the errors and the warnings, each naming its rule and where it applies.' }
)
