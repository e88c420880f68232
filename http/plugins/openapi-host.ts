// How the service's routes show in an OpenAPI document other than its own: a host app that
// registers @fastify/swagger and then this service as a plugin gets every route of the service in
// its document (swagger collects routes through an onRoute hook that reaches into child contexts).
// Left alone, the host's document names the service's schemas `def-0`…`def-6` (its default
// refResolver) and carries operationIds such as `map` and `health` that may clash with its own.
// This plugin, registered before the routes, gives each route a swagger transform of its own
// (`config.swaggerTransform`, which @fastify/swagger prefers to a document-wide one): in the
// service's own document it is that document's transform (http/plugins/openapi.ts); in any other it
// either hides the route (options.openapi.hideFromHost) or names the service's schemas as
// components `MapperService<Name>` and refers to them, and drops the `def-N` copies the host
// made of them. options.openapi.operationIdPrefix is put before every operationId here, so both
// documents show the same ids.
import type { SwaggerTransform } from '@fastify/swagger'
import type { FastifySchema, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { ErrorBodySchema } from '../schemas/error.js'
import { EnvelopeSchema, MappingDocumentSchema, MapRequestSchema, ValidateRequestSchema } from '../schemas/map.js'
import { ReportSchema } from '../schemas/report.js'
import { ownTransformOf } from './openapi.js'

/** The name prefix of the service's components in another document. */
export const HOST_COMPONENT_PREFIX = 'MapperService'

export interface OpenApiHostOptions {
  /** Hide every route of the service from any document but its own. */
  readonly hideFromHost: boolean
  /** Put before every operationId ('' none). */
  readonly operationIdPrefix: string
}

type Json = Record<string, unknown>
const isJson = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value)

/** The named schemas of the service (by `$id`), nested ones included: every subschema with an `$id` under these roots. */
function namedSchemas(roots: readonly unknown[]): Map<string, Json> {
  const named = new Map<string, Json>()
  const seen = new Set<unknown>()
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || seen.has(value)) return
    seen.add(value)
    if (isJson(value) && typeof value.$id === 'string' && !named.has(value.$id)) named.set(value.$id, value)
    for (const member of Object.values(value)) visit(member)
  }
  for (const root of roots) visit(root)
  return named
}

/** `ErrorBody#` or `ErrorBody`: the `$id` a reference to a whole named schema names. */
const referencedId = (ref: unknown): string | undefined => (typeof ref === 'string' ? /^([^#/][^#]*)#?$/.exec(ref)?.[1] : undefined)

/** The document being built, where its reusable schemas go, and how they are referred to. */
interface Target {
  readonly schemas: Json
  readonly base: string
  /** OpenAPI 3.0 and Swagger 2.0 have no `const`. */
  readonly constAsEnum: boolean
}

function targetOf(document: Json): Target {
  if (typeof document.swagger === 'string') {
    if (!isJson(document.definitions)) document.definitions = {}
    return { schemas: document.definitions as Json, base: '#/definitions/', constAsEnum: true }
  }
  if (!isJson(document.components)) document.components = {}
  const components = document.components as Json
  if (!isJson(components.schemas)) components.schemas = {}
  return { schemas: components.schemas as Json, base: '#/components/schemas/', constAsEnum: !String(document.openapi ?? '').startsWith('3.1') }
}

/**
 * The copies a host's swagger made of the service's named schemas (it collects the schemas of
 * every context, the service's included, and names them `def-N` with the `$id` as title, or by
 * the `$id` with a refResolver that does so): removed, as nothing refers to them once the
 * service's routes refer to its own components. A copy is known by its name or title and its
 * description, both the service's.
 */
function dropCopies(target: Target, named: ReadonlyMap<string, Json>): void {
  for (const [key, value] of Object.entries(target.schemas)) {
    if (!isJson(value)) continue
    const id = typeof value.title === 'string' && named.has(value.title) ? value.title : named.has(key) ? key : undefined
    if (id !== undefined && value.description === named.get(id)!.description) delete target.schemas[key]
  }
}

/**
 * `value` with every named schema of the service in it (a subschema with an `$id`, or a reference
 * to one) replaced by a reference to its component in `target`, which is added when missing.
 */
function withComponents(value: unknown, target: Target, named: ReadonlyMap<string, Json>): unknown {
  const componentRef = (id: string): string => {
    const name = `${HOST_COMPONENT_PREFIX}${id}`
    if (!Object.hasOwn(target.schemas, name)) {
      // Set before it is filled: a schema that refers to itself finds its name taken.
      target.schemas[name] = {}
      const { $id: _id, ...own } = named.get(id)!
      target.schemas[name] = rewrite(own, true)
    }
    return `${target.base}${name}`
  }
  const rewrite = (node: unknown, top = false): unknown => {
    if (Array.isArray(node)) return node.map((member) => rewrite(member))
    if (!isJson(node)) return node
    const id = !top && typeof node.$id === 'string' && named.has(node.$id) ? node.$id : undefined
    if (id !== undefined) return { $ref: componentRef(id) }
    const referenced = referencedId(node.$ref)
    if (referenced !== undefined && named.has(referenced)) {
      const { $ref: _ref, ...rest } = node
      return { ...rest, $ref: componentRef(referenced) }
    }
    const copy: Json = {}
    for (const [key, member] of Object.entries(node)) copy[key] = key === 'const' && target.constAsEnum ? member : rewrite(member)
    if (target.constAsEnum && Object.hasOwn(copy, 'const')) {
      copy.enum = [copy.const]
      delete copy.const
    }
    return copy
  }
  return rewrite(value)
}

export const openapiHostPlugin = fp<OpenApiHostOptions>(
  async (app, { hideFromHost, operationIdPrefix }) => {
    let named: Map<string, Json> | undefined
    /** The service's named schemas, found once the schemas of its context are all added (the first document built). */
    const namedOnce = (): Map<string, Json> =>
      (named ??= namedSchemas([ErrorBodySchema, ReportSchema, MapRequestSchema, ValidateRequestSchema, EnvelopeSchema, MappingDocumentSchema, ...Object.values(app.getSchemas())]))

    const transform: SwaggerTransform = (args) => {
      const { schema, url } = args
      const document = ((args as { openapiObject?: Json }).openapiObject ?? (args as { swaggerObject?: Json }).swaggerObject) as Json | undefined
      const own = ownTransformOf(document)
      if (own !== undefined) return own(args)
      if (document === undefined) return { url, schema }
      const target = targetOf(document)
      dropCopies(target, namedOnce())
      if (hideFromHost) return { url, schema: { ...schema, hide: true } }
      return { url, schema: withComponents(schema, target, namedOnce()) as FastifySchema }
    }

    app.addHook('onRoute', (route: RouteOptions) => {
      const schema = route.schema as (FastifySchema & { hide?: boolean; operationId?: string }) | undefined
      // Hidden everywhere already (/openapi.json, the method rules, /metrics, /playground).
      if (schema?.hide === true) return
      if (schema !== undefined && operationIdPrefix !== '' && typeof schema.operationId === 'string') {
        route.schema = { ...schema, operationId: `${operationIdPrefix}${schema.operationId}` }
      }
      route.config = { ...(route.config as object | undefined), swaggerTransform: transform }
    })
  },
  { name: 'mapper-openapi-host', fastify: '5.x' }
)
