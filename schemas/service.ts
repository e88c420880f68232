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
