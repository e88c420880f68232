// One typed operation per registered mapping in the OpenAPI document (issue 19 item 5): POST
// /map/{id} is documented not once but as `/map/<id>` for each mapping served, operationId
// `map<Id>` (`mapCitation`), whose 200 answer is the mapping's inferred envelope (its output, a
// component named after it, plus valid and errors; an array input's outputs under items; or an
// invalid result's valid and errors). Swagger builds the routes' document once; this adds the
// mappings of one served set to it, so the document follows a reload (http/plugins/openapi.ts keeps
// one per set, built on first request after it is admitted).
import { renderAlt, type Alt, type JsonSchema, type RefOf } from '../engine/index.js'
import type { MappingOutput } from '../service/mapping-service.js'

interface Operation {
  operationId?: string
  summary?: string
  description?: string
  parameters?: Array<{ in?: string; name?: string }>
  responses?: Record<string, unknown>
  [member: string]: unknown
}

interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation>>
  components?: { schemas?: Record<string, unknown>; [member: string]: unknown }
  [member: string]: unknown
}

/** `citation` → `Citation`, `mapping:Person` → `MappingPerson`: an identifier, never empty. */
export function pascalName(id: string): string {
  const words = id.split(/[^A-Za-z0-9]+/).filter((word) => word !== '')
  const name = words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')
  if (name === '') return 'Mapping'
  return /^[0-9]/.test(name) ? `Mapping${name}` : name
}

/** A name not yet taken, the base or the base with the first free number after it. */
function unique(base: string, taken: Set<string>): string {
  let name = base
  for (let n = 2; taken.has(name); n++) name = `${base}${n}`
  taken.add(name)
  return name
}

/** The envelope's own members, which replace output keys of the same names (CTX-3). */
const ENVELOPE_KEYS = ['valid', 'errors']

const ERRORS = {
  type: 'array',
  description: 'The error objects of the evaluation (each has a message).',
  items: { type: 'object', properties: { message: { type: 'string' } } },
}
const VALID = {
  type: 'object',
  properties: { valid: { const: true, description: 'The result is valid.' }, errors: { type: 'array', maxItems: 0 } },
  required: ['valid', 'errors'],
}
const INVALID = {
  type: 'object',
  description: 'An invalid result: no output keys, the errors that made it so.',
  properties: { valid: { const: false }, errors: { ...ERRORS, minItems: 1 } },
  required: ['valid', 'errors'],
}

/** An object alternative without the envelope's own members (the envelope replaces them). */
function withoutEnvelopeKeys(alt: Alt): Alt {
  if (alt.kind !== 'object' || !ENVELOPE_KEYS.some((key) => alt.properties.has(key))) return alt
  return { kind: 'object', properties: new Map([...alt.properties].filter(([key]) => !ENVELOPE_KEYS.includes(key))) }
}

/**
 * The document with one operation per mapping of `outputs` in place of the generic POST
 * `<prefix>/map/{id}`, and the components their answers name. `base` is left as it is.
 * `operationIdPrefix` (options.openapi) goes before each operation's id, as before the routes' own.
 */
export function withMappingOperations(base: OpenApiDocument, outputs: ReadonlyMap<string, MappingOutput>, operationIdPrefix = ''): OpenApiDocument {
  const paths = { ...base.paths }
  const genericPath = Object.keys(paths).find((path) => path.endsWith('/map/{id}'))
  const generic = genericPath === undefined ? undefined : paths[genericPath]?.post
  if (genericPath === undefined || generic === undefined) return base
  delete paths[genericPath]
  const prefix = genericPath.slice(0, -'/map/{id}'.length)

  const schemas: Record<string, unknown> = { ...base.components?.schemas }
  const takenSchemas = new Set(Object.keys(schemas))
  const takenOperations = new Set(Object.values(paths).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId ?? '')))

  // Each mapping's output is a component named after it; a mapping that recurses is referred to by it.
  const names = new Map<string, string>()
  for (const id of outputs.keys()) names.set(id, unique(pascalName(id), takenSchemas))
  const placeholder: RefOf = (id) => `#mapping:${id}`
  const refOf: RefOf = (id) => `#/components/schemas/${defNames.get(id) ?? names.get(id)}`
  // A recursive level that is not its mapping's whole output (a template at its top) gets a component of its own.
  const defNames = new Map<string, string>()
  const defs = new Map<string, Alt>()
  for (const output of outputs.values()) {
    for (const [id, level] of output.inferred.defs) {
      if (defs.has(id)) continue
      defs.set(id, level)
      const own = outputs.get(id)
      const same = own !== undefined && JSON.stringify(renderAlt(level, placeholder)) === JSON.stringify(renderAlt(withoutEnvelopeKeys(own.inferred.output), placeholder))
      if (!same) defNames.set(id, unique(`${pascalName(id)}Pairings`, takenSchemas))
    }
  }
  for (const [id, name] of defNames) schemas[name] = renderAlt(defs.get(id)!, refOf)

  for (const [id, output] of outputs) {
    // An id that is a path of its own (`stream`: POST /map/stream) is reached through POST /map only.
    const path = `${prefix}/map/${encodeURIComponent(id)}`
    if (Object.hasOwn(paths, path)) continue
    const name = names.get(id)!
    const shown = withoutEnvelopeKeys(output.inferred.output)
    schemas[name] = { ...renderAlt(shown, refOf), description: `What the mapping ${JSON.stringify(id)} outputs for an input that is not an array, when the result is valid.` }
    const item: JsonSchema =
      JSON.stringify(renderAlt(output.inferred.item, placeholder)) === JSON.stringify(renderAlt(shown, placeholder)) ? { $ref: `#/components/schemas/${name}` } : renderAlt(output.inferred.item, refOf)
    const envelope = {
      description: `The envelope of ${JSON.stringify(id)}: a valid result's output with valid and errors; for an array input, the outputs of its members under items; or an invalid result.`,
      anyOf: [
        { allOf: [{ $ref: `#/components/schemas/${name}` }, VALID] },
        { allOf: [{ type: 'object', properties: { items: { type: 'array', items: item } }, required: ['items'] }, VALID] },
        INVALID,
      ],
    }
    const operation: Operation = {
      ...generic,
      operationId: unique(`${operationIdPrefix}map${name}`, takenOperations),
      summary: `Evaluate the mapping ${JSON.stringify(id)}`,
      description: `The registered mapping ${JSON.stringify(id)} evaluated against the input; answers its envelope, typed from the output schema inferred from the mapping (GET ${prefix}/mappings/{id}/schema).`,
      responses: {
        ...generic.responses,
        200: { description: 'The envelope: the output keys, valid and errors.', content: { 'application/json': { schema: envelope } } },
      },
    }
    const parameters = generic.parameters?.filter((parameter) => !(parameter.in === 'path' && parameter.name === 'id'))
    if (parameters === undefined || parameters.length === 0) delete operation.parameters
    else operation.parameters = parameters
    paths[path] = { post: operation }
  }
  return { ...base, paths, components: { ...base.components, schemas } }
}
