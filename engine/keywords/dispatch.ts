// Stage 2, dispatch (engine.md §8.4): `switch` reads a branch key from the scope it names and
// evaluates the matching case (own keys only; a falsy case falls back to `default`).
import type { Context } from '../context.js'
import type { CompileContext, Slot, Step } from '../plan.js'
import { read } from '../procedures.js'
import { isObject, toKey, truthy } from '../values.js'

export function compileSwitch(descriptor: Record<string, unknown>, compiler: CompileContext): Step | null {
  const operand = descriptor.switch
  if (!truthy(operand)) return null
  const spec = isObject(operand) ? operand : {}
  let keyOf: (value: unknown, context: Context) => unknown = () => undefined
  if (truthy(spec.source)) {
    const readKey = compiler.reader(spec.source)
    keyOf = (value) => readKey(value)
  } else if (truthy(spec.input)) {
    const readKey = compiler.reader(spec.input)
    keyOf = (_value, context) => readKey(context.run.input)
  } else if (truthy(spec.output)) {
    const readKey = compiler.reader(spec.output)
    keyOf = (_value, context) => readKey(context.run.output)
  }
  const cases = new Map<string, Slot>()
  if (isObject(spec.cases)) {
    for (const [name, descriptorOfCase] of Object.entries(spec.cases)) {
      if (truthy(descriptorOfCase)) cases.set(name, compiler.slot(descriptorOfCase))
    }
  }
  const fallback = cases.get('default')
  return {
    awaits: true,
    run(value, context) {
      const key = keyOf(value, context)
      if (!key) return value
      const slot = cases.get(toKey(key)) ?? fallback
      if (slot === undefined) return undefined
      return read(slot, context, value)
    },
  }
}
