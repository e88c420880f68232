// The options object (http.md §8), validated at startup: an unknown key or a wrong type fails
// startup with the offending path named. One schema serves validation, types and documentation.
import { Type, type Static } from '@sinclair/typebox'

const OneOrMany = <T extends ReturnType<typeof Type.String>>(item: T) => Type.Union([item, Type.Array(item, { minItems: 1 })])

const ClaimValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()])

/** `{ <claim>: value | value[] }`: every listed claim must match (AND). */
const ClaimsSchema = Type.Record(Type.String({ minLength: 1 }), Type.Union([ClaimValue, Type.Array(ClaimValue, { minItems: 1 })]), {
  description: 'Required token claims: every key must match; a value list means any of them.',
})

const AuthOptionsSchema = Type.Object(
  {
    secret: Type.Optional(Type.String({ minLength: 1, description: 'Shared HMAC secret (default algorithm HS256).' })),
    publicKey: Type.Optional(Type.String({ minLength: 1, description: 'SPKI PEM public key (default algorithms RS256, ES256, EdDSA).' })),
    jwksUri: Type.Optional(Type.String({ minLength: 1, description: 'URL of a JSON Web Key Set; keys are fetched, cached and rotated by kid.' })),
    algorithm: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })], { description: 'Allowed signing algorithms (array or comma-separated).' })),
    issuer: Type.Optional(OneOrMany(Type.String({ minLength: 1 }))),
    audience: Type.Optional(OneOrMany(Type.String({ minLength: 1 }))),
    clockSkew: Type.Optional(Type.Number({ minimum: 0, maximum: 86400, description: 'Tolerated clock difference, in seconds.' })),
    requireExp: Type.Optional(Type.Boolean({ description: 'Refuse tokens without an exp claim (default true: a token that never expires stays valid for ever once leaked).' })),
    maxAge: Type.Optional(
      Type.Union([Type.Number(), Type.String()], {
        description: 'Refuse tokens whose iat is older than this, and tokens without iat: whole seconds, or a duration such as "90s", "15m", "1h", "7d" (at most 365 days). Default: no limit.',
      })
    ),
  },
  { additionalProperties: false }
)

const CorsOptionsSchema = Type.Object(
  {
    origin: Type.Optional(OneOrMany(Type.String({ minLength: 1 }))),
    methods: Type.Optional(OneOrMany(Type.String({ minLength: 1 }))),
    headers: Type.Optional(OneOrMany(Type.String({ minLength: 1 }))),
  },
  { additionalProperties: false }
)

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const

const LoggingOptionsSchema = Type.Object(
  {
    format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('pretty')])),
    level: Type.Optional(Type.Union(LOG_LEVELS.map((level) => Type.Literal(level)))),
    slowThreshold: Type.Optional(Type.Number({ minimum: 0, description: 'Milliseconds above which a request is logged as slow.' })),
  },
  { additionalProperties: false }
)

const Milliseconds = (minimum: number, description: string) => Type.Integer({ minimum, maximum: 3600000, description })

/**
 * The standalone server's connection limits (buildServer, the `mapper-service` command). The plugin
 * form serves on its host's server and never reads this block: the host sets its own.
 */
const ServerOptionsSchema = Type.Object(
  {
    requestTimeout: Type.Optional(Milliseconds(100, 'Milliseconds to receive a whole request, headers and body, from its first byte; then 408 and the connection is closed (default 30000).')),
    headersTimeout: Type.Optional(Milliseconds(100, 'Milliseconds to receive the request line and headers; then 408 and the connection is closed. At most requestTimeout (default 10000, or requestTimeout when that is smaller).')),
    keepAliveTimeout: Type.Optional(Milliseconds(1, 'Milliseconds an idle keep-alive connection is kept open after a response (default 5000). Behind a pooling load balancer, set it above the balancer\'s idle timeout.')),
    connectionTimeout: Type.Optional(Milliseconds(0, 'Milliseconds a connection may stay silent in both directions, while a response is computed or written included, before it is closed; 0 never (default 60000).')),
    maxConnections: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000000, description: 'Connections open at once; one more is closed as it arrives, without a response (default 10000).' })),
    maxHeaderSize: Type.Optional(Type.Integer({ minimum: 1024, maximum: 1048576, description: 'Bytes of request line and headers accepted; a request with more is answered 431 (default 16384).' })),
    loadTimeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 600000, description: 'Milliseconds a MAPPINGS or EXTENSIONS module may take to load, top-level await included; then startup fails (default 10000).' })),
    trustProxy: Type.Optional(
      Type.Union([Type.Boolean(), Type.Integer({ minimum: 1, maximum: 100 }), Type.String({ minLength: 1 })], {
        description:
          'Which proxies in front of the service are believed about the client address (X-Forwarded-For): false none (default), true any, a hop count, or a comma-separated list of proxy addresses and CIDR ranges. The client address keys rate limiting and is logged.',
      })
    ),
  },
  { additionalProperties: false }
)

