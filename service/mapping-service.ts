// The engine behind the routes: one Mapper with the registered mappings and the extension surface,
// every registered mapping validated and its examples run before it is served (start-up and reload
// alike, ServedSet.open and replace). Compiled plans — registered
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
import { startIsolation, type ExtensionsSpec, type Isolation } from '../workers/isolation.js'
import { Slice } from '../engine/slices.js'

/** A registered mapping failed validation or one of its examples at startup; the message says which and why. */
export class RegistrationError extends Error {
  override readonly name = 'RegistrationError'
}

/** A mapping of a set that cannot be served: the error admitting the set would throw, and the validation report when it is invalid. */
export interface AdmissionFailure {
  readonly entry: MappingEntry
  readonly error: RegistrationError
  readonly report?: ValidationReport
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
  isolation: Isolation | undefined = undefined
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

  /**
   * Why one registered mapping cannot be served, validated in slices of the event loop (engine
   * `validateInSlices`): a RegistrationError naming its first error, with its report; undefined
   * when it is valid (its warnings said to `warn`).
   */
  async #invalid(entry: MappingEntry, slice: Slice): Promise<AdmissionFailure | undefined> {
    const report = await this.mapper.validateInSlices(entry.id, { strict: this.settings.strict }, slice)
    if (report.valid) {
      for (const warning of report.warnings) {
        this.#warn(`mapping "${entry.id}" from ${entry.source}: ${warning.rule} ${warning.message} at ${warning.pointer || '/'}`)
      }
      return undefined
    }
    // The first error in words, placed in its file where the source is one; then the report.
    const [first] = report.errors
    const place = first === undefined ? undefined : placeInFile(entry.source, entry.id, first.pointer)
    const firstError = first === undefined ? '' : ` first at ${place === undefined ? '' : `${place}: `}${first.rule} at ${first.pointer || '/'}: ${first.message};`
    return { entry, report, error: new RegistrationError(`mapping "${entry.id}" from ${entry.source} is invalid:${firstError} the report: ${JSON.stringify(report)}`) }
  }

  /**
   * Admit the set for serving: every mapping validated, then the examples of every one run as
   * registered, then every output inferred, in slices of the event loop (`slice`: 8 ms, engine/slices.ts),
   * so a service that is already answering (a reload) goes on answering. The first invalid mapping
   * or failing example throws RegistrationError: one line naming the mapping, its file and the
   * reason or first difference. Start-up and reload alike (ServedSet); a worker thread's copy
   * of a served set skips it. With `all`, every mapping that fails is found, and they are returned
   * instead (a write to the mapping store names every mapping it would break); none: admitted.
   */
  async admit(slice: Slice = new Slice(), all = false): Promise<AdmissionFailure[]> {
    const failures: AdmissionFailure[] = []
    const refused = new Set<MappingEntry>()
    const failed = (failure: AdmissionFailure): void => {
      if (!all) throw failure.error
      failures.push(failure)
      refused.add(failure.entry)
    }
    for (const entry of this.entries) {
      const failure = await this.#invalid(entry, slice)
      if (failure !== undefined) failed(failure)
    }
    for (const entry of this.entries) {
      if (refused.has(entry)) continue
      if (slice.due()) await slice.next()
      const example = (await this.mapper.examples(entry.document, { registered: true })).find((result) => !result.pass)
      if (example !== undefined) failed({ entry, error: new RegistrationError(`mapping "${entry.id}" from ${entry.source}: ${describeFailure(example)} (at ${example.pointer})`) })
    }
    if (failures.length === 0) await this.#inferInSlices(slice)
    return failures
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

/** The mapping store's part of a served set (service/managed.ts): its mappings as of one of its revisions. */
export interface StoredSet {
  /** The store's revision they were read at; -1: nothing read from a store. */
  readonly revision: number
  readonly entries: readonly MappingEntry[]
}

const NOTHING_STORED: StoredSet = { revision: -1, entries: [] }

/**
 * The engine being served, replaceable as a whole (hot reload, a write to the mapping store). A
 * set is registered, validated and its examples run (EngineService.admit) into a complete
 * EngineService before it is served, at start-up (`open`), at every reload (`replace`) and at
 * every change of the store alike, so a set that fails leaves the served one untouched; a request
 * reads `current` once and keeps that engine (and its compiled plans) to its end, whatever is
 * swapped in meanwhile. A served set is the mappings of the files (MAPPINGS, the `mappings`
 * option) and those of the store: a reload changes the first part and keeps the second, a store
 * change the reverse, one change at a time (`exclusive`).
 */
export class ServedSet {
  #current!: EngineService
  #files: readonly MappingEntry[] = []
  #stored: StoredSet = NOTHING_STORED
  /** Changes of the served set, one at a time. */
  #queue: Promise<unknown> = Promise.resolve()

  private constructor(
    private readonly extensions: Extensions,
    private readonly warn: (message: string) => void,
    private readonly settings: EngineSettings,
    /** Isolation on: each served set gets worker threads with the same mappings and extensions. */
    private readonly isolation?: { readonly config: IsolationConfig; readonly extensions: ExtensionsSpec }
  ) {}

  /** A served set of `files` and `stored`, once every one validates and its examples pass (RegistrationError otherwise). */
  static async open(
    files: readonly MappingEntry[],
    extensions: Extensions,
    warn: (message: string) => void,
    settings: EngineSettings,
    isolation?: { readonly config: IsolationConfig; readonly extensions: ExtensionsSpec },
    stored: StoredSet = NOTHING_STORED
  ): Promise<ServedSet> {
    const served = new ServedSet(extensions, warn, settings, isolation)
    const { service } = await served.#admit(served.#served(files, stored), false)
    served.install(service!, files, stored)
    return served
  }

  /** The mappings of the files in the served set. */
  get files(): readonly MappingEntry[] {
    return this.#files
  }

  /** The mapping store's part of the served set. */
  get stored(): StoredSet {
    return this.#stored
  }

  /**
   * The entries of a set: the files', then the store's. A stored id that a file defines too is
   * left out with a warning: the files are the deployment's own, and a write to the store can
   * never take one of their ids (service/managed.ts), but a file added by a reload can take one
   * the store holds.
   */
  #served(files: readonly MappingEntry[], stored: StoredSet): MappingEntry[] {
    if (stored.entries.length === 0) return [...files]
    const fileIds = new Set(files.map((entry) => entry.id))
    const kept = stored.entries.filter((entry) => {
      if (!fileIds.has(entry.id)) return true
      this.warn(`mapping "${entry.id}" of the mapping store (${entry.source}) is not served: ${files.find((file) => file.id === entry.id)!.source} defines the same $id`)
      return false
    })
    return [...files, ...kept]
  }

  /**
   * A set registered, validated and its examples run, in slices of the event loop (one Slice for
   * the whole of it); its workers are stopped again if it fails. With `all`, every mapping that
   * fails is returned (and no service) rather than the first thrown.
   */
  async #admit(entries: readonly MappingEntry[], all: boolean): Promise<{ service?: EngineService; failures: AdmissionFailure[] }> {
    const slice = new Slice()
    const service = await EngineService.inSlices(entries, this.extensions, this.warn, this.settings, slice)
    if (this.isolation !== undefined) {
      service.isolation = startIsolation(this.isolation.config, { entries, extensions: this.isolation.extensions, settings: this.settings }, this.warn)
    }
    let failures: AdmissionFailure[]
    try {
      failures = await service.admit(slice, all)
    } catch (error) {
      await service.isolation?.destroy()
      throw error
    }
    if (failures.length === 0) return { service, failures }
    await service.isolation?.destroy()
    return { failures }
  }

  get current(): EngineService {
    return this.#current
  }

  /** Run `work` with no other change of the served set before it ends (`candidate` and `install` are called within it). */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work)
    this.#queue = run.catch(() => {})
    return run
  }

  /**
   * The set of `files` and `stored` admitted, not served: every mapping that fails instead, when
   * any does (registration itself failing throws RegistrationError). Within `exclusive`.
   */
  candidate(files: readonly MappingEntry[], stored: StoredSet): Promise<{ service?: EngineService; failures: AdmissionFailure[] }> {
    return this.#admit(this.#served(files, stored), true)
  }

  /** Serve `service`, admitted from `files` and `stored`, from now on. Within `exclusive`. */
  install(service: EngineService, files: readonly MappingEntry[], stored: StoredSet): void {
    const previous = this.#current as EngineService | undefined
    this.#current = service
    this.#files = files
    this.#stored = stored
    // Requests that read the previous set finish on its workers; then they stop.
    previous?.isolation?.retire()
  }

  /**
   * Serve `files` with the store's part from now on, once every one validates and its examples
   * pass; throws RegistrationError (and keeps the served set) otherwise.
   */
  replace(files: readonly MappingEntry[]): Promise<EngineService> {
    return this.exclusive(async () => {
      const { service } = await this.#admit(this.#served(files, this.#stored), false)
      this.install(service!, files, this.#stored)
      return service!
    })
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
  #served: ServedSet | undefined

  /** Called once by the service plugin, when it serves its first set. */
  serve(served: ServedSet): void {
    if (this.#served !== undefined) throw new Error('this MapperHandle already serves a mapper-service')
    this.#served = served
  }

  get #current(): EngineService {
    if (this.#served === undefined) throw new Error('mapper-service is not registered yet: await app.register(mapperService, …) (or app.ready()) before calling it')
    return this.#served.current
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
