// The start-up warning of an install without cheerio (an optional package, support/optional.ts)
// whose registered mappings use the request plugin: such a service starts and serves, and each
// HTML or XML body its upstreams answer fails that evaluation (a 500, logged). Said once, at
// start-up, it is found before the first page arrives, not from the first failed request.
import type { MappingEntry } from '../sources/mappings.js'
import { isMissing } from '../support/optional.js'
import { Mapper, parsePointer, type Extensions } from '../engine/index.js'
import { requestPluginNames } from '../extensions/request/cheerio.js'

/** The mappings a warning names; past these it says how many more. */
const NAMED = 10

/** The request plugins of a surface (by the names it registers them under) and the ids of the entries that use one. */
export interface RequestPluginUsers {
  readonly plugins: readonly string[]
  readonly mappings: readonly string[]
}

/**
 * Which entries name a request plugin of `extensions` in a descriptor. Validated on an engine with
 * no extension registered, a key that would name a plugin is reported as KW-2 at its own pointer:
 * the validator's reading of the language, not a second one (a `request` member of a constant is
 * not a use).
 */
export function requestPluginUsers(entries: readonly MappingEntry[], extensions: Extensions): RequestPluginUsers {
  const plugins = requestPluginNames(extensions.plugins ?? {})
  if (plugins.length === 0) return { plugins, mappings: [] }
  const bare = new Mapper()
  const mappings = entries
    .filter((entry) => {
      const { errors, warnings } = bare.validate(entry.document)
      return [...errors, ...warnings].some((found) => found.rule === 'KW-2' && plugins.includes(parsePointer(found.pointer).at(-1) ?? ''))
    })
    .map((entry) => entry.id)
  return { plugins, mappings }
}

/**
 * The warning to log when cheerio is not installed and a registered mapping uses a request plugin
 * of `extensions`, or undefined. cheerio is looked for only when there is such a plugin, and is
 * never loaded here.
 */
export function cheerioWarning(entries: readonly MappingEntry[], extensions: Extensions): string | undefined {
  if (entries.length === 0 || requestPluginNames(extensions.plugins ?? {}).length === 0 || !isMissing('cheerio')) return undefined
  const { plugins, mappings } = requestPluginUsers(entries, extensions)
  if (mappings.length === 0) return undefined
  const listed = mappings.slice(0, NAMED).map((id) => JSON.stringify(id))
  const more = mappings.length > NAMED ? ` and ${mappings.length - NAMED} more` : ''
  const one = mappings.length === 1
  const plugin = plugins.length === 1 && plugins[0] === 'request' ? 'the request plugin' : `the request plugin (as ${plugins.map((name) => JSON.stringify(name)).join(', ')})`
  return (
    `${one ? 'mapping' : 'mappings'} ${listed.join(', ')}${more} ${one ? 'uses' : 'use'} ${plugin}: the HTML and XML responses it receives ` +
    'need the package cheerio, which is not installed: npm install cheerio (until then each fails its evaluation; JSON and text responses are read without it)'
  )
}