/** One set of evaluation budgets (engine/budget.ts): every key optional, missing ones take the defaults. */
const budget = (description: string, maximum = Number.MAX_SAFE_INTEGER) => Type.Optional(Type.Integer({ minimum: 1, maximum, description }))
const budgetFields = {
  steps: budget('Work steps of one evaluation: pairings and pipeline stages run, elements scanned or copied.'),
  outputValues: budget('Values one evaluation may write into its output.'),
  outputBytes: budget('Estimated serialized bytes of one output.'),
  builtBytes: budget('Bytes of text and structure the keywords of one evaluation build (as, template, regexp_i, concat, switch keys, stdout), counted as they are built.'),
  outputDepth: budget('Nesting of the output and of any value the engine serializes (as: json, stdout), checked before it is printed.', 2000),
  fanOut: budget('Mapping levels one evaluation may enter (each element, mapping and reference expansion); also the static expansion bound of BUDGET-1.'),
  depth: budget('Nested evaluation contexts (recursion through a self-referencing mapping).', 500),
  timeMs: budget('Wall-clock milliseconds of one evaluation, plugin awaits included.'),
  pluginCalls: budget('Plugin calls (upstream requests) of one evaluation.'),
  patternInput: budget('The longest string a `pattern` is matched against.'),
}

const LimitsOptionsSchema = Type.Object(
  {
    ...budgetFields,
    explicit: Type.Optional(
      Type.Object(budgetFields, { additionalProperties: false, description: 'Budgets of explicit (caller-supplied) documents; tighter defaults.' })
    ),
  },
  { additionalProperties: false, description: 'Per-evaluation budgets of registered mappings; `explicit` holds those of explicit documents.' }
)

const UnderPressureOptionsSchema = Type.Object(
  {
    maxEventLoopDelay: Type.Optional(Type.Integer({ minimum: 0, description: 'Milliseconds of event-loop delay above which requests get 503 (0: not checked).' })),
    maxHeapUsedBytes: Type.Optional(Type.Integer({ minimum: 0, description: 'Heap bytes in use above which requests get 503 (0: not checked).' })),
    maxRssBytes: Type.Optional(Type.Integer({ minimum: 0, description: 'Resident set bytes above which requests get 503 (0: not checked).' })),
    maxEventLoopUtilization: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Event-loop utilization (0–1) above which requests get 503 (0: not checked).' })),
    retryAfter: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, description: 'Seconds sent in Retry-After with the 503.' })),
    sampleInterval: Type.Optional(Type.Integer({ minimum: 5, maximum: 60000, description: 'Milliseconds between two samples.' })),
  },
  { additionalProperties: false }
)

const ReloadOptionsSchema = Type.Object(
  {
    watch: Type.Optional(Type.Boolean({ description: 'Reload when the MAPPINGS directory (or the directory of a MAPPINGS document file) changes, ConfigMap updates included; SIGHUP reloads either way (default true). Standalone server only.' })),
    debounce: Type.Optional(Type.Integer({ minimum: 10, maximum: 60000, description: 'Milliseconds of quiet after a change before the reload starts, so a burst of writes reloads once (default 300).' })),
    maxBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1073741824, description: 'The most bytes of mapping document files a reload reads; a larger set is refused with one log line and the served set kept (default 16 MiB).' })),
  },
  { additionalProperties: false, description: 'Hot reload of the mappings (standalone server).' }
)

const IsolationOptionsSchema = Type.Object(
  {
    explicit: Type.Optional(Type.Boolean({ description: 'Run explicit documents and explain traces in worker threads under hard time and memory limits (default true when the explicit form is on).' })),
    registered: Type.Optional(Type.Boolean({ description: 'Run registered mappings in worker threads too (default false: the deployment wrote them; they run inline, the fast path).' })),
    validate: Type.Optional(Type.Boolean({ description: 'Run POST /validate of a submitted document (its validation and examples) in worker threads, whatever explicit says (default true; the threads start on first use).' })),
    threads: Type.Optional(Type.Integer({ minimum: 1, maximum: 256, description: 'Worker threads, started on demand (default: the cores available).' })),
    memoryMb: Type.Optional(Type.Integer({ minimum: 64, maximum: 65536, description: 'Each worker\'s heap, in MiB: an evaluation beyond it is stopped and answered 422 BudgetExceeded (budget "memory"); default 256.' })),
    graceMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600000, description: 'Milliseconds past the evaluation\'s timeMs budget after which its worker is terminated and the answer is 422 BudgetExceeded (budget "timeMs"); default 1000.' })),
    queue: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000000, description: 'Isolated tasks that may wait for a worker beyond those running; one more is answered 503 Unavailable at once (default 1024).' })),
    queueMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 600000, description: 'Milliseconds an isolated task may wait for a worker to begin it before it is answered 503 Unavailable (default 10000).' })),
  },
  { additionalProperties: false, description: 'Worker threads for caller-authored work.' }
)

