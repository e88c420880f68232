// The write namespace with a mapping store (README "Managed mappings"; without one it answers 404
// as it always did, and none of these routes exists): PUT /mappings/{id} writes a version,
// DELETE /mappings/{id} deletes, GET /mappings/{id} reads what is served under the id (with its
// ETag when the store holds it), GET /mappings/{id}/versions and /versions/{version} read the
// store's history. Behind authentication like every other route; writes need the claims of
// options.mappings.write.claims. A written document is validated first as POST /validate
// validates a submitted one (in a worker thread, its examples run, strict where validate.strict
// says), then decided by service/managed.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ServiceConfig } from '../../config/resolve.js'
import type { Evaluator } from '../../service/evaluator.js'
import { InvalidMappingDocument, NotFound, unknownMapping } from '../../service/errors.js'
import { JsonText, parseJsonText } from '../../service/json-text.js'
import { entityTag, matches, prepareDocument, type ManagedMappings, type WriteConditions } from '../../service/managed.js'
import type { Report } from '../../service/evaluation.js'
import { requireBody } from '../plugins/body.js'
import { errorResponses } from '../schemas/error.js'
import { MappingDocumentSchema } from '../schemas/map.js'
import { callerOf } from './caller.js'

const JSON_TYPE = 'application/json; charset=utf-8'

const IdParams = Type.Object({ id: Type.String({ minLength: 1, description: 'The $id of a mapping.' }) })

// `$id` is a pattern property: a property of that name would be taken for the schema's own `$id`
// by the OpenAPI generator's reference resolver.
const WrittenSchema = Type.Object(
  { version: Type.Integer({ minimum: 1, description: 'The version now stored: the ETag of the mapping, quoted.' }) },
  { patternProperties: { '^\\$id$': Type.String({ description: 'The id written.' }) }, required: ['$id', 'version'], additionalProperties: false, description: 'The id written (`$id`) and the version a write stored.' }
)

const VersionSchema = Type.Object(
  {
    version: Type.Integer({ minimum: 1 }),
    created: Type.String({ format: 'date-time', description: 'When it was written (UTC).' }),
    subject: Type.Union([Type.String(), Type.Null()], { description: 'The `sub` of the token that wrote it; null with authentication off.' }),
    digest: Type.Union([Type.String(), Type.Null()], { description: 'SHA-256 of the document\'s JSON text, hex; null for a deletion.' }),
    deleted: Type.Boolean({ description: 'True for the version that deleted the mapping.' }),
  },
  { additionalProperties: false }
)

/** The conditions of a write, from its headers and the caller's token. */
function conditionsOf(headers: Record<string, string | string[] | undefined>, identity: Record<string, unknown> | null): WriteConditions {
  const header = (name: string): string | undefined => {
    const value = headers[name]
    return Array.isArray(value) ? value.join(', ') : value
  }
  return { ifMatch: header('if-match'), ifNoneMatch: header('if-none-match'), subject: typeof identity?.sub === 'string' ? identity.sub : null }
}

/** A body that kept large members as text (http/plugins/body.ts), parsed whole: a stored document is one object. */
function wholeDocument(body: Record<string, unknown>, text: string): Record<string, unknown> {
  return Object.values(body).some((member) => member instanceof JsonText) ? (parseJsonText(text) as Record<string, unknown>) : body
}

interface ManagedRoutesOptions {
  readonly managed: ManagedMappings
  readonly evaluator: Evaluator
  readonly write: ServiceConfig['mappings']['write']
}

