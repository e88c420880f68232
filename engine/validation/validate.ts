// Mapping validation (validation.md): judge a document as a mapping before anything runs. The
// document level checks well-formedness only; the instance level adds reachability against an
// engine's registries. Synchronous, never throwing, never evaluating, never changing anything.
import { documentForm, idOf, MAX_DOCUMENT_DEPTH, membersOf, pairingValueForm } from '../document.js'
import { COMPOUND_MEMBERS, isKeyword, KEYWORDS, keywordRecord, pairingValueOf, standingAlone } from '../keywords/index.js'
import { operandIssues } from '../keywords/grammar.js'
import type { Parts } from '../keywords/record.js'
import { Ancestry } from '../keywords/registry/ancestry.js'
import { cutText, REPORT_LIMITS, Sizer, type ReportLimits } from './bounds.js'
import { escapeToken, hasDotDotSegment, parsePointer } from '../pointer.js'
import { didYouMean } from '../suggest.js'
import type { PluginOptionIssue } from '../types.js'
import { complete, STEPS_PER_YIELD, type Steps } from '../steps.js'
import { isObject, keysOf, truthy } from '../values.js'

export interface Diagnostic {
  rule: string
  message: string
  pointer: string
  /**
   * The offending value found at the pointer, when its JSON text is at most `REPORT_LIMITS.echoBytes`;
   * a larger one is summarized as `{ "$omitted": "object" | "array" | "string", "bytes": n }`.
   */
  descriptor: unknown
  /** `EXAMPLE-1`: where the envelope differs from the example (the first `REPORT_LIMITS.differences`). */
  differences?: Array<{ pointer: string; expected?: unknown; actual?: unknown }>
  /** `EXAMPLE-1`: how many differences are not listed. */
  omittedDifferences?: number
}

export interface ValidationReport {
  valid: boolean
  errors: Diagnostic[]
  warnings: Diagnostic[]
  /** True when diagnostics past the report's bounds (`REPORT_LIMITS`) are counted in `omitted`, not listed. */
  truncated?: boolean
  /** How many diagnostics (errors first, then warnings) are not listed. */
  omitted?: number
}

/** A diagnostic within the report's bounds: message cut, descriptor and differences echoed or summarized. */
function boundedDiagnostic(diagnostic: Diagnostic, limits: ReportLimits, sizer: Sizer): Diagnostic {
  const bounded: Diagnostic = {
    rule: diagnostic.rule,
    message: cutText(diagnostic.message, limits.messageChars),
    pointer: diagnostic.pointer,
    descriptor: sizer.echo(diagnostic.descriptor, limits.echoBytes),
  }
  const differences = diagnostic.differences
  if (differences !== undefined) {
    const listed = Math.min(differences.length, limits.differences)
    const list: NonNullable<Diagnostic['differences']> = []
    for (let i = 0; i < listed; i++) {
      const difference = differences[i]!
      const entry: (typeof list)[number] = { pointer: difference.pointer }
      if ('expected' in difference) entry.expected = sizer.echo(difference.expected, limits.echoBytes)
      if ('actual' in difference) entry.actual = sizer.echo(difference.actual, limits.echoBytes)
      list.push(entry)
    }
    bounded.differences = list
    const omitted = (diagnostic.omittedDifferences ?? 0) + differences.length - listed
    if (omitted > 0) bounded.omittedDifferences = omitted
  } else if (diagnostic.omittedDifferences !== undefined) {
    bounded.omittedDifferences = diagnostic.omittedDifferences
  }
  return bounded
}

/**
 * A report within bounds (docs/engine.md, "The validation report"): each diagnostic's descriptor
 * echoed only when small, its message cut, its differences capped; the diagnostics listed up to
 * `limits.diagnostics` and `limits.bytes`, errors first, the rest counted in `omitted` with
 * `truncated: true`. `valid` is kept as given. Applying it to a bounded report changes nothing,
 * so a host that adds diagnostics to a report bounds the whole again. Linear in what it lists.
 */
