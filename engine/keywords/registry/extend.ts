// `$extend` (registry, language.md §5.3): ancestors whose pairings this mapping inherits, resolved when
// it is registered.
import { idOf } from '../../document-id.js'
import { truthy } from '../../values.js'
import { keyword } from '../record.js'
import { refuse } from '../grammar.js'

export default keyword<'$extend', 'registry'>({
  name: '$extend',
  stage: 'registry',
  tier: 'core',
  documentMember: 'single',
  schema: {
    description: 'Ancestor mappings whose pairings this one inherits when it is registered: a mapping id or a non-empty list of ids.',
    anyOf: [{ type: 'string', minLength: 1 }, { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } }],
    ...refuse('REG-5', '$extend must be a mapping id or a non-empty list of mapping ids'),
  },
  parts(value, descriptor, visit) {
    if (truthy(value)) visit.ancestry(value, [])
    // Validation at the instance level (REG-3): every ancestor must exist, and the ancestry must flatten.
    const lookup = visit.mappings()
    if (lookup === null) return
    const ids = typeof value === 'string' ? [value] : value
    if (!Array.isArray(ids)) return
    let unknown = false
    ids.forEach((id, i) => {
      if (typeof id !== 'string' || lookup(id) !== undefined) return
      unknown = true
      visit.report('REG-3', `${id} matches no registered mapping`, typeof value === 'string' ? [] : [String(i)], id)
    })
    if (unknown) return
    const self = idOf(descriptor) ?? '(submitted document)'
    const problem = visit.inheritance(descriptor, self)
    if (problem !== undefined) visit.report('REG-3', problem, [], value)
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    $extend?: string | string[]
  }
}
