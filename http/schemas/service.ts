// Bodies of the service endpoints: health, the registry listing and the extension surface.
import { Type } from '@sinclair/typebox'

export const HealthSchema = Type.Object({ status: Type.Literal('ok') })

export const CanaryHealthSchema = Type.Object(
  {
    status: Type.Literal('ok'),
    mapping: Type.String({ description: 'The canary that ran: a registered id, or echo.' }),
    durationMs: Type.Number(),
  }
)

export const MappingsSchema = Type.Record(Type.String(), Type.Object({}, { additionalProperties: true }), {
  description: 'Registered mapping documents ($extend resolved), keyed by $id.',
})

export const ExtensionsSchema = Type.Object(
  {
    initializers: Type.Array(Type.String()),
    transformers: Type.Array(Type.String()),
    plugins: Type.Array(Type.String()),
  }
)

/** GET /schema/mapping.json: the JSON Schema of a mapping document, for editors. */
export const MappingSchemaDocumentSchema = Type.Object(
  {},
  {
    additionalProperties: true,
    description: 'The JSON Schema (draft 2020-12) of a mapping document, generated from the keyword catalogue: point an editor at it for completion and checks.',
  }
)

export const OutputSchemaDocumentSchema = Type.Object(
  {},
  {
    additionalProperties: true,
    description: 'The JSON Schema (draft 2020-12) of what the mapping outputs when the result is valid (the envelope without valid and errors), inferred from its document; for an array input, its members\' outputs under items.',
  }
)
