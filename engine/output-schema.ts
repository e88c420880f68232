// The JSON Schema (draft 2020-12) of what a mapping outputs, inferred from the document alone
// (issue 19 item 5): the service publishes it per registered mapping (GET /mappings/{id}/schema, and
// as the typed response of each mapping's operation in the OpenAPI document).
//
// The document is walked as evaluation reads it, through the keyword records: a descriptor's value
// goes through the pipeline stages of keywords/index.ts, each keyword contributing its
// `outputType` (record.ts; one without it leaves the value unknown, a validator or a keyword that
// compiles to nothing leaves it as it is); which keyword objects are structural and where their
// pairings are is asked of the records' `parts`. Only a valid evaluation's output is described
// (an invalid one drops it, language.md §7.4), so every pairing ran and every validator passed.
//
// Sound before precise: the schema never refuses an output the engine can produce. What is not
// known is `{}`; objects are never closed (a template's pairings, decision 5, write into its
// level); a key is required only when some write to it is certain to happen (its value can never
// be undefined); a key written at a deeper pointer is a container whose kind the next tokens
// decide (§3.4), and where writes mix kinds or go into a value written whole, only the container's
// type is kept. A registered mapping that recurses is a `$defs` entry referred to by `$ref`.
import { documentForm, entryOf, idOf, membersOf, pairingValueForm } from './document.js'
import { isKeyword, keywordRecord, pairingValueOf, stage, visitChildren, visiting, type KeywordRecord } from './keywords/index.js'
import { ANY_ARRAY, ANY_OBJECT, UNKNOWN, union, unionOf, type Alt, type Inference, type Inferred, type Property } from './output-types.js'
import { escapeToken, isArrayIndex, parsePointer } from './pointer.js'
import { flattenBatch } from './keywords/registry/ancestry.js'
import { isObject, keysOf, truthy } from './values.js'

/** A registered mapping's (flattened) document by id, or undefined. */
export type MappingLookup = (id: string) => unknown

export interface OutputSchemaOptions {
  /** Whether a descriptor key names a registered plugin (default: every key that is not a keyword may). */
  readonly plugin?: (name: string) => boolean
}

/** A JSON Schema, as built here. */
export type JsonSchema = Record<string, unknown>

/** The pipeline stages GET runs after locate (language.md §8.1), plugins between dispatch and shape. */
const BEFORE_PLUGINS = stage('dispatch')
const AFTER_PLUGINS = [...stage('shape'), ...stage('validate'), ...stage('finalize')]

/** One write into a level's target: the pointer's tokens and the value written (undefined: none). */
interface Write {
  readonly tokens: readonly string[]
  readonly value: Inferred
}

const present = (descriptor: Record<string, unknown>, name: string): boolean => Object.hasOwn(descriptor, name) && descriptor[name] !== undefined

/** A value no write is certain of: the same alternatives, possibly undefined. */
const maybe = (value: Inferred): Inferred => (value.undefined ? value : { alts: value.alts, undefined: true })

/** What a container becomes when writes may also go inside it: only its type is kept. */
function loosen(alts: readonly Alt[]): Alt[] {
  return union(
    alts.map((alt) => {
      if (alt.kind === 'object' || alt.kind === 'ref') return ANY_OBJECT
      if (alt.kind === 'array') return ANY_ARRAY
      if (alt.kind === 'const' && alt.value !== null && typeof alt.value === 'object') return Array.isArray(alt.value) ? ANY_ARRAY : ANY_OBJECT
      return alt
    })
  )
}

/** The container the next token of a write creates (§3.4): an array for `-` or an index. */
const containerKind = (token: string): 'array' | 'object' => (token === '-' || isArrayIndex(token) ? 'array' : 'object')

/**
 * The object a level's writes build, in order. `partial`: any subsequence of them may be what
 * happened (an array element receives only the writes that reach it), so nothing is required.
 */
