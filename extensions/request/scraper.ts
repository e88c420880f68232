// The HTML scraper (request-plugin.md §4): `scraper: { <key>: spec }`, each spec a CSS selector
// plus value steps. A spec is compiled once per frozen options object (the engine freezes every
// document it admits) and before anything is sent: a bad selector or an unsafe pattern fails
// the call without a request. Every regex operand passes the engine's pattern safety screen. The
// compiled fields run over the page in html.ts.
import type { CheerioAPI } from 'cheerio'
import { cheerio } from './cheerio.js'
import { isObject, linearRegExp, screenPattern } from '../../engine/index.js'

const SPEC_KEYS = ['selector', 'index', 'text', 'attr', 'match', 'split', 'replace', 'trim', 'int', 'list', 'each'] as const
const VALUE_STEPS = ['text', 'attr', 'match', 'split', 'replace', 'trim', 'int', 'list'] as const

/** One compiled field of a scraper. */
export interface Field {
  readonly key: string
  readonly selector: string | undefined
  readonly index: number | undefined
  readonly attr: string | undefined
  readonly match: RegExp | undefined
  readonly split: string | undefined
  readonly replace: ReadonlyArray<readonly [RegExp, string]>
  readonly trim: boolean
  readonly int: boolean
  readonly list: boolean
  readonly each: CompiledScraper | undefined
}

/** A checked scraper: its fields in written order. */
export type CompiledScraper = readonly Field[]

/**
 * What counts the text a pattern runs on: the evaluation context's `matchInput`, which holds it to
 * the `patternInput` budget like the `pattern` keyword's input (engine.md §2.12). Page text is as
 * long as the page, and a chain of `replace` steps can lengthen it at every step.
 */
export interface PatternMeter {
  matchInput(length: number): void
}

const compiledSpecs = new WeakMap<object, CompiledScraper>()

// An empty document to try selectors on: css-select compiles a selector before it matches anything.
let probeDocument: CheerioAPI | undefined
const probe = (): CheerioAPI => (probeDocument ??= cheerio('The request option scraper').load('<html></html>'))

function pattern(source: unknown, flags: string, where: string): RegExp {
  const verdict = screenPattern(source)
  if (verdict !== undefined) {
    throw new TypeError(`scraper ${where} refused: ${verdict.message} (${verdict.rule})`)
  }
  // The screen admitted only patterns V8's linear-time engine runs (engine/linear-regexp.ts): page
  // text can never make them backtrack.
  return linearRegExp(source as string, flags)
}

function compileField(key: string, spec: unknown, path: string): Field {
  if (!isObject(spec)) throw new TypeError(`scraper ${path} must be an object`)
  for (const name of Object.keys(spec)) {
    if (!(SPEC_KEYS as readonly string[]).includes(name)) {
      throw new TypeError(`scraper ${path}: ${name} is not a scraper key (known keys: ${SPEC_KEYS.join(', ')})`)
    }
  }
  const flag = (name: 'trim' | 'int' | 'list'): boolean => {
    const given = spec[name]
    if (given !== undefined && typeof given !== 'boolean') throw new TypeError(`scraper ${path}.${name} must be a boolean`)
    return given === true
  }

  const { selector, index, text, attr, match, split, replace, each } = spec
  if (selector !== undefined) {
    if (typeof selector !== 'string' || selector.trim() === '') throw new TypeError(`scraper ${path}.selector must be a CSS selector`)
    // Outside the try: a missing cheerio is no fault of the selector.
    const document = probe().root()
    try {
      document.find(selector)
    } catch (error) {
      throw new TypeError(`scraper ${path}.selector ${JSON.stringify(selector)} is not a valid CSS selector: ${(error as Error).message}`)
    }
  }
  if (index !== undefined && (typeof index !== 'number' || !Number.isInteger(index))) {
    throw new TypeError(`scraper ${path}.index must be an integer`)
  }
  if (text !== undefined && text !== true) throw new TypeError(`scraper ${path}.text must be true (text is the default value)`)
  if (attr !== undefined && (typeof attr !== 'string' || attr === '')) throw new TypeError(`scraper ${path}.attr must be an attribute name`)
  if (text !== undefined && attr !== undefined) throw new TypeError(`scraper ${path}: use text or attr, not both`)
  if (split !== undefined && (typeof split !== 'string' || split === '')) throw new TypeError(`scraper ${path}.split must be a non-empty string`)
  let pairs: Array<readonly [RegExp, string]> = []
  if (replace !== undefined) {
    if (!Array.isArray(replace)) throw new TypeError(`scraper ${path}.replace must be a list of [pattern, replacement] pairs`)
    pairs = replace.map((pair: unknown, i) => {
      if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
        throw new TypeError(`scraper ${path}.replace[${i}] must be a [pattern, replacement] pair of strings`)
      }
      return [pattern(pair[0], 'g', `${path}.replace[${i}]`), pair[1]] as const
    })
  }
  let nested: CompiledScraper | undefined
  if (each !== undefined) {
    const steps = VALUE_STEPS.filter((name) => spec[name] !== undefined)
    if (steps.length > 0) throw new TypeError(`scraper ${path}: each cannot be combined with ${steps.join(', ')}`)
    nested = compileFields(each, `${path}.each`)
  }

  return {
    key,
    selector: selector as string | undefined,
    index: index as number | undefined,
    attr: attr as string | undefined,
    match: match === undefined ? undefined : pattern(match, '', `${path}.match`),
    split: split as string | undefined,
    replace: pairs,
    trim: flag('trim'),
    int: flag('int'),
    list: flag('list'),
    each: nested,
  }
}

function compileFields(spec: unknown, path: string): CompiledScraper {
  if (!isObject(spec)) throw new TypeError(`${path} must be an object of named fields`)
  return Object.entries(spec).map(([key, field]) => compileField(key, field, path === 'scraper' ? key : `${path}.${key}`))
}

/** Check and compile a `scraper` option (cached per options object). */
export function compileScraper(spec: unknown): CompiledScraper {
  const cached = isObject(spec) ? compiledSpecs.get(spec) : undefined
  if (cached !== undefined) return cached
  if (!isObject(spec)) throw new TypeError('request option scraper must be an object of named fields')
  const compiled = compileFields(spec, 'scraper')
  // Only a frozen spec (as every admitted document is) is known not to change under the cache.
  if (Object.isFrozen(spec)) compiledSpecs.set(spec, compiled)
  return compiled
}
