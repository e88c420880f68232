// cheerio (with parse5 and htmlparser2, a third of the request plugin's start-up) loaded on first
// use: a service, or a worker thread of one, that never parses HTML or XML never loads it. It is an
// optional package (config/optional.ts): without it, JSON and text bodies are read as ever and an
// HTML or XML body, or a scraper, fails its call with MissingPackageError naming the package.
import type * as Cheerio from 'cheerio'
import { loadCheerio } from '../../config/optional.js'

let loaded: typeof Cheerio | undefined

/** cheerio, loaded at the first call; `feature` names what needs it, in the error when it is missing. */
export function cheerio(feature: string): typeof Cheerio {
  return (loaded ??= loadCheerio(feature) as typeof Cheerio)
}
