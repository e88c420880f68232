// cheerio (with parse5 and htmlparser2, a third of the request plugin's start-up) loaded on first
// use: a service, or a worker thread of one, that never parses HTML or XML never loads it.
import { createRequire } from 'node:module'
import type * as Cheerio from 'cheerio'

const require = createRequire(import.meta.url)
let loaded: typeof Cheerio | undefined

export function cheerio(): typeof Cheerio {
  return (loaded ??= require('cheerio') as typeof Cheerio)
}