export function boundReport<R extends ValidationReport>(report: R, limits: ReportLimits = REPORT_LIMITS): R {
  const sizer = new Sizer()
  let bytes = 0
  let listed = 0
  let omitted = report.omitted ?? 0
  const keep = (diagnostics: readonly Diagnostic[]): Diagnostic[] => {
    const kept: Diagnostic[] = []
    for (const diagnostic of diagnostics) {
      if (listed >= limits.diagnostics || bytes >= limits.bytes) {
        omitted++
        continue
      }
      const bounded = boundedDiagnostic(diagnostic, limits, sizer)
      const size = sizer.size(bounded) + 1
      if (bytes + size > limits.bytes) {
        // Past the byte bound nothing more is listed, even a smaller one after it.
        bytes = limits.bytes
        omitted++
        continue
      }
      bytes += size
      listed++
      kept.push(bounded)
    }
    return kept
  }
  const errors = keep(report.errors)
  const warnings = keep(report.warnings)
  const bounded: R = { ...report, errors, warnings }
  if (omitted > 0) {
    bounded.truncated = true
    bounded.omitted = omitted
  }
  return bounded
}

/** What the instance level can see: the names a document may use on this engine. */
export interface Reachability {
  mapping(id: string): unknown
  initializer(name: string): boolean
  transformer(name: string): boolean
  plugin(name: string): boolean
  /** The registered plugins' names: what KW-2 may suggest for a misspelt one, beside the keywords. */
  plugins?(): Iterable<string>
  /** The registered plugin's own options check (`Plugin.validateOptions`), when it has one. */
  pluginOptions?(name: string): ((options: unknown) => readonly PluginOptionIssue[]) | undefined
}

const WARNINGS = new Set(['CTX-3', 'KW-2'])
const ENVELOPE_KEYS = new Set(['valid', 'errors'])

class Reporter {
  readonly errors: Diagnostic[] = []
  readonly warnings: Diagnostic[] = []

  /** `strict`: a warning is reported as an error (validation.md §1, strict mode). */
  constructor(private readonly strict = false) {}

  add(rule: string, message: string, pointer: string, descriptor: unknown): void {
    ;(WARNINGS.has(rule) && !this.strict ? this.warnings : this.errors).push({ rule, message, pointer, descriptor })
  }

  /** The report, within bounds (`boundReport`). */
  report(): ValidationReport {
    return boundReport({ valid: this.errors.length === 0, errors: this.errors, warnings: this.warnings })
  }
}

/** `pointer` extended by the reference tokens of a list. */
function atTokens(pointer: string, tokens: readonly string[]): string {
  let out = pointer
  for (const token of tokens) out += `/${escapeToken(token)}`
  return out
}

const at = (pointer: string, ...tokens: string[]): string => atTokens(pointer, tokens)

/** The PTR-9 / PTR-10 finding for a pointer operand, if any. */
function pointerIssue(text: string): { rule: string; message: string } | undefined {
  let body = text
  if (text.startsWith('#')) {
    try {
      body = decodeURIComponent(text.slice(1))
    } catch {
      return { rule: 'PTR-10', message: `${text} is not a valid JSON Pointer` }
    }
  }
  if ((body !== '' && !body.startsWith('/')) || /~(?![01])/.test(body)) {
    return { rule: 'PTR-10', message: `${text} is not a valid JSON Pointer` }
  }
  if (hasDotDotSegment(body)) return { rule: 'PTR-9', message: `${text} must not contain .. segments` }
  return undefined
}

/** The first container nested deeper than the limit, found in document order, as a pointer (step by step, engine/steps.ts). */
function * tooDeep(document: unknown, limit: number): Steps<string | undefined> {
  // Each container remembers its parent and key; only the one found spells its pointer.
  interface Place {
    readonly value: object
    readonly depth: number
    readonly parent: Place | undefined
    readonly key: string
  }
  if (document === null || typeof document !== 'object') return undefined
  const work: Place[] = [{ value: document, depth: 1, parent: undefined, key: '' }]
  let steps = 0
  while (work.length > 0) {
    const place = work.pop()!
    if (place.depth > limit) {
      const keys: string[] = []
      for (let at: Place | undefined = place; at?.parent !== undefined; at = at.parent) keys.push(at.key)
      return atTokens('', keys.reverse())
    }
    const value = place.value
    const keys = keysOf(value)
    for (let i = keys.length - 1; i >= 0; i--) {
      const member = (value as Record<string, unknown>)[keys[i]!]
      if (member !== null && typeof member === 'object') work.push({ value: member, depth: place.depth + 1, parent: place, key: keys[i]! })
      if (++steps % STEPS_PER_YIELD === 0) yield
    }
  }
  return undefined
}

