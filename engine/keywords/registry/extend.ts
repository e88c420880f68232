// `$extend` (registry, language.md §5.3): ancestors whose pairings this mapping inherits, resolved when
// it is registered.
import { truthy } from '../../values.js'
import { issue, keyword, ok } from '../record.js'

const isId = (id: unknown): boolean => typeof id === 'string' && id !== ''

export default keyword<'$extend', 'registry'>({
  name: '$extend',
  stage: 'registry',
  tier: 'core',
  schema: {
    description: 'Ancestor mappings whose pairings this one inherits when it is registered: a mapping id or a non-empty list of ids.',
    anyOf: [{ type: 'string', minLength: 1 }, { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } }],
  },
  operand: (value) =>
    isId(value) || (Array.isArray(value) && value.length > 0 && value.every(isId))
      ? ok
      : issue('REG-5', '$extend must be a mapping id or a non-empty list of mapping ids'),
  contents: (_value, at, visit, descriptor) => visit.ancestry(descriptor, at),
  children(value, _descriptor, visit) {
    if (truthy(value)) visit.ancestry(value, [])
  },
})
