// POST /map and POST /validate bodies, and the envelope a mapping returns.
import { Type } from '@sinclair/typebox'

/** A mapping document: named, so that generated clients have a type of that name; its grammar is the language's JSON Schema. */
export const MappingDocumentSchema = Type.Object(
  {},
  {
    $id: 'MappingDocument',
    additionalProperties: true,
    description: 'A mapping document (explicit form): a descriptor object, a bare pairing map or a compound document. Its full JSON Schema (draft 2020-12) is served at GET /schema/mapping.json.',
    externalDocs: { description: 'The JSON Schema of a mapping document', url: 'schema/mapping.json' },
  }
)

const MappingReference = Type.Union([Type.String({ description: 'The id of a registered mapping.' }), MappingDocumentSchema], {
  description: 'A registered id, or a mapping document object.',
})

export const MapRequestSchema = Type.Object(
  {
    mapping: MappingReference,
    input: Type.Optional(Type.Unknown({ description: 'The input document; absent means every read is undefined.' })),
    explain: Type.Optional(
      Type.Boolean({ description: 'Answer with the explain trace of the evaluation beside the envelope (where options.map.explain allows it).' })
    ),
  },
  // A misspelt member (`inptu`) would otherwise run the mapping on no input and answer 200.
  { $id: 'MapRequest', additionalProperties: false, description: 'What POST /map evaluates: a mapping and its input.' }
)

/** POST /map/{id}: the registered mapping is the path's; the body carries the input only. */
export const MapByIdRequestSchema = Type.Object(
  { input: Type.Optional(Type.Unknown({ description: 'The input document; absent means every read is undefined.' })) },
  { additionalProperties: false }
)

export const ValidateRequestSchema = Type.Object(
  { mapping: MappingReference },
  { $id: 'ValidateRequest', additionalProperties: false, description: 'What POST /validate judges: a registered id or a mapping document.' }
)

const JsonPreview = Type.Unknown({ description: 'A JSON preview of the value: the first members only when truncated is true.' })

const StageTraceSchema = Type.Object(
  {
    stage: Type.Union(['locate', 'dispatch', 'plugins', 'shape', 'validate', 'finalize'].map((stage) => Type.Literal(stage))),
    keyword: Type.Optional(Type.String({ description: 'The keyword or plugin of the step; the validators of one descriptor are one step, named together.' })),
    value: Type.Optional(JsonPreview),
    absent: Type.Optional(Type.Literal(true, { description: 'The value was undefined.' })),
    truncated: Type.Optional(Type.Literal(true)),
    errors: Type.Optional(Type.Array(Type.Object({ message: Type.String() }, { additionalProperties: true }), { description: 'Error objects the step appended.' })),
  },
  { additionalProperties: false, description: 'The value after one pipeline step.' }
)

const PairingTraceSchema = Type.Recursive(
  (PairingTrace) =>
    Type.Object(
      {
        target: Type.String({ description: "The pairing's left pointer, into its level's target." }),
        pointer: Type.Optional(Type.String({ description: "The pairing's place in its document, as a JSON Pointer." })),
        mapping: Type.Optional(Type.String({ description: 'The registered mapping the pairing belongs to.' })),
        element: Type.Optional(Type.Integer({ minimum: 0, description: 'The element of the enclosing each that this run mapped.' })),
        reads: Type.Array(Type.String(), { description: 'Input pointers read, from the input root.' }),
        stages: Type.Array(StageTraceSchema),
        branch: Type.Optional(
          Type.Union([
            Type.Object({ switch: Type.Union([Type.String(), Type.Null()]), key: Type.Optional(Type.String()) }, { additionalProperties: false }),
            Type.Object({ variant: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]) }, { additionalProperties: false }),
          ], { description: 'The switch case taken (null: none) and the key read, or the index of the variant written.' })
        ),
        plugins: Type.Optional(Type.Array(Type.Object({ name: Type.String(), ms: Type.Number({ minimum: 0 }) }, { additionalProperties: false }))),
        pairings: Type.Optional(Type.Array(PairingTrace, { description: 'The pairing runs of the levels its right side mapped.' })),
        omitted: Type.Optional(Type.Integer({ minimum: 1, description: 'Nested pairing runs left out of the trace.' })),
        written: Type.Boolean({ description: 'Whether a value was written at target.' }),
        value: Type.Optional(JsonPreview),
        truncated: Type.Optional(Type.Literal(true)),
      },
      { additionalProperties: false }
    ),
  { $id: 'PairingTrace', description: 'One run of one pairing.' }
)

export const ExplanationSchema = Type.Object(
  {
    pairings: Type.Array(PairingTraceSchema),
    truncated: Type.Boolean({ description: 'Pairing runs past the bounds were left out, or values were cut in their previews.' }),
  },
  { additionalProperties: false, description: 'The explain trace of the evaluation: present only when the request asked for it.' }
)

export const EnvelopeSchema = Type.Object(
  {
    valid: Type.Boolean({ description: 'False when evaluation reported problems.' }),
    errors: Type.Array(Type.Object({ message: Type.String() }, { additionalProperties: true })),
    explain: Type.Optional(ExplanationSchema),
  },
  { $id: 'MapResponse', additionalProperties: true, description: 'The envelope: the mapped output keys, plus valid and errors.' }
)

/** POST /map/stream's query: the mapping, and how many answers may be in flight. */
export const StreamQuerySchema = Type.Object(
  {
    mapping: Type.Optional(
      Type.String({ description: 'The id of a registered mapping. Absent: the first line of the body names it, or carries the document (explicit form): {"mapping": <id or document>}.' })
    ),
    concurrency: Type.Optional(
      Type.String({
        pattern: '^([1-9]|1[0-6])$',
        description: 'Lines evaluated at once when the mapping awaits (plugins), 1 to 16, default 4; answers keep the input order. A mapping that never awaits runs line by line.',
      })
    ),
  },
  { additionalProperties: false }
)
