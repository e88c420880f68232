// Compile: document → plan. Every descriptor becomes a closure tree once; pointers are parsed
// here, keywords are resolved to their stage operations here, and extension names are bound here.
// Host errors a document carries (a bad pointer, an invalid pattern) are deferred to the moment
// evaluation reaches them, exactly where the language raises them.
import { generateLevel } from './codegen/level.js'
import { Context, type CompileContext, type Inline, type DocumentCompiler, type Pairing, type Pairings, type PairingSlot, type Place, type Plan, type PlanKind, type ResolvedExtensions, type RunCompiler, type Slot, type Step } from './context.js'
import { MESSAGES, errorObject } from './diagnostics.js'
import { DocumentError } from './errors.js'
import { pairingValueForm, reachedPairingValue } from './document.js'
import { putVariant, tracedPairing, tracedPipeline, tracedRead } from './explain/instrument.js'
import { pairingValueOf, PATH_OBSERVING_KEYWORDS, POINTER_KEYWORDS, provenanceOf, shiftsOf, stage, standingAlone, visitChildren, visiting } from './keywords/index.js'
import { compileDiagnostics, compilePipeline, pipelineCode } from './keywords/pipeline.js'
import { compilePlugins } from './keywords/plugins.js'
import type { Locate } from './keywords/record.js'
import { walking } from './keywords/walk.js'
import {
  compileReader,
  compileWriter,
  hasDotDotSegment,
  parsePointer,
  resolvePath,
  type Reader,
  type Writer,
} from './pointer.js'
import { EMPTY_PAIRINGS, putFirstDefined, putPlan, putter, putValue, runLevel } from './procedures.js'
import type { Descriptor, ScopeOverrides } from './types.js'
import { complete, type Steps } from './steps.js'
import { isObject, isThenable, keysOf, truthy } from './values.js'

export interface CompilerOptions {
  readonly unknownNames: 'skip' | 'error'
  /** Where the diagnostic keywords print (EngineOptions). */
  readonly stdout?: (text: string) => void
  /** Levels compiled to generated JavaScript (engine/codegen/level.ts); false keeps the closure plan everywhere. */
  readonly codegen?: boolean
}

/** A pairing's share of the printed output beside a string's text: key, quotes, colon, comma, a short scalar. */
const PAIRING_BYTES = 10

/**
 * The work steps one run of a descriptor's pipeline counts for: its stages, and the descriptors its
 * keywords read every time they run (a combinator's elements; a switch's one case counts as a level).
 */
function weightOf(descriptor: Record<string, unknown>, stages: number): number {
  let weight = stages
  visitChildren(
    descriptor,
    visiting({
      descriptor() {
        weight++
      },
    })
  )
  return weight
}

/**
 * An upper bound of a pointer's reference tokens: its slashes (a token never holds one), or its
 * length for the URI fragment form, whose escapes decode to slashes.
 */
function slashes(pointer: string): number {
  if (pointer.startsWith('#')) return pointer.length
  let count = 0
  for (let i = pointer.indexOf('/'); i !== -1; i = pointer.indexOf('/', i + 1)) count++
  return count
}

/** How many names one `mapping` / `each` value may pass through before it counts as a loop. */
const MAX_REFERENCE_HOPS = 32

function referenceHop(id: string, hops: number): number {
  if (hops >= MAX_REFERENCE_HOPS) throw new DocumentError(`mapping references loop through "${id}"`)
  return hops + 1
}

/**
 * How many pointer strings and string descriptors stay compiled per engine. Distinct explicit
 * documents keep bringing new ones; past this the cache starts over (plans keep what they hold).
 */
const STRING_CACHE_SIZE = 10_000

function cached<T>(cache: Map<string, T>, key: string, make: (key: string) => T): T {
  let value = cache.get(key)
  if (value === undefined) {
    value = make(key)
    if (cache.size >= STRING_CACHE_SIZE) cache.clear()
    cache.set(key, value)
  }
  return value
}

function thrower(error: unknown): () => never {
  return () => {
    throw error
  }
}

/**
 * What a plan that holds no pairings does asked for them: refuse, with an error made then. Made at
 * compile time it cost every such plan (every pointer of every pairing) an Error and its stack
 * trace: 1.4 s of the 3.5 s that registering one member of 100,000 pairings took.
 */
function notAPairingMap(): never {
  throw new DocumentError('mapping must be an object of pairings or a mapping reference')
}

