// `minLength` (validate, language.md §10.3): a string at least this long.
import { lengthKeyword } from './fail.js'

export default lengthKeyword('minLength', 'Validator: a string value is at least this many characters long.', (n, min) => n >= min, (min) => `cannot be less than ${min} characters`)

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    minLength?: number
  }
}
