// `concat` (shape, language.md §8.6): an array of arrays flattened one level.
import { truthy } from '../../values.js'
import { booleanOperand, keyword } from '../record.js'

export default keyword<boolean, 'concat', 'shape'>({
  name: 'concat',
  stage: 'shape',
  tier: 'core',
  schema: { description: 'When true, an array of arrays is flattened one level.', type: 'boolean' },
  operand: booleanOperand('concat', 'KW-pipeline-1'),
  compile(descriptor) {
    if (!truthy(descriptor.concat)) return null
    return {
      awaits: false,
      run(value, context) {
        if (!Array.isArray(value)) return value
        context.run.tick(value.length)
        return ([] as unknown[]).concat(...value)
      },
    }
  },
})
