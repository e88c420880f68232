// `concat` (shape, language.md §8.6): an array of arrays flattened one level.
import { truthy } from '../../values.js'
import { keyword } from '../record.js'
import { refuse } from '../grammar.js'

/** What one member of a built array counts for in builtBytes: a reference. */
export const REFERENCE_BYTES = 8

export default keyword<'concat', 'shape'>({
  name: 'concat',
  stage: 'shape',
  tier: 'core',
  schema: { description: 'When true, an array of arrays is flattened one level.', type: 'boolean', ...refuse('KW-pipeline-1', 'concat must be true or false') },
  compile(descriptor) {
    if (!truthy(descriptor.concat)) return null
    return {
      awaits: false,
      run(value, context) {
        if (!Array.isArray(value)) return value
        const run = context.run
        run.tick(value.length)
        // The flattened array is counted (builtBytes, a reference per member) before it is made, and
        // made without spreading the value into arguments (which overflows the stack on long lists).
        let members = 0
        for (let i = 0; i < value.length; i++) {
          const member: unknown = value[i]
          members += Array.isArray(member) ? member.length : 1
        }
        run.build(members * REFERENCE_BYTES)
        const out: unknown[] = []
        for (let i = 0; i < value.length; i++) {
          const member: unknown = value[i]
          if (!Array.isArray(member)) {
            out.push(member)
            continue
          }
          for (let j = 0; j < member.length; j++) {
            const inner: unknown = member[j]
            // A hole stays a hole, as Array.prototype.concat keeps it.
            if (inner !== undefined || j in member) out.push(inner)
            else out.length++
          }
        }
        return out
      },
    }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    concat?: boolean
  }
}
