// The engine behind the routes: one Mapper with the registered mappings and the extension surface,
// every registered mapping validated and its examples run before it is served (start-up and reload
// alike, EngineRegistry.open and replace). Compiled plans — registered
// ids and explicit documents alike — are cached by the Mapper itself; this service keeps none of its own.
import {
  describeFailure,
  enableLinearRegExp,
  inferOutput,
  Mapper,
  renderOutput,
  SharedBudget,
  type CompiledMapping,
  type Envelope,
  type ExampleResult,
  type Extensions,
  type Extra,
  type InferredOutput,
  type JsonSchema,
  type MappingDocument,
  type Prepared,
  type RunOptions,
  type ValidateOptions,
  type ValidationReport,
} from '../engine/index.js'
import type { MappingEntry } from '../sources/mappings.js'
import { placeInFile } from '../sources/positions.js'
import type { IsolationConfig } from '../config/resolve.js'
import { unknownMapping } from './errors.js'
import type { EngineSettings } from './evaluation.js'
import { IsolationPool, type ExtensionsSpec } from '../workers/isolation.js'
import { Slice } from '../engine/slices.js'

/** A registered mapping failed validation or one of its examples at startup; the message says which and why. */
export class RegistrationError extends Error {
  override readonly name = 'RegistrationError'
}

const registrationFailed = (error: unknown): RegistrationError => new RegistrationError(`registering mappings failed: ${(error as Error).message}`)

/** A registered mapping's inferred output (engine/output-schema.ts): as the engine infers it, and its JSON Schema document. */
export interface MappingOutput {
  readonly inferred: InferredOutput
  readonly schema: JsonSchema
  /** The schema's JSON text, as GET /mappings/{id}/schema answers it. */
  readonly text: string
}

/** The one document registering a set makes of its entries: a compound document of every member. */
const setDocument = (entries: readonly MappingEntry[]): object => ({ mappings: Object.fromEntries(entries.map((entry, i) => [String(i), entry.document])) })

/** The engine of a set: its budgets, its explicit documents' cache, the service's extensions. */
const newMapper = (extensions: Extensions, settings: EngineSettings): Mapper =>
  new Mapper({}, extensions, { limits: settings.limits.registered, cache: { bytes: settings.cacheBytes } })

export class EngineService {
  readonly mapper: Mapper
  readonly #warn: (message: string) => void
  /** The worker threads serving this set's isolated evaluations (options.isolation), when any. */
  isolation: IsolationPool | undefined = undefined
  readonly extensionNames: { initializers: string[]; transformers: string[]; plugins: string[] }
  private readonly entries: readonly MappingEntry[]

  /**
   * The set registered in this turn (a worker thread's copy of a served set). `registered`: a
   * Mapper of `entries` already registered (`inSlices`).
   */
  constructor(
    entries: readonly MappingEntry[],
    extensions: Extensions,
    warn: (message: string) => void,
    readonly settings: EngineSettings,
    registered?: Mapper
  ) {
    this.entries = entries
    // The service turns V8's linear-time RegExp engine on for its process (README "Embedding"
    // says so to hosts): patterns run on nothing else (engine/linear-regexp.ts).
    enableLinearRegExp()
    if (registered !== undefined) {
      this.mapper = registered
    } else {
      this.mapper = newMapper(extensions, settings)
      try {
        this.mapper.register(setDocument(entries))
      } catch (error) {
        throw registrationFailed(error)
      }
    }
    this.#warn = warn
    const { initializers, transformers, plugins } = this.mapper.extensions
    this.extensionNames = {
      initializers: Object.keys(initializers),
      transformers: Object.keys(transformers),
      plugins: Object.keys(plugins),
    }
  }

  /**
   * The set registered in slices of the event loop (engine `registerInSlices`): what start-up and
   * a reload build, so that a set holding one huge member (a hundred thousand pairings) never holds
   * the loop for more than a slice while the service answers. The same engine as the constructor's.
   */
  static async inSlices(
    entries: readonly MappingEntry[],
    extensions: Extensions,
    warn: (message: string) => void,
    settings: EngineSettings,
    slice: Slice
  ): Promise<EngineService> {
    enableLinearRegExp()
    const mapper = newMapper(extensions, settings)
    try {
      await mapper.registerInSlices(setDocument(entries), slice)
    } catch (error) {
      throw registrationFailed(error)
    }
    return new EngineService(entries, extensions, warn, settings, mapper)
  }

  #outputs: ReadonlyMap<string, MappingOutput> | undefined

