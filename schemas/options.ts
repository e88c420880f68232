// The options object (http.md §8), validated at startup: an unknown key or a wrong type fails
// startup with the offending path named. One schema serves validation, types and documentation.
import { Type, type Static } from '@sinclair/typebox'

const OneOrMany = <T extends ReturnType<typeof Type.String>>(item: T) => Type.Union([item, Type.Array(item, { minItems: 1 })])

const ClaimValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()])

/** `{ <claim>: value | value[] }`: every listed claim must match (AND). */
export const ClaimsSchema = Type.Record(Type.String({ minLength: 1 }), Type.Union([ClaimValue, Type.Array(ClaimValue, { minItems: 1 })]), {
  description: 'Required token claims: every key must match; a value list means any of them.',
})

export const AuthOptionsSchema = Type.Object(
  {
    secret: Type.Optional(Type.String({ minLength: 1, description: 'Shared HMAC secret (default algorithm HS256).' })),
    publicKey: Type.Optional(Type.String({ minLength: 1, description: 'SPKI PEM public key (default algorithms RS256, ES256, EdDSA).' })),
    jwksUri: Type.Optional(Type.String({ minLength: 1, description: 'URL of a JSON Web Key Set; keys are fetched, cached and rotated by kid.' })),
    algorithm: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })], { description: 'Allowed signing algorithms (array or comma-separated).' })),
    issuer: Type.Optional(OneOrMany(Type.String({ minLength: 1 }))),
    audience: Type.Optional(OneOrMany(Type.String({ minLength: 1 }))),
    clockSkew: Type.Optional(Type.Number({ minimum: 0, maximum: 86400, description: 'Tolerated clock difference, in seconds.' })),
  },
  { additionalProperties: false },
)

export const CorsOptionsSchema = Type.Object(
  {
    origin: Type.Optional(OneOrMany(Type.String({ minLength: 1 }))),
    methods: Type.Optional(OneOrMany(Type.String({ minLength: 1 }))),
    headers: Type.Optional(OneOrMany(Type.String({ minLength: 1 }))),
  },
  { additionalProperties: false },
)

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const

export const LoggingOptionsSchema = Type.Object(
  {
    format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('pretty')])),
    level: Type.Optional(Type.Union(LOG_LEVELS.map((level) => Type.Literal(level)))),
    slowThreshold: Type.Optional(Type.Number({ minimum: 0, description: 'Milliseconds above which a request is logged as slow.' })),
  },
  { additionalProperties: false },
)

export const OptionsSchema = Type.Object(
  {
    auth: Type.Optional(AuthOptionsSchema),
    cors: Type.Optional(CorsOptionsSchema),
    logging: Type.Optional(LoggingOptionsSchema),
    errorDetail: Type.Optional(Type.Union([Type.Literal('minimal'), Type.Literal('full')])),
    maxBodyBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1073741824 })),
    requestIdPrefix: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._:-]{0,32}$' })),
    trustRequestId: Type.Optional(Type.Boolean()),
    map: Type.Optional(
      Type.Object(
        {
          invalidStatus: Type.Optional(Type.Integer({ minimum: 400, maximum: 499 })),
          claims: Type.Optional(ClaimsSchema),
          explicit: Type.Optional(
            Type.Union([Type.Boolean(), Type.Object({ claims: Type.Optional(ClaimsSchema) }, { additionalProperties: false })]),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    validate: Type.Optional(Type.Object({ claims: Type.Optional(ClaimsSchema) }, { additionalProperties: false })),
    health: Type.Optional(
      Type.Object(
        {
          mapping: Type.Optional(Type.String({ minLength: 1 })),
          timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 600000 })),
        },
        { additionalProperties: false },
      ),
    ),
    openapi: Type.Optional(Type.Boolean()),
    host: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
)

export type Options = Static<typeof OptionsSchema>
export type AuthOptions = Static<typeof AuthOptionsSchema>
export type CorsOptions = Static<typeof CorsOptionsSchema>
export type Claims = Static<typeof ClaimsSchema>