function buildObject(writes: readonly Write[], partial: boolean): Alt {
  const groups = new Map<string, Write[]>()
  for (const write of writes) {
    const [first, ...rest] = write.tokens
    if (first === undefined || (write.value.alts.length === 0 && write.value.undefined)) continue
    let group = groups.get(first)
    if (group === undefined) groups.set(first, (group = []))
    group.push({ tokens: rest, value: write.value })
  }
  const properties = new Map<string, Property>()
  for (const [key, group] of groups) {
    const required = !partial && group.some((write) => !write.value.undefined)
    // The last write certain to replace the key: what came before it is gone.
    let from = 0
    if (!partial) {
      for (let i = group.length - 1; i >= 0; i--) {
        if (group[i]!.tokens.length === 0 && !group[i]!.value.undefined) {
          from = i
          break
        }
      }
    }
    const after = group.slice(from)
    const whole = after.filter((write) => write.tokens.length === 0)
    const inside = after.filter((write) => write.tokens.length > 0)
    let alts: Alt[]
    if (inside.length === 0) alts = unionOf(whole.map((write) => write.value.alts))
    else if (whole.length === 0 && from === 0) alts = buildContainer(inside, partial)
    else alts = union(loosen(unionOf(whole.map((write) => write.value.alts))), loosen(buildContainer(inside, true)))
    properties.set(key, { alts, required })
  }
  return { kind: 'object', properties }
}

/** A container created by writes whose tokens continue inside it. */
function buildContainer(writes: readonly Write[], partial: boolean): Alt[] {
  const kinds = new Set(writes.map((write) => containerKind(write.tokens[0]!)))
  if (kinds.size > 1) return [ANY_OBJECT, ANY_ARRAY]
  if (kinds.has('object')) return [buildObject(writes, partial)]
  // An array: every write of one token inserts or appends one member; deeper ones create a member
  // or go into one already there (an index clamps to the end, so any member may receive any of them).
  const members = writes.filter((write) => write.tokens.length === 1)
  const deeper = writes.filter((write) => write.tokens.length > 1).map((write) => ({ tokens: write.tokens.slice(1), value: write.value }))
  const memberAlts = unionOf(members.map((write) => write.value.alts))
  const items = deeper.length === 0 ? memberAlts : union(loosen(memberAlts), buildContainer(deeper, true))
  return [{ kind: 'array', items }]
}

/**
 * The most pairings one inference looks at. Inference costs tens of microseconds a pairing and
 * runs on the event loop when a set is admitted; a mapping past this is described as an object of
 * unknown members (sound, never precise) rather than holding the loop for seconds.
 */
export const MAX_INFERRED_PAIRINGS = 5000

/**
 * How many descriptors and levels an inference follows into one another at once (a chain of
 * references, each naming the next). Past it, what lies deeper is unknown: sound, and no chain,
 * however long, runs the inference out of stack.
 */
export const MAX_INFERRED_DEPTH = 200

/** Thrown inside an inference that reached MAX_INFERRED_PAIRINGS. */
class TooLarge extends Error {}

class Inferrer implements Inference {
  /** Pairings looked at so far (MAX_INFERRED_PAIRINGS). */
  private pairingsSeen = 0
  /** The object each pairing map builds in a fresh target, once inferred (by the map's identity). */
  private readonly levels = new Map<object, Alt>()
  private readonly inProgress = new Set<object>()
  /** The registered id a pairing map was first reached through: its name in `$defs`. */
  private readonly names = new Map<object, string>()
  /** Pairing maps that reach themselves (through references): described once, in `$defs`. */
  private readonly recursive = new Set<object>()
  /** Descriptors being inferred (GET, or MAP of their own level): a reference cycle back is unknown. */
  private readonly entered = new Set<object>()
  /** The writes of the level whose pairing is being inferred (a template writes there too). */
  private sink: Write[] = []

  constructor(
    private readonly lookup: MappingLookup,
    private readonly plugin: (name: string) => boolean
  ) {}