const StreamOptionsSchema = Type.Object(
  {
    idleTimeout: Type.Optional(
      Milliseconds(100, 'Milliseconds a POST /map/stream may go without answering a line (blank lines and bytes that end no line answer nothing); then it is ended with a last error line (408 StreamIdle) and its connection closed. Default: server.requestTimeout (30000).')
    ),
    maxDurationMs: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 604800000, description: 'Milliseconds a POST /map/stream may run at all; then it is ended with a last error line (408 StreamTooLong) and its connection closed. 0: no limit (default 3600000, an hour).' })
    ),
    maxStreams: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000000, description: 'POST /map/stream requests open at once in this process; one more is answered 503 Unavailable with Retry-After (default 64).' })),
    maxStreamsPerClient: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000000, description: 'POST /map/stream requests open at once from one client address (the forwarded one behind a trusted proxy, server.trustProxy); one more is answered 503 Unavailable with Retry-After (default 8).' })
    ),
  },
  { additionalProperties: false, description: 'Limits of POST /map/stream.' }
)

const RateLimitOptionsSchema = Type.Object(
  {
    max: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000000000, description: 'Requests one caller may make per time window (default 100).' })),
    timeWindow: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400000, description: 'Milliseconds of the time window (default 60000).' })),
    redis: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description:
          'A redis:// or rediss:// URL (credentials and database number allowed, e.g. redis://:secret@redis:6379/0): the counters live there, shared by every replica, instead of in each process. Needs the optional package ioredis. Redis unreachable: requests pass without a limit (fail open). Default: in memory, per process.',
      })
    ),
  },
  { additionalProperties: false }
)

const OpenApiOptionsSchema = Type.Object(
  {
    serve: Type.Optional(Type.Boolean({ description: 'Serve the service\'s own document at GET /openapi.json (default true).' })),
    hideFromHost: Type.Optional(
      Type.Boolean({
        description:
          'Leave the service\'s routes, and its schemas, out of every other @fastify/swagger document in the process: a host app\'s, when the service is registered as a plugin (default false: they appear there, their schemas as components named MapperService<Name>). Its own document keeps them.',
      })
    ),
    operationIdPrefix: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z_][A-Za-z0-9_]{0,31}$',
        description: 'Put before every operationId of the service (map → <prefix>map, mapCitation → <prefix>mapCitation), in its own document and a host app\'s alike, so they cannot clash with the host\'s (default none).',
      })
    ),
  },
  { additionalProperties: false }
)

const MetricsOptionsSchema = Type.Object(
  {
    path: Type.Optional(Type.String({ pattern: '^/[A-Za-z0-9._~/-]*$', description: 'Path of the Prometheus text endpoint (default /metrics).' })),
    claims: Type.Optional(ClaimsSchema),
  },
  { additionalProperties: false }
)

const StoreOptionsSchema = Type.Object(
  {
    url: Type.String({
      pattern: '^(postgres|postgresql|file):',
      description: 'Where managed mappings are kept: postgres://user:password@host:port/database (PostgreSQL, for several replicas; needs the package pg) or file:///absolute/path (a directory on local disk, for one instance). The STORE_URL environment variable sets it too.',
    }),
    keepVersions: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Versions kept per mapping, the current one included; older ones are removed as new ones are written (default 20).' })),
    maxMappings: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000, description: 'Most mappings the store may hold; a write of another one is refused 409 (default 1000).' })),
    resyncMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 3600000, description: 'PostgreSQL: how often each replica reads the store again, the safety net behind LISTEN/NOTIFY (default 30000).' })),
  },
  { additionalProperties: false, description: 'Managed mappings: PUT and DELETE /mappings/{id} write them, every replica serves them (README "Managed mappings"). Without a store the write namespace answers 404.' }
)