  /**
   * The inferred output of every registered mapping, by id: computed once per served set (when it
   * is admitted, at start-up and at each reload), never per request.
   */
  get outputs(): ReadonlyMap<string, MappingOutput> {
    if (this.#outputs !== undefined) return this.#outputs
    const outputs = new Map<string, MappingOutput>()
    const infer = this.#inferrer()
    for (const id of Object.keys(this.mapper.mappings)) outputs.set(id, infer(id))
    return (this.#outputs = outputs)
  }

  /** Infer one registered mapping's output (bounded: engine/output-schema.ts MAX_INFERRED_PAIRINGS). */
  #inferrer(): (id: string) => MappingOutput {
    const registered = this.mapper.mappings
    const lookup = (id: string): unknown => (Object.hasOwn(registered, id) ? registered[id] : undefined)
    const { plugins } = this.mapper.extensions
    const options = { plugin: (name: string) => Object.hasOwn(plugins, name) }
    return (id) => {
      const inferred = inferOutput(id, lookup, options)
      const schema = renderOutput(inferred, id)
      return { inferred, schema, text: JSON.stringify(schema) }
    }
  }

  /** The outputs inferred in slices of the event loop (each mapping's bounded: MAX_INFERRED_PAIRINGS), as a reload validates them. */
  async #inferInSlices(slice: Slice): Promise<void> {
    const outputs = new Map<string, MappingOutput>()
    const infer = this.#inferrer()
    for (const id of Object.keys(this.mapper.mappings)) {
      if (slice.due()) await slice.next()
      outputs.set(id, infer(id))
    }
    this.#outputs = outputs
  }

  /** Validate one registered mapping in slices of the event loop (engine `validateInSlices`); RegistrationError when it is invalid. */
  async #validate(entry: MappingEntry, slice: Slice): Promise<void> {
    const report = await this.mapper.validateInSlices(entry.id, { strict: this.settings.strict }, slice)
    if (!report.valid) {
      // The first error in words, placed in its file where the source is one; then the report.
      const [first] = report.errors
      const place = first === undefined ? undefined : placeInFile(entry.source, entry.id, first.pointer)
      const firstError = first === undefined ? '' : ` first at ${place === undefined ? '' : `${place}: `}${first.rule} at ${first.pointer || '/'}: ${first.message};`
      throw new RegistrationError(`mapping "${entry.id}" from ${entry.source} is invalid:${firstError} the report: ${JSON.stringify(report)}`)
    }
    for (const warning of report.warnings) {
      this.#warn(`mapping "${entry.id}" from ${entry.source}: ${warning.rule} ${warning.message} at ${warning.pointer || '/'}`)
    }
  }

  /**
   * Admit the set for serving: every mapping validated, then the examples of every one run as
   * registered, then every output inferred, in slices of the event loop (`slice`: 8 ms, engine/slices.ts),
   * so a service that is already answering (a reload) goes on answering. The first invalid mapping
   * or failing example throws RegistrationError: one line naming the mapping, its file and the
   * reason or first difference. Start-up and reload alike (EngineRegistry); a worker thread's copy
   * of a served set skips it.
   */
  async admit(slice: Slice = new Slice()): Promise<void> {
    for (const entry of this.entries) await this.#validate(entry, slice)
    await this.#checkExamples(slice)
    await this.#inferInSlices(slice)
  }

  async #checkExamples(slice: Slice): Promise<void> {
    for (const entry of this.entries) {
      if (slice.due()) await slice.next()
      const failed = (await this.mapper.examples(entry.document, { registered: true })).find((result) => !result.pass)
      if (failed !== undefined) {
        throw new RegistrationError(`mapping "${entry.id}" from ${entry.source}: ${describeFailure(failed)} (at ${failed.pointer})`)
      }
    }
  }

  /**
   * The examples of an explicit document, evaluated as `/map` would evaluate it (nothing
   * registered) on one set of the explicit budgets that all of them share: a request may not buy
   * more work by carrying more examples. Past the budget the rest are not run (fewer results).
   */
  explicitExamples(document: object, extra: Readonly<Record<string, unknown>>, stdout: RunOptions['stdout']): Promise<ExampleResult[]> {
    return this.mapper.examples(document, { extra, budget: new SharedBudget(this.settings.limits.explicit), run: { stdout } })
  }

  /** Whether `id` is registered in this set (own ids only: never a prototype member). The one test of it. */
  has(id: string): boolean {
    return Object.hasOwn(this.mapper.mappings, id)
  }

  /** The registered, flattened documents of this set, by `$id` (frozen). */
  get mappings(): Readonly<Record<string, Readonly<MappingDocument>>> {
    return this.mapper.mappings
  }

  /** The compiled plan of a registered id, or undefined. */
  registered(id: string): CompiledMapping | undefined {
    return this.has(id) ? this.mapper.compile(id) : undefined
  }

  /**
   * One of the service's own documents (the health canary) compiled against this set: never a
   * caller's, which goes through `explicit` and its budgets.
   */
  compileOwn(document: object): CompiledMapping {
    return this.mapper.compile(document)
  }

  /** The validation report of a registered id, with its static expansion bound. */
  registeredReport(id: string): ValidationReport & { expansion?: number } {
    return this.mapper.report(id, { strict: this.settings.strict })
  }

  /** An explicit document validated (its budgets and stdout policy included) and, when valid, compiled. */
  explicit(document: object): Prepared {
    return this.mapper.prepare(document, this.#explicitOptions)
  }

  /** `explicit` for a document held as the JSON text it arrived in; `parsed` is that text parsed, when the caller has it (null: parse it on a cache miss). */
  explicitText(text: string, parsed: object | null): Prepared {
    return this.mapper.prepareText(text, this.#explicitOptions, parsed ?? undefined)
  }

  get #explicitOptions(): ValidateOptions {
    return { limits: this.settings.limits.explicit, stdout: this.settings.explicitStdout ? undefined : false, strict: this.settings.strict }
  }
}

