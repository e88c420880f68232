// The engine instance (language.md §6 and Part 2 "API"): a registry of compiled mappings, the
// extension registries, and top-level invocation with array wrapping and the envelope.
import { resolveLimits, type Limits } from './budget.js'
import { Compiler } from './compile.js'
import { documentForm, entryOf, idOf, MAX_DOCUMENT_DEPTH } from './document.js'
import { DocumentError } from './errors.js'
import { isKeyword } from './keywords/index.js'
import { type Plan, type RegistryView, type ResolvedExtensions } from './context.js'
import { mappingEntries, type MappingsInput } from './mappings-input.js'
import { flattenBatch } from './keywords/registry/ancestry.js'
import { LayeredRegistry, MappingRegistry, type RegisteredMapping } from './registry.js'
import type { EngineOptions, Envelope, Extensions, MappingDocument } from './types.js'
import { CompiledMapping, type Explained, type Extra, type RunOptions } from './compiled-mapping.js'
import { contentKey, ContentCache, textKey } from './content-cache.js'
import { runExamples, type ExampleOptions, type ExampleResult } from './examples.js'
import { expanding, staticExpansion, stdoutAt } from './validation/expansion.js'
import { validating, withMembers, type Reachability, type ValidationReport } from './validation/validate.js'
import { complete, inSlices, type Slicing, type Steps } from './steps.js'
import { frozenCopy, isObject } from './values.js'

const defaultStdout = (text: string): void => {
  console.log(text)
}

export function resolveExtensions(extensions: Extensions | undefined): ResolvedExtensions {
  const pick = <T>(kind: string, registry: Record<string, T> | undefined): Readonly<Record<string, T>> => {
    const out: Record<string, T> = {}
    if (registry === undefined || registry === null) return Object.freeze(out)
    if (typeof registry !== 'object') throw new TypeError(`${kind} must be an object of named functions`)
    for (const [name, fn] of Object.entries(registry)) {
      if (typeof fn !== 'function') throw new TypeError(`${kind} "${name}" must be a function`)
      Object.defineProperty(out, name, { value: fn, enumerable: true })
    }
    return Object.freeze(out)
  }
  const plugins = pick('plugins', extensions?.plugins)
  for (const name of Object.keys(plugins)) {
    if (isKeyword(name)) {
      // A plugin named like a keyword could never be told apart from it (EXT-1, decision 6).
      throw new Error(`Plugin "${name}" cannot be registered: "${name}" is a keyword of the mapping language`)
    }
  }
  return {
    initializers: pick('initializers', extensions?.initializers),
    transformers: pick('transformers', extensions?.transformers),
    plugins,
  }
}

/** A frozen private copy of a caller's document, refused when nested deeper than the engine allows. */
export function admitDocument<T>(document: T): T {
  return complete(admitting(document))
}

const tooDeep = (): DocumentError => new DocumentError(`mapping nesting exceeds the maximum depth of ${MAX_DOCUMENT_DEPTH}`)

/** `admitDocument` step by step (engine/steps.ts). */
function admitting<T>(document: T): Steps<T> {
  return frozenCopy(document, MAX_DOCUMENT_DEPTH, tooDeep)
}

/** How `validate` and `prepare` judge a document beyond the language's rules. */
export interface ValidateOptions {
  /** Budgets over the instance's; their `fanOut` bounds the static expansion (BUDGET-1). */
  limits?: Limits
  /** `false`: the document may not use `stdout` (KW-stdout-1). */
  stdout?: boolean
  /**
   * `true`: what validation reports as a warning is an error (strict mode): a key that is neither
   * a keyword nor a registered extension (KW-2, usually a misspelt keyword), a pairing written to
   * the envelope's `valid` or `errors` (CTX-3).
   */
  strict?: boolean
}

/** A caller's document validated and, when valid, compiled (`Mapper.prepare`). */
export interface Prepared {
  /** The instance-level report, with the static expansion bound where there is one. */
  readonly report: ValidationReport & { expansion?: number }
  /** The document compiled, when its report is valid. */
  readonly compiled: CompiledMapping | null
  /** True when the result came from the prepared-document cache (validated and compiled earlier). */
  readonly cached: boolean
}

/** How many prepared documents stay cached by default (the byte bound usually binds first). */
const PREPARED_ENTRIES = 256

/** Bytes of document text the prepared cache holds by default: a compiled document holds 70–140 times its text. */
const PREPARED_BYTES = 1024 * 1024

/** A compound document's member, compiled on first lookup. */
class LocalMember implements RegisteredMapping {
  private compiled: Plan | undefined

  constructor(
    private readonly compiler: Compiler,
    readonly document: Readonly<MappingDocument>,
    private readonly id: string
  ) {}