/** Run pipeline steps from `start`; continue asynchronously only when an awaiting step yields a promise. */
function runSteps(steps: readonly Step[], start: number, value: unknown, context: Context): unknown {
  let current = value
  for (let i = start; i < steps.length; i++) {
    const step = steps[i]!
    current = step.run(current, context)
    if (step.awaits && isThenable(current)) {
      return Promise.resolve(current).then((settled) => runSteps(steps, i + 1, settled, context))
    }
  }
  return current
}

function pipeline(locate: Locate, locateIsSync: boolean, steps: readonly Step[]): (context: Context) => unknown {
  if (steps.length === 0) return locate
  if (locateIsSync && steps.every((step) => !step.awaits)) {
    // A synchronous pipeline composes into direct calls: no loop, no promise checks.
    let composed: (context: Context) => unknown = locate
    for (const step of steps) {
      const previous = composed
      const run = step.run
      composed = (context) => run(previous(context), context)
    }
    return composed
  }
  return (context) => {
    const located = locate(context)
    if (located instanceof Promise) return located.then((settled) => runSteps(steps, 0, settled, context))
    return runSteps(steps, 0, located, context)
  }
}

/** True when the value pipeline of a descriptor can see its context's paths. */
function observesPaths(descriptor: Record<string, unknown>, hasPlugins: boolean): boolean {
  return hasPlugins || PATH_OBSERVING_KEYWORDS.some((k) => truthy(descriptor[k]))
}

export class Compiler implements CompileContext, RunCompiler, DocumentCompiler {
  private readonly objectPlans = new WeakMap<object, Plan>()
  private readonly stringPlans = new Map<string, Plan>()
  private readonly pairingMaps = new WeakMap<object, Pairings>()
  private readonly readers = new Map<string, Reader>()
  private readonly emptyPlan: Plan
  private explainer: Compiler | undefined

  constructor(
    readonly extensions: ResolvedExtensions,
    readonly options: CompilerOptions,
    /** Where each object of a located document stands in it (see `locate`). */
    private readonly places = new WeakMap<object, Place>(),
    /** Explain mode: every plan records into its run's trace (explain/instrument.ts). */
    readonly tracing = false
  ) {
    this.emptyPlan = this.plan({})
  }

  /**
   * The explain-mode sibling of this compiler: the same extensions and document places, its own
   * plan caches, so explaining never touches the plans normal runs use.
   */
  explaining(): Compiler {
    if (this.tracing) return this
    return (this.explainer ??= new Compiler(this.extensions, this.options, this.places, true))
  }

  /**
   * Record where each pairing map of a document stands in it, before the document is compiled, so
   * that a budget error can name the pairing it stopped in. A map already placed keeps its place.
   */
  locate(document: object, mapping: string | undefined, base = ''): void {
    complete(this.locating(document, mapping, base))
  }

  /**
   * `locate` step by step (engine/steps.ts); `found`, when given, is told every pairing value the
   * walk reaches. False when the document was placed already (nothing walked).
   */
  private * locating(document: object, mapping: string | undefined, base: string, found?: (value: Record<string, unknown>) => void): Steps<boolean> {
    if (this.places.has(document)) return false
    // Only what can be a level's pairing map is placed: the root and the pairing values its keywords hold.
    if (!Array.isArray(document)) this.places.set(document, { mapping, pointer: base })
    yield * walking(document, base, {
      pairingMap: (value, pointer) => {
        if (!this.places.has(value)) this.places.set(value, { mapping, pointer })
        found?.(value)
      },
    })
    return true
  }

  /**
   * `locate` then `plan` of a registered document, step by step (engine/steps.ts): its pairing maps
   * are compiled first, deepest first and a pairing at a time, so that when the document's own plan
   * is made every level it holds is already compiled (plans are kept by object), and no step
   * compiles more than one pairing's own descriptor. The plan is the one `plan` makes.
   */
  * compiling(document: object, mapping: string | undefined): Steps<Plan> {
    // Every pairing map the document holds, a map before the maps inside it: compiled from the
    // last, a map's inner maps are compiled before it is. Gathered by the walk that places them
    // (or by a walk of its own when the document was placed already).
    const maps: Record<string, unknown>[] = []
    const gather = (value: Record<string, unknown>): void => {
      if (pairingValueForm(value) === 'pairings') maps.push(value)
    }
    if (!(yield * this.locating(document, mapping, '', gather))) yield * walking(document, '', { pairingMap: gather })
    for (let i = maps.length - 1; i >= 0; i--) {
      if (!this.pairingMaps.has(maps[i]!)) yield * this.buildingPairings(maps[i]!)
    }
    return this.plan(document)
  }

