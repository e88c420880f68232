// Response serializers compiled once per process, not once per route and status per server.
// Fastify compiles every response schema of every route with fast-json-stringify when a server is
// built: most of a build's time (about 650 of 830 ms here), and the same few schemas (the error
// body under every status of every route) compiled again and again. This builder gives Fastify the
// same functions it would compile (its own default compiler does the compiling), kept by what they
// depend on: the schema, the external schemas the context holds (addSchema) and the serializer
// options. A second build in one process (tests, a supervisor's restart in process) compiles
// nothing it has compiled before; the first compiles each distinct schema once.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

type BuildSerializer = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>
type Serializer = (data: unknown) => string

/** Distinct compiled serializers kept at most: the service's routes have a few dozen. */
const MAX_KEPT = 512

const compiled = new Map<string, Serializer>()
const defaultBuilder = SerializerSelector()

/** Fastify's default serializer builder, with the compiled functions kept (`schemaController.compilersFactory.buildSerializer`). */
export const cachedSerializerBuilder: BuildSerializer = (externalSchemas, serializerOpts) => {
  const compile = defaultBuilder(externalSchemas, serializerOpts)
  // What every serializer of this context depends on besides its own schema.
  const context = JSON.stringify([externalSchemas ?? null, serializerOpts ?? null])
  return (route) => {
    const key = `${context}\u0000${JSON.stringify(route.schema)}`
    let serializer = compiled.get(key)
    if (serializer === undefined) {
      serializer = compile(route) as Serializer
      if (compiled.size >= MAX_KEPT) compiled.delete(compiled.keys().next().value!)
      compiled.set(key, serializer)
    }
    return serializer
  }
}
