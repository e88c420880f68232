// HTML bodies (request-plugin.md §1): the raw `html`, the first JSON-LD block as `ld`, the meta
// tags as `meta`, and the scraper's result as `data` when the options asked for one. The scraper
// runs here, where the page is, and is checked in scraper.ts, whose declarations (public, through
// parse-thread.ts) must name no type of cheerio, an optional package, or of domhandler, not a
// dependency.
import type { Cheerio, CheerioAPI, CheerioOptions } from 'cheerio'
import { cheerio } from './cheerio.js'
import type { AnyNode } from 'domhandler'
import { checkJsonDepth, MAX_RESPONSE_DEPTH, ResponseTooDeepError } from './depth.js'
import { ownMember, setMember } from './record.js'
import type { CompiledScraper, Field, PatternMeter } from './scraper.js'

const LD_JSON = 'application/ld+json'

type TreeAdapter = NonNullable<CheerioOptions['treeAdapter']>
type ParentNode = Parameters<TreeAdapter['appendChild']>[0]
type ChildNode = Parameters<TreeAdapter['appendChild']>[1]

// The depth bound (request-plugin.md §1 "Result", docs/request-plugin.md "Hardening"). cheerio
// parses HTML with parse5, whose tree construction looks down its stack of open elements for
// almost every tag, so a page of 32,000 nested `<div>` (352 KB) took 7.4 s and 200,000 of them
// ten minutes, the event loop blocked throughout. Unlike JSON and XML, HTML cannot be measured by a
// scan of the text first: the parser closes `<p>` and `<li>` by itself, reopens formatting
// elements, moves misnested ones, so only the tree it builds tells the depth. The tree is built
// through this adapter instead, which refuses an element placed deeper than the bound: the parse
// stops there, its stack never deeper than the bound, so its cost stays linear in the body.

// cheerio builds the tree through parse5-htmlparser2-tree-adapter (domhandler nodes) and keeps the
// adapter it used on the options of what it loaded; the bounded adapter wraps that same object, so
// the tree is the one cheerio would build, node for node.
let cheerioAdapter: TreeAdapter | undefined

/** The feature that needs cheerio to parse the page at `url`, as its error names it. */
const parsing = (url: string): string => `Parsing the HTML response of ${url}`

/** cheerio's adapter, found at the first parse (cheerio loads on first use). */
function baseAdapter(url: string): TreeAdapter {
  if (cheerioAdapter !== undefined) return cheerioAdapter
  const found = cheerio(parsing(url)).load('')._options.treeAdapter
  // Refused loudly: without the adapter the depth bound could not be kept.
  if (found === undefined) throw new Error('cheerio no longer exposes the tree adapter it parses HTML with; the request plugin cannot bound HTML depth')
  return (cheerioAdapter = found as TreeAdapter)
}

/** The elements from `node` up to the root (the node included), counting no further than `limit + 1`. */
function elementDepth(base: TreeAdapter, node: ParentNode | null, limit: number): number {
  let depth = 0
  for (let at: ParentNode | null = node; at !== null && at !== undefined && depth <= limit; at = base.getParentNode(at as ChildNode)) {
    if (base.isElementNode(at)) depth++
  }
  return depth
}

/**
 * How much deeper than the bound an element may be placed while the tree is built. The parser's
 * adoption agency places reconstructed formatting elements (`<a>`, `<b>`…) deeper than where they
 * end up; refusing at the bound itself refused trees within it (a property test found one). The
 * finished tree is held to the bound exactly (`treeDepthExceeds`); the parse stays linear, its
 * stack never deeper than the bound plus this.
 */
const PLACEMENT_SLACK = 64

/** The tree adapter of one parse: cheerio's own, refusing an element placed far deeper than `limit`. */
function boundedAdapter(limit: number, url: string): TreeAdapter {
  const base = baseAdapter(url)
  const placed = limit + PLACEMENT_SLACK
  const refuseDeep = (parent: ParentNode, child: ChildNode): void => {
    if (base.isElementNode(child) && elementDepth(base, parent, placed) + 1 > placed) throw new ResponseTooDeepError(url, 'HTML')
  }
  return {
    ...base,
    appendChild(parent, child) {
      refuseDeep(parent, child)
      base.appendChild(parent, child)
    },
    insertBefore(parent, child, reference) {
      refuseDeep(parent, child)
      base.insertBefore(parent, child, reference)
    },
  }
}