const MappingsOptionsSchema = Type.Object(
  {
    write: Type.Optional(
      Type.Object(
        { claims: Type.Optional(ClaimsSchema) },
        { additionalProperties: false, description: 'Who may write managed mappings (PUT and DELETE /mappings/{id}, with options.store): callers whose token has these claims (with options.auth; without claims, every authenticated caller).' }
      )
    ),
  },
  { additionalProperties: false }
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
            Type.Union([
              Type.Boolean(),
              Type.Object(
                {
                  claims: Type.Optional(ClaimsSchema),
                  stdout: Type.Optional(Type.Boolean({ description: 'Let explicit documents use the `stdout` keyword (printed to the request log at debug level).' })),
                  cacheBytes: Type.Optional(Type.Integer({ minimum: 0, maximum: 1073741824, description: 'Total document bytes the compiled explicit-document cache may hold (0: no cache).' })),
                },
                { additionalProperties: false }
              ),
            ])
          ),
          explain: Type.Optional(
            Type.Union(
              [
                Type.Boolean(),
                Type.Object({ claims: Type.Optional(ClaimsSchema) }, { additionalProperties: false }),
              ],
              {
                description:
                  'Who may ask POST /map for an explain trace ("explain": true). Default: whoever may use the explicit form (none when it is off, else with its claims); true: every caller of /map; false: nobody; { claims }: callers with these claims.',
              }
            )
          ),
        },
        { additionalProperties: false }
      )
    ),
    validate: Type.Optional(
      Type.Object(
        {
          claims: Type.Optional(ClaimsSchema),
          strict: Type.Optional(
            Type.Boolean({
              description:
                'Strict mode: what validation reports as a warning is an error (a key that is neither a keyword nor a registered extension, KW-2; a pairing written to the envelope\'s valid or errors, CTX-3). Registered mappings with one do not start, POST /validate reports them invalid, and /map refuses an explicit document with one (default false).',
            })
          ),
        },
        { additionalProperties: false }
      )
    ),
    health: Type.Optional(
      Type.Object(
        {
          mapping: Type.Optional(Type.String({ minLength: 1 })),
          timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 600000 })),
        },
        { additionalProperties: false }
      )
    ),
    openapi: Type.Optional(
      Type.Union([Type.Boolean(), OpenApiOptionsSchema], {
        description: 'The OpenAPI document: true (default) serves GET /openapi.json, false does not; an object also says how the routes show in a host app\'s own @fastify/swagger document (plugin form).',
      })
    ),
    playground: Type.Optional(
      Type.Boolean({ description: 'Serve the authoring playground at GET /playground: a static page that validates and maps through this server (default false).' })
    ),
    metrics: Type.Optional(
      Type.Union([Type.Boolean(), MetricsOptionsSchema], { description: 'The Prometheus endpoint: true (default) serves GET /metrics, false none, an object sets its path and the claims a token needs to read it (with options.auth; without claims the endpoint is public, like /health).' })
    ),
    limits: Type.Optional(LimitsOptionsSchema),
    underPressure: Type.Optional(Type.Union([Type.Literal(false), UnderPressureOptionsSchema])),
    host: Type.Optional(Type.String({ minLength: 1 })),
    server: Type.Optional(ServerOptionsSchema),
    reload: Type.Optional(ReloadOptionsSchema),
    isolation: Type.Optional(Type.Union([Type.Literal(false), IsolationOptionsSchema], { description: 'Worker threads for caller-authored work; false: everything runs inline.' })),
    helperProcess: Type.Optional(
      Type.Boolean({
        description:
          "Run heavy worker-thread work (isolated tasks of a request of 64 KiB or more, and the parsing of upstream HTML and XML) in one child process at the lowest scheduling priority, started on first use, stopped when idle and ended with the service, so that V8's own threads working for it give way to the event loop too (default true; false: every worker thread runs in the service's process).",
      })
    ),
    stream: Type.Optional(StreamOptionsSchema),
    store: Type.Optional(StoreOptionsSchema),
    mappings: Type.Optional(MappingsOptionsSchema),
    rateLimit: Type.Optional(
      Type.Union([Type.Boolean(), RateLimitOptionsSchema], {
        description: 'Requests per caller and time window: by verified token subject when auth is on, else by client IP; `true` takes the defaults (default false: off).',
      })
    ),
  },
  { additionalProperties: false }
)

export type Options = Static<typeof OptionsSchema>
export type Claims = Static<typeof ClaimsSchema>
export type StoreOptions = Static<typeof StoreOptionsSchema>
/** options.auth as the schema admits it: the auth plugin checks the rest and resolves it (http/plugins/auth/options.ts). */
export type AuthOptions = Static<typeof AuthOptionsSchema>
/** options.rateLimit's object form: the rate-limit plugin resolves it (http/plugins/rate-limit/options.ts). */
export type RateLimitOptions = Static<typeof RateLimitOptionsSchema>
