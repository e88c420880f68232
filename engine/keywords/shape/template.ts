// `template` (shape, language.md §8.6, decision 5): the template's own `mapping` maps the value into
// the enclosing target, and its placeholders render the mapped values.
import { Context } from '../../context.js'
import { runPairings } from '../../procedures.js'
import { mapAlts, scalar, type Alt } from '../../output-types.js'
import { toText, truthy } from '../../values.js'
import { keyword } from '../record.js'
import { refuse } from '../grammar.js'

/**
 * A placeholder: `{{name}}`, the name one or more characters none of which is `}` (the reference
 * engine's reading), so `{{}}` and `{{a}b}}` stay literal text.
 */
const PLACEHOLDER = /\{\{([^}]+)\}\}/

export default keyword<'template', 'shape'>({
  name: 'template',
  stage: 'shape',
  tier: 'core',
  schema: { description: 'Text whose {{name}} placeholders render the values this descriptor\'s mapping produces.', type: 'string', ...refuse('KW-pipeline-1', 'template must be a string') },
  observesPaths: true,
  needsSettled: true,
  // Text in place of any object-typed value (null and arrays included); its pairings write into the level.
  outputType(value, operand, descriptor, infer) {
    if (!truthy(operand) || !truthy(descriptor.mapping)) return value
    infer.writesInto(descriptor.mapping)
    const text = scalar('string')
    return mapAlts(value, (alt): Alt[] => {
      if (alt.kind === 'any') return [text, scalar('number'), scalar('boolean')]
      if (alt.kind === 'const') return alt.value === null || typeof alt.value === 'object' ? [text] : [alt]
      if (alt.kind === 'scalar') return alt.type === 'null' ? [text] : [alt]
      return [text]
    })
  },
  compile(descriptor, cx) {
    if (!truthy(descriptor.template) || !truthy(descriptor.mapping)) return null
    // Alternating literal text and placeholder names: [text, name, text, name, …, text].
    const parts = toText(descriptor.template).split(PLACEHOLDER)
    const weight = parts.length
    const pairingsOf = cx.pairingSlot(descriptor.mapping)
    // The text is counted as it grows (builtBytes), so a template over large values stops before it is built.
    const render = (result: object | null, run: Context['run']): string => {
      let text = parts[0]!
      run.build(text.length)
      for (let i = 1; i < parts.length; i += 2) {
        const name = parts[i]!
        const member = result !== null && Object.hasOwn(result, name) ? (result as Record<string, unknown>)[name] : undefined
        const piece = (truthy(member) ? toText(member, run) : '') + parts[i + 1]!
        run.build(piece.length)
        text += piece
      }
      return text
    }
    return {
      awaits: true,
      run(value, context) {
        if (value === undefined || typeof value !== 'object') return value
        context.run.tick(weight)
        // The template's pairings map the value into the enclosing target (decision 5).
        const scoped = new Context(context.run, value, context.target, context, -1, '/', undefined)
        const result = runPairings(pairingsOf(scoped), scoped, value, undefined)
        return result instanceof Promise ? result.then((settled) => render(settled, scoped.run)) : render(result, scoped.run)
      },
    }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    template?: string
  }
}