  /** A compiled reader for a keyword pointer; an unparseable pointer throws when it is read. */
  reader(pointer: unknown): Reader {
    if (typeof pointer === 'string') {
      return cached(this.readers, pointer, (text) => {
        try {
          return compileReader(parsePointer(text))
        } catch (error) {
          return thrower(error)
        }
      })
    }
    try {
      return compileReader(parsePointer(pointer))
    } catch (error) {
      return thrower(error)
    }
  }

  /** Compile a descriptor for GET, without dereferencing it. */
  plan(descriptor: unknown): Plan {
    if (typeof descriptor === 'string') return cached(this.stringPlans, descriptor, (text) => this.stringPlan(text))
    if (descriptor !== null && typeof descriptor === 'object') {
      let plan = this.objectPlans.get(descriptor)
      if (plan === undefined) {
        plan = Array.isArray(descriptor) ? this.variantPlan(descriptor) : this.objectPlan(descriptor as Record<string, unknown>)
        this.objectPlans.set(descriptor, plan)
      }
      return plan
    }
    const error = new DocumentError(`a descriptor must be a string, an object or an array, not ${JSON.stringify(descriptor) ?? String(descriptor)}`)
    return this.basicPlan('invalid', descriptor, thrower(error))
  }

  /** Compile a descriptor in a dereferencing position: name strings and `$ref` resolve at run time. */
  slot(descriptor: unknown): Slot {
    if (typeof descriptor === 'string') {
      const fallback = this.plan(descriptor)
      return (context) => context.run.registry.lookup(descriptor) ?? fallback
    }
    const whole = isObject(descriptor) ? standingAlone(descriptor) : undefined
    if (whole !== undefined) {
      // The registered mapping its keyword names stands for the whole descriptor.
      const id = (descriptor as Record<string, unknown>)[whole.name]
      const provenance = provenanceOf(descriptor)
      const empty = this.emptyPlan
      return (context) => {
        const found = typeof id === 'string' ? context.run.registry.lookup(id) : undefined
        if (found !== undefined) return found
        context.run.errors.push(errorObject(provenance, [[whole.name, id]], MESSAGES.unknownReference))
        return empty
      }
    }
    const plan = this.plan(descriptor)
    return () => plan
  }

  /**
   * The dereferenced pairing map of a `mapping` / `each` value (§4.2 step 8), by the descriptor rule
   * of document.ts `pairingValueForm`: a name or `$ref` resolves when evaluation reaches it (to the
   * mapping's own pairings, `reachedSlot`); a descriptor (a truthy `mapping`) supplies only its own
   * pairings; any other object is the pairing map itself.
   */
  pairingSlot(value: unknown): PairingSlot {
    switch (pairingValueForm(value)) {
      case 'name': {
        const name = value as string
        return (context, hops = 0) => {
          const found = context.run.registry.lookup(name)
          if (found === undefined) throw new DocumentError(`Unknown mapping "${name}"`)
          return found.asPairingMap(context, referenceHop(name, hops))
        }
      }
      case 'reference': {
        const whole = standingAlone(value as Record<string, unknown>)!
        const id = (value as Record<string, unknown>)[whole.name]
        const provenance = provenanceOf(value)
        return (context, hops = 0) => {
          const found = typeof id === 'string' ? context.run.registry.lookup(id) : undefined
          if (found !== undefined) return found.asPairingMap(context, referenceHop(String(id), hops))
          context.run.errors.push(errorObject(provenance, [[whole.name, id]], MESSAGES.unknownReference))
          return EMPTY_PAIRINGS
        }
      }
      case 'descriptor':
        return this.innerSlot(value as Record<string, unknown>)
      case 'pairings': {
        const fixed = this.pairingMap(value as Record<string, unknown>)
        return () => fixed
      }
      default:
        return notAPairingMap
    }
  }

  /**
   * The pairings of a mapping a name or `$ref` reaches: a registered document, read by its own form
   * (document.ts `reachedPairingValue`): a pairing map is itself, a descriptor supplies only its own
   * pairings (the pairing value its keywords give, `mapping` else `each`, or none).
   */
  private reachedSlot(document: Record<string, unknown>): PairingSlot {
    const value = reachedPairingValue(document)
    return value === undefined ? () => EMPTY_PAIRINGS : this.pairingSlot(value)
  }

  /** A descriptor's own pairings: the pairing value its keywords give, or none. */
  private innerSlot(descriptor: Record<string, unknown>): PairingSlot {
    const inner = pairingValueOf(descriptor)
    return inner === undefined ? () => EMPTY_PAIRINGS : this.pairingSlot(inner)
  }

