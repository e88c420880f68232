// With `unknownNames: 'error'`, an `init` or `transform` name no extension answers appends an error
// object where the call would have happened (GET-5 diagnostic mode); by default it is skipped.
import { errorObject, type Provenance } from '../../diagnostics.js'
import type { CompileContext, Step } from '../../context.js'

export function unknownName(cx: CompileContext, provenance: Provenance, keyword: 'init' | 'transform', name: string): Step | null {
  if (cx.options.unknownNames !== 'error') return null
  const kind = keyword === 'init' ? 'initializer' : 'transformer'
  return {
    awaits: false,
    run(value, context) {
      context.run.errors.push(errorObject(provenance, [[keyword, name]], `${name} matches no registered ${kind}`))
      return value
    },
  }
}
