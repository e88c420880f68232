// `switch` (dispatch, language.md §8.4): reads a branch key from the scope it names and evaluates the
// matching case (own keys only; a falsy case falls back to `default`).
import type { Descriptor } from '../../descriptor.js'
import type { Context, Slot, Step } from '../../context.js'
import { noteBranch } from '../../explain/trace.js'
import { unionOf } from '../../output-types.js'
import { read } from '../../procedures.js'
import { isObject, toKey, truthy } from '../../values.js'
import { keyword, POINTER_SCHEMA, READ_DESCRIPTOR_SCHEMA } from '../record.js'
import { refuse } from '../grammar.js'

/** The scopes a switch may read its key from, in the order they are tried. */
const SCOPES = ['source', 'input', 'output'] as const

type Scope = (typeof SCOPES)[number]

/** Where a key pointer is read: the pipeline value, the input, the output. */
const READ_FROM: Readonly<Record<Scope, (value: unknown, context: Context) => unknown>> = {
  source: (value) => value,
  input: (_value, context) => context.run.input,
  output: (_value, context) => context.run.output,
}

export default keyword<'switch', 'dispatch'>({
  name: 'switch',
  stage: 'dispatch',
  tier: 'core',
  schema: {
    description: 'Read a branch key from the source, input or output pointer given, and evaluate the case of that name (`default` when none matches).',
    type: 'object',
    required: ['cases'],
    properties: {
      source: { ...POINTER_SCHEMA, description: 'Read the key from the pipeline value at this pointer.' },
      input: { ...POINTER_SCHEMA, description: 'Read the key from the whole input at this pointer.' },
      output: { ...POINTER_SCHEMA, description: 'Read the key from the output under construction at this pointer.' },
      cases: { type: 'object', description: 'Descriptors by branch key; `default` is used when no key matches.', additionalProperties: READ_DESCRIPTOR_SCHEMA },
    },
    anyOf: SCOPES.map((scope) => ({ required: [scope], properties: { [scope]: { type: 'string', minLength: 1 } } })),
    ...refuse('KW-switch-1', 'switch must name source, input or output and give cases'),
  },
  observesPaths: true,
  // The scopes' pointers, then the cases: a run takes one case at most.
  parts(value, _descriptor, visit) {
    if (!isObject(value)) return
    for (const scope of SCOPES) {
      const operand = value[scope]
      if (operand !== undefined && typeof operand !== 'string') {
        visit.report('KW-locate-1', `switch.${scope} must be a JSON Pointer string`, [scope], operand)
      } else {
        visit.pointer(operand, [scope])
      }
    }
    if (isObject(value.cases)) {
      for (const [name, branch] of Object.entries(value.cases)) visit.alternative(branch, ['cases', name])
    }
  },
  // The value unswitched (a falsy key), a case's, or undefined (no case).
  outputType(value, operand, _descriptor, infer) {
    if (!truthy(operand)) return value
    const cases = isObject(operand) && isObject(operand.cases) ? Object.values(operand.cases).filter(truthy) : []
    return { alts: unionOf([value.alts, ...cases.map((branch) => infer.read(branch).alts)]), undefined: true }
  },
  compile(descriptor, cx) {
    const operand = descriptor.switch
    if (!truthy(operand)) return null
    const spec = isObject(operand) ? operand : {}
    let keyOf: (value: unknown, context: Context) => unknown = () => undefined
    const scope = SCOPES.find((name) => truthy(spec[name]))
    if (scope !== undefined) {
      const readKey = cx.reader(spec[scope])
      const from = READ_FROM[scope]
      keyOf = (value, context) => readKey(from(value, context))
    }
    const cases = new Map<string, Slot>()
    if (isObject(spec.cases)) {
      for (const [name, branch] of Object.entries(spec.cases)) {
        if (truthy(branch)) cases.set(name, cx.slot(branch))
      }
    }
    const fallback = cases.get('default')
    /** The case for a key's text: its own, the default, or none. */
    const take = (name: string, value: unknown, context: Context): unknown => {
      const slot = cases.get(name) ?? fallback
      return slot === undefined ? undefined : read(slot, context, value)
    }
    /**
     * The step: the key read, its text made (counted as built, an array's join, before it is made),
     * and its case taken. In explain mode `traced` notes the case taken (or none) in the pairing's
     * trace first: the one run, with the note beside it.
     */
    const run = (value: unknown, context: Context, traced: boolean): unknown => {
      const key = keyOf(value, context)
      if (!key) {
        if (traced) noteBranch(context, descriptor, { switch: null })
        return value
      }
      const name = toKey(key, context.run)
      if (traced) noteBranch(context, descriptor, { switch: cases.has(name) ? name : fallback !== undefined ? 'default' : null, key: name })
      return take(name, value, context)
    }
    const traced = cx.tracing
    const step: Step = { awaits: true, run: traced ? (value, context) => run(value, context, true) : (value, context) => run(value, context, false) }
    return step
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    switch?: { source?: string; input?: string; output?: string; cases: Record<string, Descriptor> }
  }
}
