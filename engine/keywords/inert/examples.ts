// `examples`: inputs and the outputs the mapping must give them. Evaluation never reads them; the
// service runs those of a document's top (and of a compound document's members) when it registers
// the mapping, when `/validate` is asked, and in `mapper-service test` (engine/examples.ts).
import type { Example } from '../../descriptor.js'
import { keyword } from '../record.js'
import { refuse } from '../grammar.js'

/** The finding of an example's member of the wrong type. */
const member = (key: string, what: string) => refuse(undefined, `an example's ${key} must be ${what}`)

export default keyword<'examples', 'inert'>({
  name: 'examples',
  stage: 'inert',
  tier: 'extended',
  documentMember: 'single',
  schema: {
    description:
      'Inputs and the outputs this mapping must give them, checked when it is registered, by /validate and by `mapper-service test`. An example passes when the envelope without valid and errors deep-equals output, valid is as stated (default true), and errors, when stated, deep-equal the envelope\'s.',
    type: 'array',
    items: {
      type: 'object',
      required: ['input', 'output'],
      additionalProperties: false,
      properties: {
        description: { type: 'string', description: 'What the example shows.', ...member('description', 'a string') },
        input: { description: 'The input document (any JSON value; an array is mapped element by element under items).' },
        output: { type: 'object', description: 'The expected output: the envelope without valid and errors.', ...member('output', 'an object (the envelope without valid and errors)') },
        valid: { type: 'boolean', description: 'The expected valid flag (default true).', ...member('valid', 'true or false') },
        errors: { type: 'array', description: 'The expected error objects, in order (compared only when stated).', ...member('errors', 'an array of error objects') },
      },
      ...refuse(undefined, 'an example must be an object with input and output', {
        required: 'an example must have {key}',
        additionalProperties: '{key} is not a member of an example (input, output, valid, errors, description)',
      }),
    },
    ...refuse('KW-examples-1', 'examples must be a list of { input, output } objects'),
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    examples?: Example[]
  }
}
