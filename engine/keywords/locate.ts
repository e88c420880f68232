// Stage 1, locate (engine.md §8.3): the first truthy of source, target, input, output, first,
// last, all decides where the pipeline value comes from; with none, the scope passes through.
import type { Context } from '../context.js'
import type { CompileContext, Maybe } from '../plan.js'
import { firstDefined, readEach } from '../procedures.js'
import { copyValue, truthy } from '../values.js'

export type Locate = (context: Context) => Maybe<unknown>

const passThrough: Locate = (context) => context.source

function lastDefined(values: readonly unknown[]): unknown {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== undefined) return values[i]
  return undefined
}

function allDefined(values: readonly unknown[]): unknown[] {
  return values.filter((value) => value !== undefined)
}

/** A copy of part of the output under construction; copying is work, counted per container. */
function snapshot(value: unknown, context: Context): unknown {
  if (value === null || typeof value !== 'object') return value
  return copyValue(value, false, (containers) => context.run.tick(containers))
}

/** The locate operation, and whether it always returns a plain value (never a promise). */
export interface CompiledLocate {
  readonly locate: Locate
  readonly sync: boolean
}

export function compileLocate(descriptor: Record<string, unknown>, compiler: CompileContext): CompiledLocate {
  const sync = (locate: Locate): CompiledLocate => ({ locate, sync: true })
  if (truthy(descriptor.source)) {
    const read = compiler.reader(descriptor.source)
    return sync((context) => read(context.source))
  }
  if (truthy(descriptor.target)) {
    // A snapshot: the level's target keeps changing, and a value read from it must never make
    // the output contain itself.
    const read = compiler.reader(descriptor.target)
    return sync((context) => snapshot(read(context.target), context))
  }
  if (truthy(descriptor.input)) {
    const read = compiler.reader(descriptor.input)
    return sync((context) => read(context.run.input))
  }
  if (truthy(descriptor.output)) {
    const read = compiler.reader(descriptor.output)
    return sync((context) => snapshot(read(context.run.output), context))
  }
  for (const [keyword, choose] of [
    ['first', firstDefined],
    ['last', lastDefined],
    ['all', allDefined],
  ] as const) {
    const operand = descriptor[keyword]
    if (!Array.isArray(operand)) continue
    const slots = operand.map((element) => compiler.slot(element))
    return {
      sync: false,
      locate: (context) => {
        const values = readEach(slots, context)
        return values instanceof Promise ? values.then(choose) : choose(values)
      },
    }
  }
  return sync(passThrough)
}
