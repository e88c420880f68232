// `init` (shape, language.md §8.6, EXT-2): a registered initializer replaces the value. It is called
// as it is; a promise it wrongly returns passes `constant` and `random` untouched and is settled
// before the first keyword that needs a settled value (two core cases pin this artifact).
import type { Step } from '../../context.js'
import { keyword } from '../record.js'
import { observed, truthy } from '../../values.js'
import { unknownName } from './unknown-name.js'
import { refuse } from '../grammar.js'

export default keyword<'init', 'shape'>({
  name: 'init',
  stage: 'shape',
  tier: 'core',
  schema: { description: 'A registered initializer (by name) replaces the value.', type: 'string', ...refuse('KW-pipeline-1', 'init must be an initializer name') },
  observesPaths: true,
  settlesLater: true,
  parts(value, _descriptor, visit) {
    if (typeof value === 'string') visit.initializer(value, [])
  },
  compile(descriptor, cx, provenance): Step | null {
    const name = descriptor.init
    if (!truthy(name) || typeof name !== 'string') return null
    const initializers = cx.extensions.initializers
    if (!Object.hasOwn(initializers, name)) return unknownName(cx, provenance, 'init', name)
    const initializer = initializers[name]!
    return { awaits: false, run: (value, context): unknown => observed(initializer(value, context)) }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    init?: string
  }
}