  /** A pairing map compiled (once per map object). */
  private pairingMap(value: Record<string, unknown>): Pairings {
    return this.pairingMaps.get(value) ?? complete(this.buildingPairings(value))
  }

  /** A pairing map compiled a pairing per step (engine/steps.ts), and kept; one compiled meanwhile is kept instead. */
  private * buildingPairings(value: Record<string, unknown>): Steps<Pairings> {
    const place = this.places.get(value)
    const list: Pairing[] = []
    // A level counts one step per pairing, plus the stages of the right sides known here (a
    // name resolved at run time counts its own levels).
    let weight = 0
    let keyBytes = 0
    let reach = 0
    for (const left of keysOf(value)) {
      const right = value[left]
      list.push(this.pairing(left, right, place))
      weight += 1 + (isObject(right) && standingAlone(right) === undefined ? this.plan(right).weight : 0)
      keyBytes += left.length + PAIRING_BYTES
      reach = Math.max(reach, slashes(left) + 1)
      yield
    }
    const built: { -readonly [K in keyof Pairings]: Pairings[K] } = { list: Object.freeze(list), level: undefined, free: undefined, made: undefined, weight, keyBytes, reach }
    // Explain mode keeps the instrumented closures: they record what a generated level skips.
    if (this.options.codegen !== false && !this.tracing) Object.assign(built, generateLevel(built))
    // Compiled whole while these steps waited (a plan asked for meanwhile): that one is the map's.
    const meanwhile = this.pairingMaps.get(value)
    if (meanwhile !== undefined) return meanwhile
    const pairings = Object.freeze(built)
    this.pairingMaps.set(value, pairings)
    return pairings
  }

  /** Re-entrant evaluation for extensions (EXT-4): a derived context, the run's roots and errors. */
  reenter(context: Context, descriptor: Descriptor, overrides: ScopeOverrides | undefined, asMapping: boolean): unknown {
    const plan = this.slot(descriptor)(context)
    const source = overrides?.source !== undefined ? overrides.source : context.source
    const target = overrides?.target ?? (asMapping ? {} : context.target)
    const derived = new Context(context.run, source, target, context, -1, plan.sourcePath, plan.targetPath)
    if (!asMapping) return plan.get(derived)
    return runLevel(plan, plan.pairings === null ? null : plan.pairings(derived), derived)
  }

  private basicPlan(kind: PlanKind, descriptor: unknown, get: (context: Context) => unknown, observes = false): Plan {
    return Object.freeze({
      kind,
      descriptor,
      get,
      weight: 0,
      structural: false,
      dispatches: false,
      sourcePath: undefined,
      targetPath: undefined,
      print: undefined,
      observesPaths: observes,
      pairings: null,
      fixedPairings: undefined,
      passesThrough: false,
      asPairingMap: notAPairingMap,
      emit: undefined,
    })
  }

  private diagnostic(error: Record<string, unknown>): (context: Context) => undefined {
    return (context) => {
      context.run.errors.push({ ...error } as never)
      return undefined
    }
  }

  /** §2.4 rules 2–4 (the registry lookup of rule 1 belongs to the slot). */
  private stringPlan(text: string): Plan {
    if (text.startsWith('/')) {
      if (hasDotDotSegment(text)) {
        return this.basicPlan('invalid', text, this.diagnostic({ descriptor: text, message: MESSAGES.dotDot }))
      }
      const readSource = this.reader(text)
      const get = (context: Context): unknown => readSource(context.source)
      return this.basicPlan('pointer', text, this.tracing ? tracedRead(text, false, get) : get)
    }
    if (text.includes('../')) {
      // Extended tier (§3.6): combine with the current source path, read from the root input.
      const get = (context: Context): unknown => compileReader(parsePointer(resolvePath(context.paths.source, text)))(context.run.input)
      return this.basicPlan('relative', text, this.tracing ? tracedRead(text, true, get) : get, true)
    }
    return this.basicPlan('invalid', text, this.diagnostic({ descriptor: text, message: MESSAGES.unrecognized }))
  }

  private variantPlan(list: unknown[]): Plan {
    const error = new DocumentError('a variant list is a valid descriptor only as the right side of a pairing')
    return this.basicPlan('variant', list, thrower(error))
  }

