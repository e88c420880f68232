// `stdout` (diagnostic, language.md §14): print the level's target, or the part a pointer names, when
// MAP receives the descriptor. A host may route it (RunOptions.stdout) or refuse it (KW-stdout-1).
import { issue, keyword, ok, POINTER_SCHEMA } from '../record.js'

export default keyword<'stdout', 'diagnostic'>({
  name: 'stdout',
  stage: 'diagnostic',
  tier: 'experimental',
  schema: { description: 'Diagnostic (experimental): print the level\'s target (true) or the part of it a JSON Pointer names.', anyOf: [{ type: 'boolean' }, POINTER_SCHEMA] },
  operand: (value) => (typeof value === 'boolean' || typeof value === 'string' ? ok : issue('KW-pipeline-1', 'stdout must be true or a JSON Pointer string')),
  contents: (value, at, visit) => visit.pointer(value, at),
})
