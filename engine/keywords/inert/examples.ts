// `examples`: inputs and the outputs the mapping must give them. Evaluation never reads them; the
// service runs those of a document's top (and of a compound document's members) when it registers
// the mapping, when `/validate` is asked, and in `mapper-service test` (engine/examples.ts).
import type { Example } from '../../descriptor.js'
import { isObject } from '../../values.js'
import { issue, keyword, type OperandIssue } from '../record.js'

/** The members an example may have, and the test each must pass. */
const MEMBERS: Readonly<Record<string, [test: (value: unknown) => boolean, what: string]>> = {
  description: [(v) => typeof v === 'string', 'a string'],
  input: [() => true, 'any JSON value'],
  output: [isObject, 'an object (the envelope without valid and errors)'],
  valid: [(v) => typeof v === 'boolean', 'true or false'],
  errors: [Array.isArray, 'an array of error objects'],
}

function exampleIssues(example: unknown, i: number): OperandIssue[] {
  const at = String(i)
  if (!isObject(example)) return issue('KW-examples-1', 'an example must be an object with input and output', [at], example)
  const found: OperandIssue[] = []
  for (const required of ['input', 'output']) {
    if (!Object.hasOwn(example, required)) found.push(issue('KW-examples-1', `an example must have ${required}`, [at], example)[0]!)
  }
  for (const [key, value] of Object.entries(example)) {
    const member = Object.hasOwn(MEMBERS, key) ? MEMBERS[key] : undefined
    if (member === undefined) found.push(issue('KW-examples-1', `${key} is not a member of an example (input, output, valid, errors, description)`, [at, key], value)[0]!)
    else if (!member[0](value)) found.push(issue('KW-examples-1', `an example's ${key} must be ${member[1]}`, [at, key], value)[0]!)
  }
  return found
}

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
        description: { type: 'string', description: 'What the example shows.' },
        input: { description: 'The input document (any JSON value; an array is mapped element by element under items).' },
        output: { type: 'object', description: 'The expected output: the envelope without valid and errors.' },
        valid: { type: 'boolean', description: 'The expected valid flag (default true).' },
        errors: { type: 'array', description: 'The expected error objects, in order (compared only when stated).' },
      },
    },
  },
  operand: (value) => (Array.isArray(value) ? value.flatMap(exampleIssues) : issue('KW-examples-1', 'examples must be a list of { input, output } objects')),
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    examples?: Example[]
  }
}
