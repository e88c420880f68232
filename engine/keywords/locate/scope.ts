// What the locate keywords share: a pointer read from a scope, and a list of descriptors READ.
import type { KeywordName } from '../../descriptor.js'
import type { CompileContext } from '../../context.js'
import { readEach } from '../../procedures.js'
import type { Reader } from '../../pointer.js'
import { UNKNOWN, unionOf, type Inference, type Inferred } from '../../output-types.js'
import { truthy } from '../../values.js'
import { keyword, POINTER_SCHEMA, type CompiledLocate, type KeywordRecord, type Locate, type Parts } from '../record.js'
import { refuse } from '../grammar.js'

/**
 * A keyword reading its JSON Pointer operand from one scope. `locateWith` turns the compiled reader
 * into the locate operation; each keyword writes its own, so every read site stays monomorphic.
 */
export function pointerKeyword<N extends KeywordName>(
  name: N,
  description: string,
  locateWith: (read: Reader) => Locate,
  more: Pick<KeywordRecord, 'readsAt' | 'shifts'> = {},
  /** Its inline form (engine/codegen/inline.ts): the read from this scope; none: its step is called. */
  inline?: 'read-source' | 'read-input'
) {
  return keyword<N, 'locate'>({
    name,
    stage: 'locate',
    tier: 'core',
    schema: { ...POINTER_SCHEMA, description, type: 'string', ...refuse('KW-locate-1', `${name} must be a JSON Pointer string`) },
    pointer: true,
    ...more,
    parts: (value, _descriptor, visit) => visit.pointer(value, []),
    // A read from a scope: nothing is known of what it finds.
    outputType: (_value, operand) => (truthy(operand) ? UNKNOWN : undefined),
    compile(descriptor, cx) {
      if (!truthy(descriptor[name])) return null
      return { locate: locateWith(cx.reader(descriptor[name])), sync: true }
    },
    ...(inline === undefined ? {} : { inline }),
  })
}

/** A combinator's elements: every one is READ whenever it runs. */
export const listParts = (value: unknown, _descriptor: Record<string, unknown>, visit: Parts): void => {
  if (Array.isArray(value)) value.forEach((element, i) => visit.descriptor(element, [String(i)]))
}

/** Output-schema inference of `first` and `last`: one of the elements' values, undefined when all may be. */
export function oneOfElements(_value: Inferred, operand: unknown, _descriptor: Record<string, unknown>, infer: Inference): Inferred | undefined {
  if (!Array.isArray(operand)) return undefined
  const values = operand.map((element) => infer.read(element))
  return { alts: unionOf(values.map((v) => v.alts)), undefined: values.every((v) => v.undefined) }
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
