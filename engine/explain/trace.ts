// The explain trace of one evaluation: per pairing, where it writes, what it read, the value after
// each pipeline stage, the branch it took and its plugins' timings. Only plans compiled in explain
// mode (explain/instrument.ts) record here; a plan compiled normally never looks for a trace.
//
// A trace is bounded whatever the document and input: a fan-out over many elements keeps the
// pairings of its first elements only, the whole trace keeps at most MAX_TRACES pairings, and every
// value is a bounded JSON-safe preview. Whatever was left out is counted and `truncated` says so.
import type { Context, Place } from '../context.js'
import type { Run } from '../run.js'
import { escapeToken } from '../pointer.js'
import type { ErrorObject } from '../types.js'

/** A pipeline stage of language.md §8, as the trace names it. */
export type TraceStage = 'locate' | 'dispatch' | 'plugins' | 'shape' | 'validate' | 'finalize'

/** The value after one stage step. */
export interface StageTrace {
  readonly stage: TraceStage
  /** The keyword (or plugin) of the step; validators are one step, named together. */
  readonly keyword?: string
  /** A JSON-safe preview of the value; absent when `absent` is true. */
  readonly value?: unknown
  /** The value was undefined (nothing to write). */
  readonly absent?: true
  /** The preview was cut: it shows the value's first members only. */
  readonly truncated?: true
  /** Error objects the step appended. */
  readonly errors?: readonly unknown[]
}

/** Which branch a switch or a variant list took. */
export type BranchTrace =
  | { readonly switch: string | null; readonly key?: string }
  | { readonly variant: number | null }

export interface PluginTiming {
  readonly name: string
  /** Milliseconds from the call to its settled result. */
  readonly ms: number
}

/** One run of one pairing. */
export interface PairingTrace {
  /** The pairing's left pointer, into its level's target. */
  readonly target: string
  /** The pairing's place in its document (as in budget errors), when known. */
  readonly pointer?: string
  /** The registered mapping the pairing belongs to, when it is one. */
  readonly mapping?: string
  /** The element of the enclosing `each` this run mapped. */
  readonly element?: number
  /** Input pointers read (absolute, from the input's root). */
  readonly reads: readonly string[]
  /** The right side's value after each stage, in order. */
  readonly stages: readonly StageTrace[]
  readonly branch?: BranchTrace
  readonly plugins?: readonly PluginTiming[]
  /** The pairings of the levels this pairing's right side mapped (`mapping`, `each`, references). */
  readonly pairings?: readonly PairingTrace[]
  /** Runs of nested pairings not kept (past the element or trace bounds). */
  readonly omitted?: number
  /** Whether a value was written at `target`. */
  readonly written: boolean
  /** A preview of what was written (absent when nothing was). */
  readonly value?: unknown
  readonly truncated?: true
}

/** The explain trace of one evaluation, beside its envelope. */
export interface Explanation {
  readonly pairings: readonly PairingTrace[]
  /** Something was left out: pairing runs past the bounds, or values cut in their previews. */
  readonly truncated: boolean
}

/** Pairing runs one trace keeps at most, nested ones included. */
export const MAX_TRACES = 1000
/** Elements of one `each` (or array) whose pairings are traced; later elements are only counted. */
export const MAX_ELEMENTS = 20
/** Entries one pairing trace keeps per list (reads, stages, plugins). */
const MAX_ENTRIES = 32
/** Values (members counted) one preview shows, and how long a string in it may be. */
const PREVIEW_VALUES = 50
const PREVIEW_TEXT = 200
const PREVIEW_DEPTH = 8

interface Preview {
  value?: unknown
  absent?: true
  truncated?: true
}

/**
 * A JSON-safe bounded copy of a value: what JSON.stringify would print (undefined and functions
 * left out of objects, null in arrays, non-finite numbers null), cut after PREVIEW_VALUES values.
 */