  get plan(): Plan {
    if (this.compiled === undefined) {
      // A member flattened from `$extend` is a new object: its merged pairings stand in its own $id.
      this.compiler.locate(this.document, this.id)
      this.compiled = this.compiler.plan(this.document)
    }
    return this.compiled
  }
}

export interface MapperDocuments {
  /**
   * The mappings to register, in any of the service's forms (MappingsInput): documents and
   * `loadMappings()` entries, mixed, in an array or an object keyed by anything (only `$id`
   * counts), wrapped as `{ mappings }`, or one alone.
   */
  mappings?: MappingsInput | Readonly<Record<string, unknown>> | readonly unknown[]
}

export class Mapper {
  private readonly compiler: Compiler
  private readonly registry: MappingRegistry
  private readonly stdout: (text: string) => void
  private readonly byId = new Map<string, CompiledMapping>()
  private readonly byDocument = new WeakMap<object, { version: number; compiled: CompiledMapping }>()
  private readonly prepared: ContentCache<Prepared>
  readonly extensions: ResolvedExtensions
  /** The budgets every evaluation of this instance starts from. */
  readonly limits: Readonly<Required<Limits>>

  constructor(documents: MapperDocuments = {}, extensions: Extensions = {}, options: EngineOptions = {}) {
    this.extensions = resolveExtensions(extensions)
    this.limits = resolveLimits(options.limits)
    this.prepared = new ContentCache(options.cache?.entries ?? PREPARED_ENTRIES, options.cache?.bytes ?? PREPARED_BYTES)
    this.stdout = options.stdout ?? defaultStdout
    this.compiler = new Compiler(this.extensions, { unknownNames: options.unknownNames ?? 'skip', stdout: this.stdout, codegen: options.codegen })
    this.registry = new MappingRegistry(this.compiler)
    const entries = mappingEntries(documents.mappings)
    if (entries.length > 0) this.registry.register(entries.map((entry) => admitDocument(entry.document)))
  }

  /** The registered, flattened documents by `$id` (read-only). */
  get mappings(): Readonly<Record<string, Readonly<MappingDocument>>> {
    return this.registry.view()
  }

  /** The registry this instance resolves names against (for validation and the service). */
  get registryView(): RegistryView {
    return this.registry
  }

  /** Register a document by its `$id` (replacing), or every member of a compound document. */
  register(document: unknown): string[] {
    const members = this.registeredMembers(admitDocument(document))
    this.byId.clear()
    this.prepared.clear()
    return this.registry.register(members)
  }

  /**
   * `register` in slices: the document copied, flattened and compiled a few pairings at a time,
   * the event loop getting a turn whenever `slice` has run its time (engine/slices.ts `Slice`: 8 ms,
   * and a smaller share of the loop while requests wait). What it registers, and how fast that
   * evaluates, is exactly what `register` gives. Nothing changes until the end: the whole document
   * is then registered at once, in one turn. Resolves with the ids registered, or rejects as
   * `register` throws.
   */
  async registerInSlices(document: unknown, slice?: Slicing): Promise<string[]> {
    const members = this.registeredMembers(await inSlices(admitting(document), slice))
    const ids = await inSlices(this.registry.registering(members), slice)
    this.byId.clear()
    this.prepared.clear()
    return ids
  }

  /** The members an admitted document registers: itself, or a compound document's members. */
  private registeredMembers(document: unknown): Record<string, unknown>[] {
    const admitted = this.admitMember(document)
    const members = isObject(admitted.mappings) ? Object.values(admitted.mappings).map((m) => this.admitMember(m)) : [admitted]
    if (!isObject(admitted.mappings) && idOf(admitted) === undefined) {
      throw new DocumentError('a registered mapping document needs a non-empty string $id')
    }
    return members
  }

  /**
   * Compile a document (or a registered id) for repeated evaluation. A compound document's members
   * are visible to it, shadowing registered ids, and nothing is registered.
   */
  compile(documentOrId: unknown): CompiledMapping {
    if (typeof documentOrId === 'string') {
      let compiled = this.byId.get(documentOrId)
      if (compiled === undefined) {
        compiled = new CompiledMapping(this.compiler, this.registry, documentOrId, this.stdout, this.limits)
        this.byId.set(documentOrId, compiled)
      }
      return compiled
    }
    if (!isObject(documentOrId)) {
      throw new DocumentError('a mapping document must be an object, or a string naming a registered mapping')
    }
    const cached = this.byDocument.get(documentOrId)
    if (cached !== undefined && cached.version === this.registry.version) return cached.compiled
    const compiled = this.compileDocument(admitDocument(documentOrId))
    this.byDocument.set(documentOrId, { version: this.registry.version, compiled })
    return compiled
  }

