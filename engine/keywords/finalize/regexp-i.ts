// `regexp_i` (finalize, experimental; decision 10): the value's text as a case-insensitive regular
// expression literal. It acts only when true, and leaves undefined undefined.
import { mapAlts, scalar } from '../../output-types.js'
import { toText } from '../../values.js'
import { keyword } from '../record.js'
import { refuse } from '../grammar.js'

export default keyword<'regexp_i', 'finalize'>({
  name: 'regexp_i',
  stage: 'finalize',
  tier: 'experimental',
  schema: { description: 'Experimental: when true, the value\'s text as a case-insensitive regular expression literal (/text/i).', type: 'boolean', ...refuse('KW-pipeline-1', 'regexp_i must be true or false') },
  outputType: (value, operand) => (operand === true ? mapAlts(value, () => [scalar('string')]) : value),
  compile(descriptor) {
    if (descriptor.regexp_i !== true) return null
    return {
      awaits: false,
      run(value, context) {
        if (value === undefined) return value
        const text = toText(value, context.run)
        context.run.build(text.length + 3)
        return `/${text}/i`
      },
    }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    regexp_i?: boolean
  }
}