export function preview(value: unknown): Preview {
  if (value === undefined) return { absent: true }
  let budget = PREVIEW_VALUES
  let cut = false
  const copy = (v: unknown, depth: number): unknown => {
    budget--
    if (v === null || typeof v === 'boolean') return v
    if (typeof v === 'number') return Number.isFinite(v) ? v : null
    if (typeof v === 'string') {
      if (v.length <= PREVIEW_TEXT) return v
      cut = true
      return `${v.slice(0, PREVIEW_TEXT)}…`
    }
    if (typeof v === 'bigint') return String(v)
    if (typeof v !== 'object') return undefined
    if (typeof (v as { then?: unknown }).then === 'function') return '[pending]'
    if (depth >= PREVIEW_DEPTH) {
      cut = true
      return Array.isArray(v) ? [] : {}
    }
    if (Array.isArray(v)) {
      const out: unknown[] = []
      for (let i = 0; i < v.length; i++) {
        if (budget <= 0) {
          cut = true
          break
        }
        const member = copy(v[i], depth + 1)
        out.push(member === undefined ? null : member)
      }
      return out
    }
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(v)) {
      if (budget <= 0) {
        cut = true
        break
      }
      const member = copy((v as Record<string, unknown>)[key], depth + 1)
      if (member !== undefined) Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true })
    }
    return out
  }
  const shown = copy(value, 0)
  if (shown === undefined) return { absent: true }
  return cut ? { value: shown, truncated: true } : { value: shown }
}

/** A pairing run being traced, or one left out (`kept` false) whose nested runs are left out too. */
class Frame {
  readonly reads: string[] = []
  readonly stages: StageTrace[] = []
  readonly plugins: PluginTiming[] = []
  readonly children: Frame[] = []
  branch: BranchTrace | undefined
  /** The descriptor whose stages this trace shows: the first one evaluated for the pairing. */
  owner: unknown = undefined
  omitted = 0
  written = false
  value: Preview = { absent: true }

  constructor(
    readonly parent: Frame | null,
    readonly element: number | undefined,
    readonly kept: boolean,
    readonly left: string,
    readonly place: Place | undefined
  ) {}

  toJSON(): PairingTrace {
    const trace: Record<string, unknown> = { target: this.left }
    if (this.place !== undefined) {
      trace.pointer = `${this.place.pointer}/${escapeToken(this.left)}`
      if (this.place.mapping !== undefined) trace.mapping = this.place.mapping
    }
    if (this.element !== undefined) trace.element = this.element
    trace.reads = this.reads
    trace.stages = this.stages
    if (this.branch !== undefined) trace.branch = this.branch
    if (this.plugins.length > 0) trace.plugins = this.plugins
    if (this.children.length > 0) trace.pairings = this.children.map((child) => child.toJSON())
    if (this.omitted > 0) trace.omitted = this.omitted
    trace.written = this.written
    if (this.value.value !== undefined) trace.value = this.value.value
    if (this.value.truncated) trace.truncated = true
    return trace as unknown as PairingTrace
  }
}

/** A frame's lists are bounded; past the bound the trace says it was cut. */
function bounded<T>(tracer: Tracer, list: T[], entry: T): void {
  if (list.length < MAX_ENTRIES) list.push(entry)
  else tracer.truncated = true
}

/** A frame that no trace keeps: returned when there is no tracer, so callers never branch. */
const NOWHERE = new Frame(null, undefined, false, '', undefined)

/**
 * The trace of one evaluation. A pairing run is found from its evaluation context: the pairings of
 * one level share a context and run strictly one after another, while concurrent runs (the
 * elements of an `each`) each have their own, so a context → frame map follows both.
 */
export class Tracer {
  private readonly roots: Frame[] = []
  private readonly frames = new WeakMap<Context, Frame>()
  private traces = 0
  private omitted = 0
  truncated = false

  /** A pairing starts in its level's pairing context. */
  begin(context: Context, left: string, place: Place | undefined): Frame {
    const sibling = this.frames.get(context)
    let parent: Frame | null
    let element: number | undefined
    if (sibling !== undefined) {
      parent = sibling.parent
      element = sibling.element
    } else {
      ;({ parent, element } = this.enclosing(context))
    }
    let kept = parent === null || parent.kept
    if (kept && element !== undefined && element >= MAX_ELEMENTS) kept = false
    if (kept && this.traces >= MAX_TRACES) kept = false
    const frame = new Frame(parent, element, kept, left, place)
    if (kept) {
      this.traces++
      ;(parent === null ? this.roots : parent.children).push(frame)
    } else {
      this.truncated = true
      let counted: Frame | null = parent
      while (counted !== null && !counted.kept) counted = counted.parent
      if (counted === null) this.omitted++
      else counted.omitted++
    }
    this.frames.set(context, frame)
    return frame
  }