  private objectPlan(descriptor: Record<string, unknown>): Plan {
    const provenance = provenanceOf(descriptor)
    const pairingValue = pairingValueOf(descriptor)
    const structural = pairingValue !== undefined
    const pluginSteps = compilePlugins(descriptor, this)
    let get: (context: Context) => unknown
    let emit: Plan['emit']
    let stages = 0
    let passesThrough = false
    const badPointer = POINTER_KEYWORDS.some((key) => {
      const pointer = descriptor[key]
      return typeof pointer === 'string' && pointer.startsWith('/') && hasDotDotSegment(pointer)
    })
    if (badPointer) {
      // Stage 0: a `..` pointer skips the whole pipeline, default included.
      const error = errorObject(provenance, [], MESSAGES.dotDot)
      get = (context) => {
        context.run.errors.push({ ...error })
        return undefined
      }
    } else {
      const compiled = compilePipeline(descriptor, this, provenance, pluginSteps)
      const { locate, steps } = this.tracing ? tracedPipeline(descriptor, compiled) : compiled
      get = pipeline(locate.locate, locate.sync, steps)
      stages = steps.length
      passesThrough = compiled.located === undefined && steps.length === 0
      // Explain mode keeps the instrumented steps: the generated form records nothing.
      if (!this.tracing) emit = (gen) => pipelineCode(descriptor, compiled, gen, provenance)
    }
    const shifts = shiftsOf(descriptor)
    let ownPairings: PairingSlot | undefined
    // Pairings written in place (not a name) are fixed: a generated level maps through them.
    const fixedPairings =
      pairingValueForm(pairingValue) === 'pairings' ? this.pairingMap(pairingValue as Record<string, unknown>) : undefined
    return Object.freeze({
      kind: 'object' as const,
      descriptor,
      get,
      weight: weightOf(descriptor, stages),
      structural,
      dispatches: stage('dispatch').some((record) => truthy(descriptor[record.name])),
      sourcePath: shifts.source,
      targetPath: shifts.target,
      print: compileDiagnostics(descriptor, this, provenance),
      observesPaths: observesPaths(descriptor, pluginSteps.length > 0),
      pairings: structural ? this.pairingSlot(pairingValue) : null,
      fixedPairings,
      passesThrough,
      asPairingMap: (context: Context, hops: number) => (ownPairings ??= this.reachedSlot(descriptor))(context, hops),
      emit,
    })
  }

  /** One pairing: its left pointer compiled, and the right side in the fastest form that behaves the same. */
  private pairing(left: string, right: unknown, place: Place | undefined): Pairing {
    let write: Writer
    let ownKey: string | undefined
    try {
      const tokens = parsePointer(left)
      write = compileWriter(tokens)
      // One plain token: the common case, stored straight into the level's target object.
      if (tokens.length === 1 && tokens[0] !== '__proto__') ownKey = tokens[0]
    } catch (error) {
      // SET parses its pointer only when there is something to write.
      write = (_target, value) => {
        if (value !== undefined) throw error
        return undefined
      }
    }
    const put = putter(left, write, ownKey)
    const pairing = (run: Pairing['run'], inline?: Inline): Pairing => ({ pointer: left, place, write, run, inline })

    if (this.tracing) {
      // Explain mode takes the general path only: the fast paths below skip the steps it records.
      if (Array.isArray(right)) {
        const slots = right.map((element) => this.slot(element))
        return pairing(tracedPairing(left, place, put, (context, observed, frame) => putVariant(slots, context, observed, frame)))
      }
      const slot = this.slot(right)
      return pairing(tracedPairing(left, place, put, (context, observed) => putPlan(slot(context), context, observed)))
    }
    if (Array.isArray(right)) {
      const slots = right.map((element) => this.slot(element))
      return pairing((context) => putFirstDefined(slots, context, put))
    }
    const slot = this.slot(right)
    const general = (context: Context): Promise<void> | undefined => putPlan(slot(context), context, put)
    // Specialized forms of the two commonest right sides; both fall back to the general path
    // whenever it could behave differently.
    if (typeof right === 'string' && right.startsWith('/') && !hasDotDotSegment(right)) {
      const readSource = this.reader(right)
      return pairing(
        (context) => {
          if (context.run.registry.shadowsPointers) return general(context)
          put(context, readSource(context.source), false)
          return undefined
        },
        { read: parsePointer(right), ownKey, put }
      )
    }
    if (isObject(right) && standingAlone(right) === undefined) {
      const plan = this.plan(right)
      if (!plan.structural && !plan.dispatches && !(plan.observesPaths && (plan.sourcePath !== undefined || plan.targetPath !== undefined))) {
        const get = plan.get
        return pairing((context) => putValue(get(context), context, put), { get, plan, ownKey, put })
      }
      const run = (context: Context): Promise<void> | undefined => putPlan(plan, context, put)
      if (plan.structural && !plan.dispatches) return pairing(run, { plan, nested: plan.fixedPairings, ownKey, put })
      return pairing(run)
    }
    return pairing(general)
  }
}
