// `description`: prose for people; evaluation never reads it.
import { keyword } from '../record.js'

export default keyword<'description', 'inert'>({
  name: 'description',
  stage: 'inert',
  tier: 'core',
  // Any value: evaluation and validation never read it.
  schema: { description: 'Prose for people; evaluation never reads it.' },
})