/**
 * The engine being served, replaceable as a whole (hot reload). A set is registered, validated and
 * its examples run (EngineService.admit) into a complete EngineService before it is served, at
 * start-up (`open`) and at every reload (`replace`) alike, so a set that fails at reload leaves
 * the served one untouched; a request reads `current` once and keeps that engine (and its
 * compiled plans) to its end, whatever is swapped in meanwhile.
 */
export class EngineRegistry {
  #current!: EngineService

  private constructor(
    private readonly extensions: Extensions,
    private readonly warn: (message: string) => void,
    private readonly settings: EngineSettings,
    /** Isolation on: each served set gets worker threads with the same mappings and extensions. */
    private readonly isolation?: { readonly config: IsolationConfig; readonly extensions: ExtensionsSpec }
  ) {}

  /** A registry serving `entries`, once every one validates and its examples pass (RegistrationError otherwise). */
  static async open(
    entries: readonly MappingEntry[],
    extensions: Extensions,
    warn: (message: string) => void,
    settings: EngineSettings,
    isolation?: { readonly config: IsolationConfig; readonly extensions: ExtensionsSpec }
  ): Promise<EngineRegistry> {
    const registry = new EngineRegistry(extensions, warn, settings, isolation)
    registry.#current = await registry.#admit(entries)
    return registry
  }

  /**
   * A set registered, validated and its examples run, in slices of the event loop (one Slice for
   * the whole of it); its workers are stopped again if it fails.
   */
  async #admit(entries: readonly MappingEntry[]): Promise<EngineService> {
    const slice = new Slice()
    const service = await EngineService.inSlices(entries, this.extensions, this.warn, this.settings, slice)
    if (this.isolation !== undefined) {
      service.isolation = new IsolationPool(this.isolation.config, { entries, extensions: this.isolation.extensions, settings: this.settings }, this.warn)
    }
    try {
      await service.admit(slice)
    } catch (error) {
      await service.isolation?.destroy()
      throw error
    }
    return service
  }

  get current(): EngineService {
    return this.#current
  }

  /**
   * Serve `entries` from now on, once every one validates and its examples pass; throws
   * RegistrationError (and keeps the served set) otherwise.
   */
  async replace(entries: readonly MappingEntry[]): Promise<EngineService> {
    const next = await this.#admit(entries)
    const previous = this.#current
    this.#current = next
    // Requests that read the previous set finish on its workers; then they stop.
    previous.isolation?.retire()
    return next
  }

  /** Stop the served set's workers (the service is closing). */
  async close(): Promise<void> {
    await this.#current.isolation?.destroy()
  }
}

/**
 * The served mappings as a host reaches them from its own routes (`fastify.mapper`, app.ts): every
 * call reads the set served at that moment, so after a reload (a Reloader's `reload()`) the next
 * call evaluates the new version. Evaluation runs here, on the caller's event loop, on the budgets
 * of registered mappings (options.limits), with the service's extensions.
 */
export class MapperHandle {
  #registry: EngineRegistry | undefined

  /** Called once by the service plugin, when its registry serves its first set. */
  serve(registry: EngineRegistry): void {
    if (this.#registry !== undefined) throw new Error('this MapperHandle already serves a mapper-service')
    this.#registry = registry
  }

  get #current(): EngineService {
    if (this.#registry === undefined) throw new Error('mapper-service is not registered yet: await app.register(mapperService, …) (or app.ready()) before calling it')
    return this.#registry.current
  }

  /**
   * Evaluate the registered mapping `id` of the set served now against `input`; resolves with the
   * envelope (the output keys, `valid`, `errors`), as POST /map answers it. An id not served rejects
   * with the NotFound error /map answers (statusCode 404: a host's error handler answers 404); a
   * budget exceeded rejects with the engine's BudgetExceeded. `extra` is what the mapping's
   * extensions see beside the input (as in the engine's `map`).
   */
  async map(id: string, input: unknown, extra?: Extra): Promise<Envelope> {
    const plan = this.#current.registered(id)
    if (plan === undefined) throw unknownMapping(id)
    return plan.run(input, extra)
  }

  /** Whether `id` is served now. */
  has(id: string): boolean {
    return this.#current.has(id)
  }

  /** The registered, flattened documents served now, by `$id` (frozen; a reload replaces the whole record). */
  get mappings(): Readonly<Record<string, Readonly<MappingDocument>>> {
    return this.#current.mappings
  }
}
