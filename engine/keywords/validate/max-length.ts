// `maxLength` (validate, language.md §10.3): a string at most this long.
import { lengthKeyword } from './fail.js'

export default lengthKeyword('maxLength', 'Validator: a string value is at most this many characters long.', (n, max) => n <= max, (max) => `cannot be more than ${max} characters`)

// Its operand's type in a descriptor (engine/descriptor.ts KeywordOperands is the sum of these).
declare module '../../descriptor.js' {
  interface KeywordOperands {
    maxLength?: number
  }
}