type Position = 'pairing' | 'read'

/** Pairings validated between two yields of the walk (a few microseconds each). */
export const PAIRINGS_PER_YIELD = 16

class Traversal {
  /** The instance level's `$extend` flattening, shared by every member (made on first use). */
  private ancestry: Ancestry | undefined
  /** Pairings validated so far (PAIRINGS_PER_YIELD). */
  private steps = 0

  constructor(
    private readonly out: Reporter,
    private readonly reach: Reachability | null
  ) {}

  /** A mapping document at `pointer` in one of its forms (validation.md §1). */
  * document(document: unknown, pointer: string): Steps<void> {
    switch (documentForm(document)) {
      case 'invalid':
        this.out.add('DOC-3', 'a mapping document must be an object', pointer, document)
        return
      case 'pairings':
        yield * this.pairings(document as Record<string, unknown>, pointer, true)
        return
      case 'descriptor':
        yield * this.descriptorObject(document as Record<string, unknown>, pointer, true)
        return
      case 'compound':
        yield * this.compound(document as Record<string, unknown>, pointer)
    }
  }

  private * compound(document: Record<string, unknown>, pointer: string): Steps<void> {
    for (const key of Object.keys(document)) {
      if (COMPOUND_MEMBERS.has(key)) this.keywordOperand(key, document[key], at(pointer, key))
    }
    const members = document.mappings
    if (!isObject(members)) {
      this.out.add('DOC-3', 'a mapping document must be an object', at(pointer, 'mappings'), members)
      return
    }
    for (const key of keysOf(members)) {
      const member = members[key]
      if (!isObject(member)) this.out.add('DOC-3', 'a mapping document must be an object', at(pointer, 'mappings', key), member)
      else yield * this.descriptorObject(member, at(pointer, 'mappings', key), true)
    }
  }

  private keywordOperand(name: string, value: unknown, pointer: string): void {
    const record = keywordRecord(name)
    if (record === undefined) return
    for (const found of operandIssues(record.schema, value)) {
      this.out.add(found.rule, found.message, found.at === undefined ? pointer : atTokens(pointer, found.at), 'descriptor' in found ? found.descriptor : value)
    }
  }

  private pointerOperand(value: unknown, pointer: string): void {
    if (typeof value !== 'string') return
    const found = pointerIssue(value)
    if (found !== undefined) this.out.add(found.rule, found.message, pointer, value)
  }

  /** The pairings of a level: target pointers, then each right side. */
  private * pairings(map: Record<string, unknown>, pointer: string, top: boolean): Steps<void> {
    for (const left of keysOf(map)) {
      const right = map[left]
      const here = at(pointer, left)
      const found = pointerIssue(left)
      if (found !== undefined) this.out.add(found.rule, found.message, here, left)
      else if (top && /^\/[^/]*$/.test(left) && ENVELOPE_KEYS.has(parsePointer(left)[0]!)) {
        this.out.add('CTX-3', 'a top level pairing writes an envelope key', here, left)
      }
      const walk = this.descriptor(right, here, 'pairing')
      if (walk !== undefined) yield * walk
      // A yield passes through every walk it is nested in: one every few pairings (inner ones counted too).
      if (++this.steps % PAIRINGS_PER_YIELD === 0) yield
    }
  }

  /**
   * Any descriptor: a string form, a keyword object, or (as a pairing's right side) a variant list.
   * What holds more to walk (an object, a list) is returned as the walk, the rest checked at once:
   * a walk is made only where there is something to walk.
   */
  descriptor(value: unknown, pointer: string, position: Position): Steps<void> | undefined {
    if (typeof value === 'string') {
      this.stringDescriptor(value, pointer)
      return undefined
    }
    if (Array.isArray(value)) {
      if (position === 'pairing') return this.variants(value, pointer)
      this.out.add('DOC-5', 'a variant list is a descriptor only as the right side of a pairing', pointer, value)
      return undefined
    }
    if (isObject(value)) return this.descriptorObject(value, pointer, false)
    this.out.add('DOC-5', 'a descriptor must be a string, an object or an array', pointer, value)
    return undefined
  }

