// What the locate keywords share: a pointer read from a scope, and a list of descriptors READ.
import type { CompileContext } from '../../plan.js'
import { readEach } from '../../procedures.js'
import { issue, ok, type CompiledLocate, type OperandIssue, type Visit } from '../record.js'

/** A pointer operand (KW-locate-1). */
export const pointerOperand = (name: string) => (value: unknown): OperandIssue[] =>
  typeof value === 'string' ? ok : issue('KW-locate-1', `${name} must be a JSON Pointer string`)

export const pointerContents = (value: unknown, at: string, visit: Visit): void => visit.pointer(value, at)

/** A combinator operand (KW-combinator-1). */
export const listOperand = (name: string) => (value: unknown): OperandIssue[] =>
  Array.isArray(value) ? ok : issue('KW-combinator-1', `${name} must be an array of descriptors`)

export const listContents = (value: unknown, at: string, visit: Visit): void => {
  if (Array.isArray(value)) value.forEach((element, i) => visit.descriptor(element, visit.at(at, String(i))))
}

/** A combinator: every element READ, then `choose` picks from the values. */
export function combinator(name: string, choose: (values: readonly unknown[]) => unknown) {
  return (descriptor: Record<string, unknown>, cx: CompileContext): CompiledLocate | null => {
    const operand = descriptor[name]
    if (!Array.isArray(operand)) return null
    const slots = operand.map((element) => cx.slot(element))
    return {
      sync: false,
      locate: (context) => {
        const values = readEach(slots, context)
        return values instanceof Promise ? values.then(choose) : choose(values)
      },
    }
  }
}
