// `all` (locate, language.md §8.3): the values of every element, undefined ones left out.
import type { Descriptor } from '../../descriptor.js'
import { unionOf } from '../../output-types.js'
import { keyword, READ_DESCRIPTOR_SCHEMA } from '../record.js'
import { combinator, listParts } from './scope.js'
import { refuse } from '../grammar.js'

export default keyword<'all', 'locate'>({
  name: 'all',
  stage: 'locate',
  tier: 'core',
  schema: { description: 'The values of every descriptor in the list, undefined ones left out.', type: 'array', items: READ_DESCRIPTOR_SCHEMA, ...refuse('KW-combinator-1', 'all must be an array of descriptors') },
  observesPaths: true,
  parts: listParts,
  // An array of the defined values, always defined.
  outputType: (_value, operand, _descriptor, infer) =>
    Array.isArray(operand) ? { alts: [{ kind: 'array', items: unionOf(operand.map((element) => infer.read(element).alts)) }], undefined: false } : undefined,
  compile: combinator('all', (values) => values.filter((value) => value !== undefined)),
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    all?: Descriptor[]
  }
}
