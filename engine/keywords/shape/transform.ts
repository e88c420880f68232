// `transform` (shape, language.md §8.6, EXT-6): registered transformers in order, each given the
// previous result and, for a step object, a copy of its options.
import type { Step } from '../../context.js'
import { isObject, observed, truthy } from '../../values.js'
import { keyword } from '../record.js'
import { unknownName } from './unknown-name.js'
import { refuse } from '../grammar.js'

const SHAPE_MESSAGE = 'transform must be a transformer name or a list of names and one-key step objects'

export default keyword<'transform', 'shape'>({
  name: 'transform',
  stage: 'shape',
  tier: 'core',
  schema: {
    description: 'Registered transformers applied in order: a name, or a list of names and one-key { name: options } steps.',
    anyOf: [
      { type: 'string' },
      {
        type: 'array',
        items: {
          anyOf: [{ type: 'string' }, { type: 'object', minProperties: 1, maxProperties: 1, ...refuse(undefined, 'a transform step object must have exactly one key') }],
          ...refuse(undefined, SHAPE_MESSAGE),
        },
      },
    ],
    ...refuse('KW-pipeline-1', SHAPE_MESSAGE),
  },
  observesPaths: true,
  needsSettled: true,
  parts(value, _descriptor, visit) {
    if (typeof value === 'string') return visit.transformer(value, [])
    if (!Array.isArray(value)) return
    value.forEach((step, i) => {
      if (typeof step === 'string') visit.transformer(step, [String(i)])
      else if (isObject(step)) for (const name of Object.keys(step)) visit.transformer(name, [String(i), name])
    })
  },
  compile(descriptor, cx, provenance) {
    const operand = descriptor.transform
    if (!truthy(operand)) return null
    const transformers = cx.extensions.transformers
    const calls: Step[] = []
    const call = (name: string, options: Record<string, unknown> | undefined): void => {
      if (!Object.hasOwn(transformers, name)) {
        const step = unknownName(cx, provenance, 'transform', name)
        if (step !== null) calls.push(step)
        return
      }
      const transformer = transformers[name]!
      calls.push({
        awaits: false,
        run: options === undefined ? (value, context) => observed(transformer(value, context)) : (value, context) => observed(transformer(value, context, { ...options })),
      })
    }
    if (typeof operand === 'string') call(operand, undefined)
    else if (Array.isArray(operand)) {
      for (const step of operand) {
        if (typeof step === 'string') call(step, undefined)
        else if (isObject(step)) for (const name of Object.keys(step)) call(name, step)
      }
    }
    if (calls.length === 0) return null
    if (calls.length === 1) return calls[0]!
    return {
      awaits: false,
      run(value, context) {
        let current = value
        for (const step of calls) current = step.run(current, context)
        return current
      },
    }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    transform?: string | Array<string | Record<string, unknown>>
  }
}