export const managedRoutes: FastifyPluginAsyncTypebox<ManagedRoutesOptions> = async (app, { managed, evaluator, write }) => {
  const writeClaims = { for: 'writing mappings', required: write.claims }

  app.get(
    '/mappings/:id',
    {
      schema: {
        operationId: 'getMapping',
        summary: 'One served mapping',
        description: 'A mapping of the store as it was written, with its version as ETag (If-None-Match answers 304 when it is unchanged); a mapping of the files as GET /mappings lists it.',
        tags: ['managed'],
        params: IdParams,
        response: { 200: MappingDocumentSchema, 304: { type: 'null', description: 'Not modified: the version named by If-None-Match is the current one.' }, ...errorResponses(401, 404, 500) },
      },
    },
    async (request, reply) => {
      const { id } = request.params
      const stored = managed.current(id)
      if (stored === undefined) {
        const mappings = app.engine.mappings
        if (!Object.hasOwn(mappings, id)) throw unknownMapping(id)
        return mappings[id] as Record<string, unknown>
      }
      reply.header('etag', entityTag(stored.version))
      // If-None-Match compares weakly (RFC 9110 §13.1.2), as a write's does.
      const ifNoneMatch = request.headers['if-none-match']
      if (ifNoneMatch !== undefined && matches(ifNoneMatch, stored.version, false)) {
        return reply.code(304).send()
      }
      // The text as written: a string payload is sent as it is.
      return reply.type(JSON_TYPE).send(stored.text as unknown as Record<string, unknown>)
    }
  )

  app.put(
    '/mappings/:id',
    {
      preValidation: requireBody,
      config: { claims: writeClaims },
      schema: {
        operationId: 'putMapping',
        summary: 'Write a managed mapping',
        description:
          'Stores the document as the next version of the mapping and serves it, on every replica, once it validates as POST /validate would (examples run) and the set it makes admits every mapping. Its $id, when present, must be the id of the path (a compound document: its last member\'s). If-Match and If-None-Match: * make the write conditional.',
        tags: ['managed'],
        params: IdParams,
        body: MappingDocumentSchema,
        response: { 200: WrittenSchema, 201: WrittenSchema, ...errorResponses(400, 401, 403, 409, 412, 413, 422, 500, 503) },
      },
    },
    async (request, reply) => {
      const { id } = request.params
      const prepared = prepareDocument(id, wholeDocument(request.body, request.bodyText))
      const conditions = conditionsOf(request.headers, request.identity)
      const engine = app.engine
      const report = await evaluator.validate(engine, prepared.document, prepared.text, true, callerOf(request, reply))
      const parsed = typeof report === 'string' ? (JSON.parse(report) as Report) : report
      if (!parsed.valid) throw new InvalidMappingDocument(parsed)
      const { created, version } = await managed.put(prepared, conditions)
      reply.header('etag', entityTag(version))
      if (created) reply.header('location', `${app.prefix}/mappings/${encodeURIComponent(id)}`)
      // Printed here, `$id` first (the serializer puts a pattern property after the others).
      return reply.code(created ? 201 : 200).type(JSON_TYPE).send(JSON.stringify({ $id: id, version }) as unknown as { version: number })
    }
  )

  app.delete(
    '/mappings/:id',
    {
      config: { claims: writeClaims },
      schema: {
        operationId: 'deleteMapping',
        summary: 'Delete a managed mapping',
        description: 'Stops serving it on every replica; refused while another mapping uses it. If-Match makes the deletion conditional.',
        tags: ['managed'],
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...errorResponses(401, 403, 404, 409, 412, 500, 503) },
      },
    },
    async (request, reply) => {
      await managed.delete(request.params.id, conditionsOf(request.headers, request.identity))
      return reply.code(204).send()
    }
  )

  app.get(
    '/mappings/:id/versions',
    {
      schema: {
        operationId: 'listMappingVersions',
        summary: 'The kept versions of a managed mapping, newest first',
        tags: ['managed'],
        params: IdParams,
        response: { 200: Type.Array(VersionSchema), ...errorResponses(401, 404, 500, 503) },
      },
    },
    async (request) => {
      const versions = await managed.versions(request.params.id)
      if (versions.length === 0) throw new NotFound(`No stored mapping "${request.params.id}"`)
      return versions
    }
  )

  app.get(
    '/mappings/:id/versions/:version',
    {
      schema: {
        operationId: 'getMappingVersion',
        summary: 'One kept version of a managed mapping, as it was written',
        tags: ['managed'],
        params: Type.Object({ id: IdParams.properties.id, version: Type.String({ pattern: '^[1-9][0-9]{0,8}$', description: 'A version number.' }) }),
        response: { 200: MappingDocumentSchema, ...errorResponses(400, 401, 404, 500, 503) },
      },
    },
    async (request, reply) => {
      const { id, version } = request.params
      const stored = await managed.version(id, Number(version))
      if (stored === undefined) throw new NotFound(`No kept version ${version} of "${id}"`)
      reply.header('etag', entityTag(stored.version))
      return reply.type(JSON_TYPE).send(stored.text as unknown as Record<string, unknown>)
    }
  )
}
