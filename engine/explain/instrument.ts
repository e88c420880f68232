// Explain mode's plans: the same closures as a normal plan, each wrapped to record into the run's
// trace (explain/trace.ts). The compiler builds these only when it compiles in explain mode, into
// caches of its own, so a normal plan carries no trace code and checks no flag.
import sourceKeyword from '../keywords/locate/source.js'
import type { CompiledPipeline } from '../keywords/pipeline.js'
import type { CompiledLocate } from '../keywords/record.js'
import type { Context, Place, Plan, RegistryView, Slot, Step } from '../context.js'
import { resolvePath } from '../pointer.js'
import { putFirstDefined, type Put } from '../procedures.js'
import type { MappingDocument } from '../types.js'
import { isThenable } from '../values.js'
import {
  beginPairing,
  claimForVariants,
  claimStages,
  notePlugin,
  noteRead,
  noteStage,
  noteVariant,
  noteWrite,
  type Frame,
} from './trace.js'

/**
 * Where in the input a context's `source` stands. A context made by SHIFT for a descriptor's own
 * `source` already carries that pointer in its path while its source is still its parent's.
 */
function sourceLocation(context: Context): string {
  const parent = context.parent
  const shifted = parent !== null && context.sourcePath !== undefined && context.index < 0 && context.source === parent.source
  return shifted ? parent.paths.source : context.paths.source
}

/** A keyword object's pipeline, every stage recording the value it leaves. */
export function tracedPipeline(descriptor: Record<string, unknown>, pipeline: CompiledPipeline): { locate: CompiledLocate; steps: Step[] } {
  const located = pipeline.located
  const operand = located === undefined ? undefined : descriptor[located]
  // The locate keyword says where its read stands in the input (none: it reads no input).
  const readsAt = pipeline.readsAt
  const readAt: ((context: Context) => string) | undefined =
    typeof operand !== 'string' || readsAt === undefined ? undefined : (context) => readsAt(operand, sourceLocation(context))
  const inner = pipeline.locate.locate
  const locate: CompiledLocate = {
    sync: pipeline.locate.sync,
    locate(context) {
      claimStages(context, descriptor)
      const before = context.run.errors.length
      if (readAt !== undefined) noteRead(context, readAt(context))
      const value = inner(context)
      if (value instanceof Promise) {
        return value.then((settled) => {
          noteStage(context, descriptor, 'locate', located, settled, before)
          return settled
        })
      }
      noteStage(context, descriptor, 'locate', located, value, before)
      return value
    },
  }
  const steps = pipeline.steps.map((step, i) => {
    const label = pipeline.labels[i]
    if (label === undefined || label === null) return step
    return label.stage === 'plugins' ? timedPlugin(descriptor, step, label.keyword) : tracedStep(descriptor, step, label.stage, label.keyword)
  })
  return { locate, steps }
}

function tracedStep(descriptor: Record<string, unknown>, step: Step, stage: 'dispatch' | 'shape' | 'validate' | 'finalize', keyword: string): Step {
  const run = step.run
  return {
    awaits: step.awaits,
    run(value, context) {
      const before = context.run.errors.length
      const out = run(value, context)
      if (step.awaits && isThenable(out)) {
        return Promise.resolve(out).then((settled) => {
          noteStage(context, descriptor, stage, keyword, settled, before)
          return settled
        })
      }
      noteStage(context, descriptor, stage, keyword, out, before)
      return out
    },
  }
}

/** A plugin step, timed from its call to its settled result. */
function timedPlugin(descriptor: Record<string, unknown>, step: Step, name: string): Step {
  const run = step.run
  return {
    awaits: true,
    run(value, context) {
      const before = context.run.errors.length
      const started = performance.now()
      const out = run(value, context)
      if (isThenable(out)) {
        return Promise.resolve(out).then((settled) => {
          notePlugin(context, name, performance.now() - started)
          noteStage(context, descriptor, 'plugins', name, settled, before)
          return settled
        })
      }
      notePlugin(context, name, performance.now() - started)
      noteStage(context, descriptor, 'plugins', name, out, before)
      return out
    },
  }
}

/**
 * A string descriptor's read: a pointer into the source, or a relative reference (`../x`), which
 * resolves against the source path as it stands (`relative`) and reads from the input's root.
 */
export function tracedRead(text: string, relative: boolean, get: (context: Context) => unknown): (context: Context) => unknown {
  return (context) => {
    claimStages(context, text)
    const before = context.run.errors.length
    noteRead(context, resolvePath(relative ? context.paths.source : sourceLocation(context), text))
    const value = get(context)
    noteStage(context, text, 'locate', sourceKeyword.name, value, before)
    return value
  }
}

/** A pairing's run: its trace begun, its write observed, its right side evaluated by `evaluate`. */
export function tracedPairing(
  left: string,
  place: Place | undefined,
  put: Put,
  evaluate: (context: Context, put: Put, frame: Frame) => Promise<void> | undefined
): (context: Context) => Promise<void> | undefined {
  return (context) => {
    const frame = beginPairing(context, left, place)
    const errors = context.run.errors
    const observed: Put = (target, value, fresh) => {
      const before = errors.length
      put(target, value, fresh)
      noteWrite(frame, value, value !== undefined && errors.length === before)
    }
    return evaluate(context, observed, frame)
  }
}

/** A variant list: every element READ, the earliest defined put (procedures.ts putFirstDefined), and which one it was. */
export function putVariant(slots: readonly Slot[], context: Context, put: Put, frame: Frame): Promise<void> | undefined {
  claimForVariants(frame)
  return putFirstDefined(slots, context, put, (index) => noteVariant(frame, index))
}

/** A registry whose names resolve to explain-mode plans of the same documents. */
export class ExplainRegistry implements RegistryView {
  constructor(
    private readonly base: RegistryView,
    private readonly compiler: { plan(descriptor: unknown): Plan }
  ) {}

  get shadowsPointers(): boolean {
    return this.base.shadowsPointers
  }

  lookup(id: string): Plan | undefined {
    const plan = this.base.lookup(id)
    return plan === undefined ? undefined : this.compiler.plan(plan.descriptor)
  }

  view(): Readonly<Record<string, Readonly<MappingDocument>>> {
    return this.base.view()
  }
}