  /** The nearest traced pairing above a new level's context, and the element index between. */
  private enclosing(context: Context): { parent: Frame | null; element: number | undefined } {
    let element: number | undefined
    for (let c: Context | null = context; c !== null; c = c.parent) {
      const frame = this.frames.get(c)
      if (frame !== undefined) return { parent: frame, element }
      if (element === undefined && c.index >= 0) element = c.index
    }
    return { parent: null, element }
  }

  /** The pairing run an evaluation step belongs to. */
  frameOf(context: Context): Frame {
    for (let c: Context | null = context; c !== null; c = c.parent) {
      const frame = this.frames.get(c)
      if (frame !== undefined) return frame
    }
    return NOWHERE
  }

  explanation(): Explanation {
    const pairings = this.roots.map((frame) => frame.toJSON())
    return { pairings, truncated: this.truncated || this.omitted > 0 }
  }
}

const tracers = new WeakMap<Run, Tracer>()

/** Start tracing a run (explain mode only). */
export function traceRun(run: Run): Tracer {
  const tracer = new Tracer()
  tracers.set(run, tracer)
  return tracer
}

function tracerOf(context: Context): Tracer | undefined {
  return tracers.get(context.run)
}

/** The frame a step of this context records into; a frame no trace keeps when none. */
function frameFor(context: Context): { tracer: Tracer | undefined; frame: Frame } {
  const tracer = tracerOf(context)
  return { tracer, frame: tracer === undefined ? NOWHERE : tracer.frameOf(context) }
}

/** A pairing run starts: its frame (never kept when the run is not traced). */
export function beginPairing(context: Context, left: string, place: Place | undefined): Frame {
  const tracer = tracerOf(context)
  return tracer === undefined ? NOWHERE : tracer.begin(context, left, place)
}

/** The pairing wrote (or not) its value. */
export function noteWrite(frame: Frame, value: unknown, written: boolean): void {
  if (!frame.kept) return
  frame.written = written
  frame.value = written ? preview(value) : { absent: true }
}

/** A descriptor's pipeline starts: the first one evaluated for a pairing is the one its stages show. */
export function claimStages(context: Context, descriptor: unknown): void {
  const { frame } = frameFor(context)
  if (frame.kept && frame.owner === undefined) frame.owner = descriptor
}

/** A variant list's elements are each a descriptor: the trace shows the branch, not their stages. */
export function claimForVariants(frame: Frame): void {
  if (frame.kept) frame.owner = VARIANTS
}
const VARIANTS = Symbol('variants')

/** The value after one step of `descriptor`'s pipeline, with the errors the step appended. */
export function noteStage(context: Context, descriptor: unknown, stage: TraceStage, keyword: string | undefined, value: unknown, errorsBefore: number): void {
  const { tracer, frame } = frameFor(context)
  if (tracer === undefined || !frame.kept || frame.owner !== descriptor) return
  const shown = preview(value)
  const entry: Record<string, unknown> = { stage }
  if (keyword !== undefined) entry.keyword = keyword
  if (shown.absent) entry.absent = true
  else entry.value = shown.value
  if (shown.truncated) {
    entry.truncated = true
    tracer.truncated = true
  }
  const errors = context.run.errors
  if (errors.length > errorsBefore) entry.errors = errors.slice(errorsBefore).map((error: ErrorObject) => preview(error).value)
  bounded(tracer, frame.stages, entry as unknown as StageTrace)
}

/** An input pointer the pairing read (any descriptor evaluated for it). */
export function noteRead(context: Context, pointer: string): void {
  const { tracer, frame } = frameFor(context)
  if (tracer === undefined || !frame.kept) return
  if (!frame.reads.includes(pointer)) bounded(tracer, frame.reads, pointer)
}

/** The branch a switch of `descriptor` took. */
export function noteBranch(context: Context, descriptor: unknown, branch: BranchTrace): void {
  const { frame } = frameFor(context)
  if (frame.kept && frame.owner === descriptor) frame.branch = branch
}

/** The branch of a variant list pairing. */
export function noteVariant(frame: Frame, index: number | null): void {
  if (frame.kept) frame.branch = { variant: index }
}

/** A plugin call of the pairing settled after `ms` milliseconds. */
export function notePlugin(context: Context, name: string, ms: number): void {
  const { tracer, frame } = frameFor(context)
  if (tracer === undefined || !frame.kept) return
  bounded(tracer, frame.plugins, { name, ms: Math.round(ms * 1000) / 1000 })
}

export type { Frame }
