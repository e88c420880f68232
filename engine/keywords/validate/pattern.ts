// `pattern` (validate, language.md §10.3): a string the regular expression matches anywhere. Patterns
// run on V8's linear-time engine, and the `patternInput` budget bounds the string they run on.
import { DocumentSyntaxError } from '../../errors.js'
import { LinearEngineUnavailable, linearRegExp, NonLinearPattern } from '../../linear-regexp.js'
import { screenPattern } from '../../validation/pattern-screen.js'
import { keyword } from '../record.js'
import { fail } from './fail.js'
import { refuse, SCREEN } from '../grammar.js'

export default keyword<'pattern', 'validate'>({
  name: 'pattern',
  stage: 'validate',
  tier: 'core',
  schema: {
    description: 'Validator: a string value matches this regular expression anywhere (linear-time patterns only).',
    type: 'string',
    // Past its type, the pattern screen (validation/pattern-screen.ts): valid, and linear-time.
    [SCREEN]: screenPattern,
    ...refuse('KW-pattern-1', 'pattern must be a valid regular expression'),
  },
  compile(descriptor, _cx, provenance) {
    if (!Object.hasOwn(descriptor, 'pattern') || descriptor.pattern === undefined) return null
    const pattern = descriptor.pattern
    let regex: RegExp | undefined
    let invalid: unknown
    try {
      regex = linearRegExp(pattern as string)
    } catch (error) {
      // The host has not turned the linear engine on: its error, at once, not the document's.
      if (error instanceof LinearEngineUnavailable) throw error
      // Evaluation raises it where it reaches the pattern: a typed error of the caller's document.
      invalid = error instanceof NonLinearPattern ? error : new DocumentSyntaxError((error as Error).message)
    }
    return (value, run) => {
      if (typeof value !== 'string') return
      if (regex === undefined) throw invalid
      run.matchInput(value.length)
      if (!regex.test(value)) fail(run, provenance, [['value', value], ['pattern', pattern]], 'must match pattern')
    }
  },
})

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    pattern?: string
  }
}