  private * variants(list: unknown[], pointer: string): Steps<void> {
    for (let i = 0; i < list.length; i++) {
      // A hole (an array a caller built, never JSON's) is skipped, as forEach skips it.
      if (!(i in list)) continue
      const walk = this.descriptor(list[i], at(pointer, String(i)), 'read')
      if (walk !== undefined) yield * walk
    }
  }

  private stringDescriptor(text: string, pointer: string): void {
    if (text.startsWith('#')) {
      this.out.add('DOC-2', 'fragment pointers are not valid mapping grammar; use the plain pointer form', pointer, text)
      return
    }
    if (text.startsWith('/')) return this.pointerOperand(text, pointer)
    if (text.includes('../')) return
    if (this.reach !== null && this.reach.mapping(text) === undefined) {
      this.out.add('REG-1', `${text} matches no registered mapping`, pointer, text)
    }
  }

  private reference(id: unknown, pointer: string): void {
    if (this.reach !== null && typeof id === 'string' && this.reach.mapping(id) === undefined) {
      this.out.add('REG-1', `${id} matches no registered mapping`, pointer, id)
    }
  }

  /**
   * Where following the names a mapping's pairings are given by leads, by the name it starts from:
   * null when it reaches pairings (or something that is not a name), else the name it loops
   * through. Each name is followed once per traversal, so a chain of names costs its length.
   */
  private readonly reaches = new Map<string, string | null>()

  /**
   * A name used as a `mapping` / `each` value: it must exist, and following the names its own
   * pairings are given by must not lead back to it (evaluation would never find the pairings).
   */
  private mappingReference(id: unknown, pointer: string): void {
    if (this.reach === null || typeof id !== 'string') return
    if (this.reach.mapping(id) === undefined) return this.reference(id, pointer)
    const through = this.loopThrough(id, this.reach)
    if (through !== null) this.out.add('REG-1', `${id} never reaches pairings: its mapping references loop through ${through}`, pointer, id)
  }

  /**
   * The name that following `id`'s pairing names first meets again, or null when the names end.
   * The names met are remembered: one on the loop loops through itself (from it, it is the first
   * met again); one leading into a loop loops through the name the loop is entered at.
   */
  private loopThrough(id: string, reach: Reachability): string | null {
    const path: string[] = []
    const onPath = new Map<string, number>()
    let next: unknown = id
    let result: string | null = null
    let entered = -1
    while (typeof next === 'string') {
      const known = this.reaches.get(next)
      if (known !== undefined) {
        // A name on a loop is the loop's entry for whoever comes to it; past a tail, its entry.
        result = known === next ? next : known
        break
      }
      const at = onPath.get(next)
      if (at !== undefined) {
        entered = at
        result = next
        break
      }
      onPath.set(next, path.length)
      path.push(next)
      const found = reach.mapping(next)
      if (!isObject(found)) break
      const inner = pairingValueOf(found)
      const whole = isObject(inner) ? standingAlone(inner) : undefined
      next = whole === undefined ? inner : (inner as Record<string, unknown>)[whole.name]
    }
    for (let i = 0; i < path.length; i++) this.reaches.set(path[i]!, entered !== -1 && i >= entered ? path[i]! : result)
    return this.reaches.get(id)!
  }

  private * descriptorObject(descriptor: Record<string, unknown>, pointer: string, top: boolean): Steps<void> {
    const whole = standingAlone(descriptor)
    if (whole !== undefined) {
      // It stands for the whole descriptor (`$ref`); the keys beside it are never read.
      const here = at(pointer, whole.name)
      this.keywordOperand(whole.name, descriptor[whole.name], here)
      const asked = this.keywordParts(whole.name, descriptor[whole.name], here, descriptor, top)
      if (asked !== undefined) {
        for (const request of asked) {
          const walk = request()
          if (walk !== undefined) yield * walk
        }
      }
      return
    }
    for (const key of Object.keys(descriptor)) {
      const value = descriptor[key]
      const here = at(pointer, key)
      if (!isKeyword(key)) {
        this.extensionKey(key, value, here)
        continue
      }
      this.keywordOperand(key, value, here)
      const asked = this.keywordParts(key, value, here, descriptor, top)
      if (asked === undefined) continue
      // What the keyword asked, from the first descriptor or pairing value it named on, in its order.
      for (const request of asked) {
        const walk = request()
        if (walk !== undefined) yield * walk
      }
    }
  }