  /** The levels of the pairing maps that recurse, by the id they are named by. */
  defs(): Map<string, Alt> {
    const defs = new Map<string, Alt>()
    for (const pairings of this.recursive) defs.set(this.names.get(pairings)!, this.levels.get(pairings) ?? ANY_OBJECT)
    return defs
  }

  /** DEREF (§5.2): a registered name or `{ $ref }` to its document; anything else as it is. */
  private deref(descriptor: unknown): { value: unknown; id?: string } {
    if (typeof descriptor === 'string') {
      const found = this.lookup(descriptor)
      return found === undefined ? { value: descriptor } : { value: found, id: descriptor }
    }
    if (!isObject(descriptor)) return { value: descriptor }
    let id: unknown
    visitChildren(descriptor, visiting({ reference: (value) => (id = value) }), true)
    if (typeof id !== 'string') return { value: descriptor }
    return { value: this.lookup(id), id }
  }

  /** Once per descriptor on the way down: a reference cycle back to it gives `cycle`. */
  private once<T>(descriptor: object, cycle: T, infer: () => T): T {
    if (this.entered.has(descriptor) || this.entered.size + this.inProgress.size >= MAX_INFERRED_DEPTH) return cycle
    this.entered.add(descriptor)
    try {
      return infer()
    } finally {
      this.entered.delete(descriptor)
    }
  }

  /** GET (§8) of a descriptor in the current context. */
  get(descriptor: unknown): Inferred {
    const { value } = this.deref(descriptor)
    if (!isObject(value)) return UNKNOWN
    return this.once(value, UNKNOWN, () => this.pipeline(value))
  }

  private pipeline(value: Record<string, unknown>): Inferred {
    let current: Inferred | undefined
    for (const record of stage('locate')) {
      if (!present(value, record.name)) continue
      current = record.outputType === undefined ? UNKNOWN : record.outputType(UNKNOWN, value[record.name], value, this)
      if (current !== undefined) break
    }
    current ??= UNKNOWN
    current = this.stages(BEFORE_PLUGINS, current, value)
    for (const key of Object.keys(value)) {
      if (!isKeyword(key) && this.plugin(key)) current = UNKNOWN
    }
    return this.stages(AFTER_PLUGINS, current, value)
  }

  private stages(records: readonly KeywordRecord[], value: Inferred, descriptor: Record<string, unknown>): Inferred {
    let current = value
    for (const record of records) {
      if (!present(descriptor, record.name)) continue
      if (record.outputType !== undefined) current = record.outputType(current, descriptor[record.name], descriptor, this) ?? UNKNOWN
      else if (record.compile !== undefined && record.stage !== 'validate') current = UNKNOWN
    }
    return current
  }

  /** READ (§7.6): a structural descriptor maps once into a fresh target; any other is GET. */
  read(descriptor: unknown): Inferred {
    const { value } = this.deref(descriptor)
    if (Array.isArray(value)) return UNKNOWN
    if (isObject(value) && pairingValueOf(value) !== undefined) return { alts: [this.ownLevel(value)], undefined: false }
    return this.get(value)
  }

  writesInto(pairingValue: unknown): void {
    const pairings = this.pairingsOf(pairingValue)
    if (pairings === undefined) return
    for (const left of keysOf(pairings)) {
      if (++this.pairingsSeen > MAX_INFERRED_PAIRINGS) throw new TooLarge()
      const tokens = this.tokens(left)
      const value = this.right(pairings[left])
      this.sink.push({ tokens: tokens ?? [], value: maybe(tokens === undefined ? { alts: [], undefined: true } : value) })
    }
  }

  /** MAP (§7.1) of a structural descriptor: its own GET runs into the level, then its pairings. */
  ownLevel(descriptor: Record<string, unknown>): Alt {
    return this.once(descriptor, ANY_OBJECT, () => {
      const saved = this.sink
      this.sink = []
      try {
        this.pipeline(descriptor)
        const pairings = this.pairingsOf(pairingValueOf(descriptor))
        return pairings === undefined ? ANY_OBJECT : this.pairingsLevel(pairings)
      } finally {
        this.sink = saved
      }
    })
  }

