// `description`: prose for people; evaluation never reads it.
import { keyword } from '../record.js'

export default keyword<string, 'description', 'inert'>({ name: 'description', stage: 'inert', tier: 'core' })