  /**
   * While a keyword's `parts` runs: what it asked of the visit from the first nested descriptor
   * or pairing value on, in its order, done once it returns, so that what it names is walked step
   * by step and every finding is still reported in the order the keyword made it. (What it asks
   * before naming one is done at once: most keywords only report.)
   */
  private asked: Array<() => Steps<void> | undefined | void> | undefined
  private inParts = false
  /** The pointer of the keyword whose `parts` runs, and whether its descriptor is at a document's top. */
  private partsAt = ''
  private partsTop = false

  /**
   * What lies inside an operand (nested descriptors, pointers, names), as written: the keyword's own
   * `parts`, run; what it asked from the first descriptor or pairing value it named on is returned,
   * to be done in order, each request giving the walk it needs, if any.
   */
  private keywordParts(key: string, value: unknown, here: string, descriptor: Record<string, unknown>, top: boolean): Array<() => Steps<void> | undefined | void> | undefined {
    const parts = keywordRecord(key)?.parts
    if (parts === undefined) return undefined
    this.inParts = true
    this.partsAt = here
    this.partsTop = top
    try {
      parts(value, descriptor, this.visit)
      return this.asked
    } finally {
      this.asked = undefined
      this.inParts = false
    }
  }

  /** A visit's request: done now unless something is waiting to be walked before it (`keywordContents`). */
  private ask(request: () => Steps<void> | undefined | void, walks: boolean): void {
    if (!this.inParts) throw new Error('a keyword visited outside its parts')
    if (this.asked === undefined && !walks) {
      request()
      return
    }
    ;(this.asked ??= []).push(request)
  }

  /** Where a part stands: the keyword's pointer continued by the part's tokens. */
  private partAt(tokens: readonly string[]): string {
    return tokens.length === 0 ? this.partsAt : atTokens(this.partsAt, tokens)
  }

  /**
   * What a keyword's `parts` may ask of this traversal: every part as written. A descriptor and a
   * switch's case alike are read where variant lists are not allowed; an ancestry is checked by
   * `$extend` itself (through `mappings` and `inheritance`).
   */
  private readonly visit: Parts = {
    pointer: (value, tokens) => {
      const pointer = this.partAt(tokens)
      this.ask(() => this.pointerOperand(value, pointer), false)
    },
    // A string holds nothing to walk: checked at once, unless something before it waits to be walked.
    descriptor: (value, tokens) => {
      const pointer = this.partAt(tokens)
      this.ask(() => this.descriptor(value, pointer, 'read'), typeof value !== 'string')
    },
    alternative: (value, tokens) => this.visit.descriptor(value, tokens),
    pairings: (value, tokens) => {
      const pointer = this.partAt(tokens)
      const top = this.partsTop
      this.ask(() => this.pairingValue(value, pointer, top), typeof value !== 'string')
    },
    ancestry: () => {},
    initializer: (name, tokens) => {
      const pointer = this.partAt(tokens)
      this.ask(() => {
        if (this.reach !== null && !this.reach.initializer(name)) this.out.add('KW-init-1', `${name} matches no registered initializer`, pointer, name)
      }, false)
    },
    transformer: (name, tokens) => {
      const pointer = this.partAt(tokens)
      this.ask(() => {
        if (this.reach !== null && !this.reach.transformer(name)) this.out.add('KW-transform-1', `${name} matches no registered transformer`, pointer, name)
      }, false)
    },
    reference: (id, tokens) => {
      const pointer = this.partAt(tokens)
      this.ask(() => this.reference(id, pointer), false)
    },
    // Answers (they report nothing), given at once.
    mappings: () => {
      const reach = this.reach
      return reach === null ? null : (id) => reach.mapping(id)
    },
    inheritance: (descriptor, self) => {
      if (this.reach === null) return undefined
      this.ancestry ??= new Ancestry(this.reach.mapping)
      return this.ancestry.problem(descriptor, self)
    },
    report: (rule, message, tokens, descriptor) => {
      const pointer = this.partAt(tokens)
      this.ask(() => this.out.add(rule, message, pointer, descriptor), false)
    },
  }

