// `minLength` (validate, language.md §10.3): a string at least this long.
import { lengthKeyword } from './fail.js'

export default lengthKeyword('minLength', 'Validator: a string value is at least this many characters long.', (n, min) => n >= min, (min) => `cannot be less than ${min} characters`)