/**
 * The deepest element nesting of a parsed tree, found iteratively. The adapter checks an element
 * where it is placed; a subtree the parser moves afterwards (misnested formatting elements are
 * re-parented) is measured here, once, before anything walks the tree recursively.
 */
function treeDepthExceeds(root: AnyNode, limit: number): boolean {
  const work: Array<[AnyNode, number]> = [[root, 0]]
  while (work.length > 0) {
    const [node, above] = work.pop()!
    const depth = node.type === 'tag' || node.type === 'script' || node.type === 'style' ? above + 1 : above
    if (depth > limit) return true
    if ('children' in node) for (const child of node.children) work.push([child, depth])
  }
  return false
}

/**
 * Parse an HTML page as cheerio does, refusing one whose elements nest deeper than `limit`
 * (`<html>` and `<body>`, which the parser supplies when the page does not, count as levels) with
 * `ResponseTooDeepError`, the error of JSON and XML bodies nested too deep.
 */
export function loadHtml(html: string, url: string, limit = MAX_RESPONSE_DEPTH): CheerioAPI {
  const $ = cheerio(parsing(url)).load(html, { treeAdapter: boundedAdapter(limit, url) })
  if (treeDepthExceeds($.root()[0]!, limit)) throw new ResponseTooDeepError(url, 'HTML')
  return $
}

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

/** The value steps in their fixed order: match, split, replace, trim, int; every pattern's input metered first. */
function refine(field: Field, raw: string | undefined, meter: PatternMeter): unknown {
  if (raw === undefined) return undefined
  let value: string | undefined = raw
  if (field.match !== undefined) {
    meter.matchInput(value.length)
    value = field.match.exec(value)?.[0]
  }
  if (value === undefined) return undefined
  const parts: Array<string | undefined> = field.split === undefined ? [value] : value.split(field.split)
  const refined = parts.map((part) => {
    let text = part!
    for (const [search, replacement] of field.replace) {
      meter.matchInput(text.length)
      text = text.replace(search, replacement)
    }
    if (field.trim) text = text.trim()
    if (!field.int) return text
    const number = Number.parseInt(text, 10)
    return Number.isNaN(number) ? null : number
  })
  return field.split === undefined ? (refined[0] ?? undefined) : refined
}

function extract(field: Field, selection: Cheerio<AnyNode>): string | undefined {
  if (selection.length === 0) return undefined
  return field.attr === undefined ? selection.text() : selection.attr(field.attr)
}

/** Apply a compiled scraper below `node`; a field that matched nothing is left out. */
function runScraper(scraper: CompiledScraper, $: CheerioAPI, node: Cheerio<AnyNode>, meter: PatternMeter): Record<string, unknown> {
  const result: Record<string, unknown> = {}
  for (const field of scraper) {
    let selection: Cheerio<AnyNode> = field.selector === undefined ? node : node.find(field.selector)
    if (field.index !== undefined) selection = selection.eq(field.index)
    let value: unknown
    if (field.each !== undefined) {
      const nested = field.each
      value = selection.toArray().map((element) => runScraper(nested, $, $(element), meter))
    } else if (field.list) {
      value = selection.toArray().map((element) => refine(field, extract(field, $(element)), meter) ?? null)
    } else {
      value = refine(field, extract(field, selection), meter)
    }
    if (value !== undefined) setMember(result, field.key, value)
  }
  return result
}

export function readHtml(html: string, scraper: CompiledScraper | undefined, url: string, meter: PatternMeter): Record<string, unknown> {
  const $ = loadHtml(html, url)
  const parsed: Record<string, unknown> = { html, ld: linkedData($, url), meta: metaTags($) }
  if (scraper !== undefined) parsed.data = runScraper(scraper, $, $.root(), meter)
  return parsed
}