  /**
   * Instance-level validation (validation.md): well-formedness plus reachability against this
   * engine's mappings and extensions, and the static expansion bound against the `fanOut` budget
   * (BUDGET-1; `options.limits` narrows or widens this instance's). With `options.stdout: false`, a
   * `stdout` keyword is refused (KW-stdout-1): a host that evaluates others' documents keeps them
   * from printing. A string is validated as its registered, flattened document.
   */
  validate(documentOrId: unknown, options: ValidateOptions = {}): ValidationReport {
    return complete(this.judging(documentOrId, options)).report
  }

  /**
   * `validate` in slices (as `registerInSlices` registers): the same report, the event loop getting
   * a turn whenever `slice` has run its time. Nothing registered may change meanwhile: validate
   * what this instance holds between registrations.
   */
  async validateInSlices(documentOrId: unknown, options: ValidateOptions = {}, slice?: Slicing): Promise<ValidationReport> {
    return (await inSlices(this.judging(documentOrId, options), slice)).report
  }

  /** `validate`'s report with the static expansion bound beside it, computed once for both. */
  report(documentOrId: unknown, options: ValidateOptions = {}): ValidationReport & { expansion?: number } {
    const { report, expansion } = complete(this.judging(documentOrId, options))
    return expansion === undefined ? report : { ...report, expansion }
  }

  private * judging(documentOrId: unknown, options: ValidateOptions): Steps<{ report: ValidationReport; expansion: number | undefined }> {
    if (typeof documentOrId === 'string') {
      const registered = this.registry.document(documentOrId)
      if (registered === undefined) {
        const errors = [{ rule: 'REG-1', message: `${documentOrId} matches no registered mapping`, pointer: '', descriptor: documentOrId }]
        return { report: { valid: false, errors, warnings: [] }, expansion: undefined }
      }
    }
    const reach = this.reachability(documentOrId)
    const document = typeof documentOrId === 'string' ? this.registry.document(documentOrId) : documentOrId
    const report = yield * validating(document, reach, options.strict === true)
    if (!report.valid) return { report, expansion: undefined }
    const fanOut = (options.limits === undefined ? this.limits : resolveLimits(options.limits, this.limits)).fanOut
    const expansion = yield * expanding(document, reach.mapping)
    if (expansion !== undefined && expansion > fanOut) {
      report.valid = false
      report.errors.push({
        rule: 'BUDGET-1',
        message: `the mapping enters ${expansion === Number.MAX_SAFE_INTEGER ? 'more than 2^53' : expansion} mapping levels on any input, more than the fanOut budget of ${fanOut}`,
        pointer: '',
        descriptor: null,
      })
    }
    const printing = options.stdout === false && isObject(document) ? stdoutAt(document) : undefined
    if (printing !== undefined) {
      report.valid = false
      report.errors.push({ rule: 'KW-stdout-1', message: 'stdout is not allowed in documents evaluated here', pointer: printing, descriptor: true })
    }
    return { report, expansion }
  }

  /**
   * Validate and, when valid, compile a caller's document, with its static expansion bound. The
   * result is cached by the document's content (within `options.cache` of the instance), so the
   * same document sent again costs a lookup; registering anything clears the cache.
   */
  prepare(document: object, options: ValidateOptions = {}): Prepared {
    // Too deep to be a mapping (DOC-6) or not printable as itself: validated, never cached.
    const content = contentKey(document, MAX_DOCUMENT_DEPTH)
    if (content === undefined) return this.prepareNow(document, options)
    return this.preparedOnce(`o${content.key}`, content.size, options, () => document)
  }

  /**
   * `prepare` for a document held as the JSON text it arrived in (an HTTP body's member, as sent):
   * cached by that text, so the same text again costs a lookup and no printing, and parsed only
   * when it is not cached and `parsed`, the text already parsed by the caller, is not given. The
   * text must parse to a JSON object. Texts that differ only in spacing are cached apart; a text
   * and an object are never taken for one another.
   */
  prepareText(text: string, options: ValidateOptions = {}, parsed?: object): Prepared {
    const content = textKey(text)
    return this.preparedOnce(`t${content.key}`, content.size, options, () => {
      if (parsed !== undefined) return parsed
      const document: unknown = JSON.parse(text)
      if (document === null || typeof document !== 'object') throw new DocumentError('prepareText: the text is not a JSON object')
      return document
    })
  }

