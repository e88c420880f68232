// `stdout` (diagnostic, language.md §14): print the level's target, or the part a pointer names, when
// MAP receives the descriptor. A host may route it (RunOptions.stdout) or refuse it (KW-stdout-1).
import { keyword, POINTER_SCHEMA } from '../record.js'
import { refuse } from '../grammar.js'

export default keyword<'stdout', 'diagnostic'>({
  name: 'stdout',
  stage: 'diagnostic',
  tier: 'experimental',
  schema: { description: 'Diagnostic (experimental): print the level\'s target (true) or the part of it a JSON Pointer names.', anyOf: [{ type: 'boolean' }, { ...POINTER_SCHEMA, type: 'string' }], ...refuse('KW-pipeline-1', 'stdout must be true or a JSON Pointer string') },
  parts: (value, _descriptor, visit) => visit.pointer(value, []),
  // Printed through the run: nesting bounded before JSON.stringify recurses, the text counted as built.
  compile(descriptor, cx) {
    const operand = descriptor.stdout
    if (!operand) return null
    if (typeof operand === 'string') {
      const read = cx.reader(operand)
      return (context) => {
        const run = context.run
        const value = read(context.target)
        run.stdout(value === undefined ? 'undefined' : (run.stringify(value, 2) as string))
      }
    }
    return (context) => {
      const run = context.run
      run.stdout(run.stringify(context.target) as string)
    }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    stdout?: boolean | string
  }
}