  /** The object a level's pairings build (into `this.sink`, where earlier writes may stand). */
  private pairingsLevel(pairings: Record<string, unknown>): Alt {
    // Its keys, not its entries: a map of a hundred thousand pairings is looked at up to the bound only.
    for (const left of keysOf(pairings)) {
      if (++this.pairingsSeen > MAX_INFERRED_PAIRINGS) throw new TooLarge()
      const tokens = this.tokens(left)
      // A left side that is no pointer stops registration; keep the level loose all the same.
      if (tokens === undefined) return ANY_OBJECT
      const value = this.right(pairings[left])
      this.sink.push({ tokens, value })
    }
    return buildObject(this.sink, false)
  }

  private tokens(left: string): readonly string[] | undefined {
    try {
      return parsePointer(left)
    } catch {
      return undefined
    }
  }

  /** The pairing map a pairing value gives (§2.5): inline pairings, a descriptor's, or a reference's. */
  private pairingsOf(pairingValue: unknown, depth = 0): Record<string, unknown> | undefined {
    if (depth > 8) return undefined
    const { value, id } = this.deref(pairingValue)
    if (!isObject(value)) return undefined
    // The descriptor rule (document.ts): a written pairing value by pairingValueForm, a mapping a
    // name reached by its own document form; a descriptor gives its own pairing value's pairings.
    const pairings = id === undefined ? pairingValueForm(value) === 'pairings' : documentForm(value) === 'pairings'
    if (pairings) return value
    const inner = pairingValueOf(value)
    return typeof inner === 'string' || isObject(inner) ? this.pairingsOf(inner, depth + 1) : undefined
  }

  /** NEST (§7.5): the object a pairing value maps one scope into (fresh target, pairings only). */
  mapped(pairingValue: unknown, name: string | undefined = this.deref(pairingValue).id): Alt {
    const pairings = this.pairingsOf(pairingValue)
    if (pairings === undefined) return ANY_OBJECT
    if (name !== undefined && !this.names.has(pairings)) this.names.set(pairings, name)
    const ref = (): Alt => {
      const id = this.names.get(pairings)
      if (id === undefined) return ANY_OBJECT
      this.recursive.add(pairings)
      return { kind: 'ref', id }
    }
    const done = this.levels.get(pairings)
    if (done !== undefined) return this.recursive.has(pairings) ? ref() : done
    if (this.inProgress.has(pairings)) return ref()
    // Deeper than an inference follows: an object, of members unknown.
    if (this.entered.size + this.inProgress.size >= MAX_INFERRED_DEPTH) return ANY_OBJECT
    this.inProgress.add(pairings)
    const saved = this.sink
    this.sink = []
    let level: Alt
    try {
      level = this.pairingsLevel(pairings)
    } finally {
      this.sink = saved
      this.inProgress.delete(pairings)
    }
    this.levels.set(pairings, level)
    return this.recursive.has(pairings) ? ref() : level
  }

