// HTML bodies (request-plugin.md §1): the raw `html`, the first JSON-LD block as `ld`, the meta
// tags as `meta`, and the scraper's result as `data` when the options asked for one.
import { load, type CheerioAPI } from 'cheerio'
import { checkJsonDepth } from './depth.js'
import { ownMember, setMember } from './record.js'
import { runScraper, type CompiledScraper } from './scraper.js'

const LD_JSON = 'application/ld+json'

/**
 * The first `<script type="application/ld+json">` parsed, or null when there is none or it is not
 * JSON. A block nested too deep is refused like a JSON body (`ResponseTooDeepError`).
 */
function linkedData($: CheerioAPI, url: string): unknown {
  const block = $('script[type]')
    .toArray()
    .find((script) => (script.attribs.type ?? '').trim().toLowerCase() === LD_JSON)
  if (block === undefined) return null
  const text = $(block).text()
  checkJsonDepth(text, url, 'JSON-LD')
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

/**
 * Meta tags keyed by their `name`, `property` and `itemprop` (lowercased), each key holding the
 * `content` of every tag that names it, in document order. Tags without `content` are skipped.
 */
function metaTags($: CheerioAPI): Record<string, string[]> {
  const meta: Record<string, unknown> = {}
  for (const tag of $('meta').toArray()) {
    const content = tag.attribs.content
    if (content === undefined) continue
    const names = ['name', 'property', 'itemprop'].map((attribute) => tag.attribs[attribute]?.trim().toLowerCase())
    for (const key of new Set(names.filter((name): name is string => name !== undefined && name !== ''))) {
      const list = ownMember(meta, key) as string[] | undefined
      if (list === undefined) setMember(meta, key, [content])
      else list.push(content)
    }
  }
  return meta as Record<string, string[]>
}

export function readHtml(html: string, scraper: CompiledScraper | undefined, url: string): Record<string, unknown> {
  const $ = load(html)
  const parsed: Record<string, unknown> = { html, ld: linkedData($, url), meta: metaTags($) }
  if (scraper !== undefined) parsed.data = runScraper(scraper, $, $.root())
  return parsed
}