  /** The value of `mapping` / `each`: a mapping reference, a descriptor, or the pairings themselves (a walk, returned as `descriptor` returns one). */
  private pairingValue(value: unknown, here: string, top: boolean): Steps<void> | undefined {
    if (typeof value === 'string') {
      this.mappingReference(value, here)
      return undefined
    }
    if (!isObject(value)) return undefined
    const whole = standingAlone(value)
    if (whole !== undefined) {
      // The mapping it names gives the pairings (its own must not lead back to it).
      this.keywordOperand(whole.name, value[whole.name], at(here, whole.name))
      this.mappingReference(value[whole.name], at(here, whole.name))
      return undefined
    }
    if (pairingValueForm(value) === 'descriptor') return this.descriptorObject(value, here, false)
    return this.pairings(value, here, top)
  }

  /** The keys a descriptor may hold here: every keyword, then every registered plugin. */
  private * descriptorKeys(): Iterable<string> {
    for (const keyword of KEYWORDS) yield keyword.name
    if (this.reach?.plugins !== undefined) yield * this.reach.plugins()
  }

  /** A key that is no keyword: a plugin (whose `pointer` must parse, and whose own options check passes), or inert (KW-2). */
  private extensionKey(key: string, value: unknown, here: string): void {
    if (this.reach === null) return
    if (!this.reach.plugin(key)) {
      this.out.add('KW-2', `${key} matches no keyword or registered extension${didYouMean(key, this.descriptorKeys())}`, here, value)
      return
    }
    if (isObject(value) && truthy(value.pointer)) {
      if (typeof value.pointer !== 'string') this.out.add('PTR-10', `${String(value.pointer)} is not a valid JSON Pointer`, at(here, 'pointer'), value.pointer)
      else this.pointerOperand(value.pointer, at(here, 'pointer'))
    }
    const check = this.reach.pluginOptions?.(key)
    if (check === undefined) return
    let issues: readonly PluginOptionIssue[]
    try {
      issues = check(value)
    } catch (error) {
      issues = [{ rule: 'EXT-OPTIONS', message: `the options check of plugin ${key} failed: ${(error as Error)?.message ?? String(error)}` }]
    }
    for (const issue of issues) {
      // Reported with the part of the options it is about, so no finding repeats the whole options.
      let pointer = here
      let descriptor = value
      for (const token of issue.at ?? []) {
        pointer = at(pointer, token)
        descriptor = isObject(descriptor) || Array.isArray(descriptor) ? (Object.hasOwn(descriptor, token) ? (descriptor as Record<string, unknown>)[token] : undefined) : undefined
      }
      this.out.add(issue.rule, issue.message, pointer, descriptor ?? null)
    }
  }
}

/** Validate a document; with `reach`, at the instance level. */
export function validateDocument(document: unknown, reach: Reachability | null, strict = false): ValidationReport {
  return complete(validating(document, reach, strict))
}

/** `validateDocument` step by step (engine/steps.ts): it yields between pairings. */
export function * validating(document: unknown, reach: Reachability | null, strict = false): Steps<ValidationReport> {
  const out = new Reporter(strict)
  const deep = yield * tooDeep(document, MAX_DOCUMENT_DEPTH)
  if (deep !== undefined) {
    out.add('DOC-6', `mapping nesting exceeds the maximum depth of ${MAX_DOCUMENT_DEPTH}`, deep, null)
    return out.report()
  }
  yield * new Traversal(out, reach).document(document, '')
  return out.report()
}

/** A compound document's members shadow the instance's mappings, exactly as in evaluation. */
export function withMembers(document: unknown, reach: Reachability): Reachability {
  const members = membersOf(document)
  if (members === undefined) return reach
  const local = new Map<string, unknown>()
  for (const member of members) {
    const id = idOf(member)
    if (id !== undefined) local.set(id, member)
  }
  return { ...reach, mapping: (id) => (local.has(id) ? local.get(id) : reach.mapping(id)) }
}

/** Document level: well-formedness only, never a reachability rule (validation.md §1). */
export function validate(document: unknown): ValidationReport {
  return validateDocument(document, null)
}