  /** What a pairing's right side writes (§7.1 step 4): a variant list, a structural or switching descriptor, or GET. */
  private right(right: unknown): Inferred {
    if (Array.isArray(right)) {
      const values = right.map((element) => this.read(element))
      return { alts: unionOf(values.map((v) => v.alts)), undefined: values.every((v) => v.undefined) }
    }
    const { value, id } = this.deref(right)
    if (!isObject(value)) return this.get(value)
    const pairingValue = pairingValueOf(value)
    const dispatches = BEFORE_PLUGINS.some((record) => truthy(value[record.name]))
    if (pairingValue === undefined && !dispatches) return this.get(value)
    const got = this.get(value)
    // A switching descriptor without pairings passes objects and arrays through (§7.2).
    if (pairingValue === undefined) return got
    const mapped = this.mapped(pairingValue, id ?? this.deref(pairingValue).id)
    return {
      undefined: got.undefined,
      alts: unionOf(
        got.alts.map((alt): readonly Alt[] => {
          switch (alt.kind) {
            case 'any':
              return [{ kind: 'scalar', type: 'string' }, { kind: 'scalar', type: 'number' }, { kind: 'scalar', type: 'boolean' }, { kind: 'scalar', type: 'null' }, mapped, { kind: 'array', items: [mapped] }]
            case 'const':
              if (Array.isArray(alt.value)) return [{ kind: 'array', items: alt.value.length === 0 ? [] : [mapped] }]
              return alt.value !== null && typeof alt.value === 'object' ? [mapped] : [alt]
            case 'scalar':
              return [alt]
            case 'array':
              return [{ kind: 'array', items: alt.items.length === 0 ? [] : [mapped] }]
            default:
              return [mapped]
          }
        })
      ),
    }
  }
}

/** What a registered mapping (or a document) outputs, inferred. */
export interface InferredOutput {
  /** The output for an input that is not an array: the entry's level. */
  readonly output: Alt
  /** A member of `items`, the output for an array input (§6.2 step 2). */
  readonly item: Alt
  /** The levels of the mappings that recurse, by id: what `ref` alternatives refer to. */
  readonly defs: ReadonlyMap<string, Alt>
}

/**
 * Infer the output of `entry`, a registered id or a mapping document (a descriptor or a bare
 * pairing map), with `lookup` finding the registered mappings it refers to.
 */
export function inferOutput(entry: unknown, lookup: MappingLookup, options: OutputSchemaOptions = {}): InferredOutput {
  // A compound document runs its last member with its members visible, flattened (§6.2 step 1).
  if (isObject(entry) && documentForm(entry) === 'compound') {
    const members = (membersOf(entry) ?? []).filter(isObject)
    const last = entryOf(members)
    let local: ReadonlyMap<string, unknown>
    try {
      local = flattenBatch(members, lookup)
    } catch {
      return { output: ANY_OBJECT, item: ANY_OBJECT, defs: new Map() }
    }
    return inferOutput(idOf(last) ?? last ?? {}, (name) => (local.has(name) ? local.get(name) : lookup(name)), options)
  }
  const inferrer = new Inferrer(lookup, options.plugin ?? ((name) => keywordRecord(name) === undefined))
  const document = typeof entry === 'string' ? lookup(entry) : entry
  try {
    let output: Alt = ANY_OBJECT
    if (isObject(document)) {
      const form = documentForm(document)
      if (form === 'descriptor') output = inferrer.ownLevel(document)
      else if (form === 'pairings') output = inferrer.mapped(document)
    }
    const item = inferrer.mapped(typeof entry === 'string' ? entry : document)
    return { output, item, defs: inferrer.defs() }
  } catch (error) {
    if (!(error instanceof TooLarge)) throw error
    return { output: ANY_OBJECT, item: ANY_OBJECT, defs: new Map() }
  }
}

/** How a `ref` alternative is written: the `$ref` for a mapping id. */
export type RefOf = (id: string) => string

/** The standalone document's `$ref` for a mapping id (a `$defs` member, its name escaped). */
export const defsRef: RefOf = (id) => `#/$defs/${encodeURIComponent(escapeToken(id))}`

/** Set a member by any name, `__proto__` included, as an own data property. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}

/**
 * How many alternatives one rendering writes at most. An inferred output shares its parts (a level
 * reached twice is one object), and a schema is a tree: a chain of levels, each holding the next
 * twice (as an object and as an array member), would double at every level. Past the bound, what
 * is left renders as `{}` (anything): sound, and never larger.
 */
export const MAX_RENDERED_ALTS = 5000

/** What is left of one rendering's MAX_RENDERED_ALTS. */
export interface RenderBudget {
  left: number
}