  /** The prepared document cached under `content` (with the options that change a report), prepared and kept when absent. */
  private preparedOnce(content: string, size: number, options: ValidateOptions, document: () => object): Prepared {
    const fanOut = options.limits?.fanOut ?? this.limits.fanOut
    const key = `${options.stdout === false ? 0 : 1}${options.strict === true ? 1 : 0}${fanOut}\n${content}`
    const cached = this.prepared.get(key)
    if (cached !== undefined) return { report: cached.report, compiled: cached.compiled, cached: true }
    const prepared = this.prepareNow(document(), options)
    this.prepared.set(key, prepared, size)
    return prepared
  }

  /** Documents and bytes of document text the prepared-document cache holds now. */
  get cached(): { entries: number; bytes: number } {
    return this.prepared.size
  }

  private prepareNow(document: object, options: ValidateOptions): Prepared {
    const report = this.report(document, options)
    return { report, compiled: report.valid ? this.compile(document) : null, cached: false }
  }

  /**
   * The static expansion bound of a document or registered id: the mapping levels one evaluation
   * enters on any input (each `each` counted once), or undefined when references recurse.
   */
  expansion(documentOrId: unknown): number | undefined {
    const document = typeof documentOrId === 'string' ? this.registry.document(documentOrId) : documentOrId
    if (document === undefined) return undefined
    return staticExpansion(document, this.reachability(documentOrId).mapping)
  }

  private reachability(documentOrId: unknown): Reachability {
    const { initializers, transformers, plugins } = this.extensions
    const reach: Reachability = {
      mapping: (id) => this.registry.document(id),
      initializer: (name) => Object.hasOwn(initializers, name),
      transformer: (name) => Object.hasOwn(transformers, name),
      plugin: (name) => Object.hasOwn(plugins, name),
      plugins: () => Object.keys(plugins),
      pluginOptions: (name) => (Object.hasOwn(plugins, name) ? plugins[name]!.validateOptions : undefined),
    }
    return typeof documentOrId === 'string' ? reach : withMembers(documentOrId, reach)
  }

  /**
   * Run the `examples` of a document (a single document's, and each compound member's) on this
   * instance. With `registered: true` a mapping with a `$id` runs as registered here; otherwise it
   * runs from the document, flattened as registration would, and nothing is registered. A document
   * is validated first by whoever calls this: examples of an invalid one may throw.
   */
  async examples(document: unknown, options: ExampleOptions & { extra?: Extra; run?: RunOptions } = {}): Promise<ExampleResult[]> {
    const run = options.budget === undefined ? options.run : { ...options.run, budget: options.budget }
    return runExamples(document, (target, input) => this.map(target, input, options.extra, run), options)
  }

  /** Evaluate a registered id or a document against an input (§6.2). */
  async map(documentOrId: unknown, input: unknown, extra?: Extra, options?: RunOptions): Promise<Envelope> {
    return this.compile(documentOrId).run(input, extra, options)
  }

  /** `map` with the explain trace of the evaluation beside the envelope (`CompiledMapping.explain`). */
  async explain(documentOrId: unknown, input: unknown, extra?: Extra, options?: RunOptions): Promise<Explained> {
    return this.compile(documentOrId).explain(input, extra, options)
  }

  /** A member of an already admitted (copied, frozen) document, checked to be an object. */
  private admitMember(member: unknown): Record<string, unknown> {
    if (!isObject(member)) throw new DocumentError('a mapping document must be an object')
    return member
  }

  private compileDocument(document: Record<string, unknown>): CompiledMapping {
    const form = documentForm(document)
    if (form === 'compound') {
      if (!isObject(document.mappings)) throw new DocumentError('the mappings of a compound document must be an object')
      const members = Object.values(document.mappings).map((member) => this.admitMember(member))
      const flattened = flattenBatch(members, (id) => this.registry.document(id))
      const local = new Map<string, RegisteredMapping>()
      this.compiler.locate(document, undefined)
      // Members are compiled when evaluation first names them: a document of many members costs
      // what its evaluation reaches, not what it holds.
      for (const [id, flat] of flattened) local.set(id, new LocalMember(this.compiler, Object.freeze(flat) as MappingDocument, id))
      const last = entryOf(members)
      const entry = last === undefined ? Object.freeze({ mapping: Object.freeze({}) }) : (idOf(last) ?? last)
      return new CompiledMapping(this.compiler, new LayeredRegistry(local, this.registry), entry, this.stdout, this.limits)
    }
    this.compiler.locate(document, undefined)
    // A bare pairing map is the pairings of an implicit wrapper (§6.2 step 1).
    const entry = form === 'descriptor' ? document : Object.freeze({ mapping: document })
    return new CompiledMapping(this.compiler, this.registry, entry, this.stdout, this.limits)
  }
}
