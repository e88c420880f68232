// POST /map and POST /validate bodies, and the envelope a mapping returns.
import { Type } from '@sinclair/typebox'

const MappingReference = Type.Union(
  [
    Type.String({ description: 'The id of a registered mapping.' }),
    Type.Object({}, { additionalProperties: true, description: 'A mapping document (explicit form).' }),
  ],
  { description: 'A registered id, or a mapping document object.' },
)

export const MapRequestSchema = Type.Object(
  {
    mapping: MappingReference,
    input: Type.Optional(Type.Unknown({ description: 'The input document; absent means every read is undefined.' })),
  }
)

export const ValidateRequestSchema = Type.Object({ mapping: MappingReference })

export const EnvelopeSchema = Type.Object(
  {
    valid: Type.Boolean({ description: 'False when evaluation reported problems.' }),
    errors: Type.Array(Type.Object({ message: Type.String() }, { additionalProperties: true })),
  },
  { additionalProperties: true, description: 'The mapped output keys, plus valid and errors.' },
)