/** The JSON Schema of a union of alternatives. */
export function renderAlts(alts: readonly Alt[], refOf: RefOf, budget: RenderBudget = { left: MAX_RENDERED_ALTS }): JsonSchema {
  if (alts.length === 0) return { not: {} }
  if (alts.some((alt) => alt.kind === 'any')) return {}
  const constants: unknown[] = []
  const types: string[] = []
  const others: JsonSchema[] = []
  for (const alt of alts) {
    if (alt.kind === 'const') constants.push(alt.value)
    else if (alt.kind === 'scalar' && alt.minimum === undefined && alt.maximum === undefined && alt.maxLength === undefined) types.push(alt.type)
    else others.push(renderAlt(alt, refOf, budget))
  }
  // An integer is a number: listing both is listing number.
  const listed = types.includes('number') ? types.filter((type) => type !== 'integer') : types
  const schemas: JsonSchema[] = []
  if (listed.length > 0) schemas.push({ type: listed.length === 1 ? listed[0] : listed })
  if (constants.length > 0) schemas.push(constants.length === 1 ? { const: constants[0] } : { enum: constants })
  for (const other of others) schemas.push(other)
  return schemas.length === 1 ? schemas[0]! : { anyOf: schemas }
}

/** The JSON Schema of one alternative (within `budget`, shared by the alternatives it holds). */
export function renderAlt(alt: Alt, refOf: RefOf, budget: RenderBudget = { left: MAX_RENDERED_ALTS }): JsonSchema {
  if (--budget.left < 0) return {}
  switch (alt.kind) {
    case 'any':
      return {}
    case 'const':
      return { const: alt.value }
    case 'scalar': {
      const { kind: _kind, ...rest } = alt
      return rest
    }
    case 'array':
      return alt.items.length === 0 ? { type: 'array', maxItems: 0 } : alt.items.some((item) => item.kind === 'any') ? { type: 'array' } : { type: 'array', items: renderAlts(alt.items, refOf, budget) }
    case 'ref':
      return { $ref: refOf(alt.id) }
    case 'object': {
      if (alt.properties.size === 0) return { type: 'object' }
      const properties: Record<string, unknown> = {}
      const required: string[] = []
      for (const [key, property] of alt.properties) {
        setOwn(properties, key, renderAlts(property.alts, refOf, budget))
        if (property.required) required.push(key)
      }
      return required.length === 0 ? { type: 'object', properties } : { type: 'object', properties, required }
    }
  }
}

/**
 * The JSON Schema (draft 2020-12) of what `entry` (a registered id or a document) outputs: the
 * envelope without `valid` and `errors` of a valid evaluation. An array input is mapped member by
 * member under `items` (§6.2), so the schema is either shape (`anyOf`); mappings that recurse are
 * under `$defs`.
 */
export function outputSchema(entry: unknown, lookup: MappingLookup, options: OutputSchemaOptions = {}): JsonSchema {
  return renderOutput(inferOutput(entry, lookup, options), entry)
}

/** The JSON Schema document of an inferred output (`outputSchema`), for `entry` (named in its description). */
export function renderOutput({ output, item, defs }: InferredOutput, entry: unknown): JsonSchema {
  const schema: JsonSchema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    description: `What ${typeof entry === 'string' ? `the mapping ${JSON.stringify(entry)}` : 'the mapping'} outputs when the result is valid (the envelope without valid and errors); for an array input, the outputs of its members under items.`,
    anyOf: [renderAlt(output, defsRef), { type: 'object', properties: { items: { type: 'array', items: renderAlt(item, defsRef) } }, required: ['items'] }],
  }
  if (defs.size > 0) {
    const rendered: Record<string, unknown> = {}
    for (const [id, level] of defs) setOwn(rendered, escapeToken(id), renderAlt(level, defsRef))
    schema.$defs = rendered
  }
  return schema
}
