// cheerio (with parse5 and htmlparser2, a third of the request plugin's start-up) loaded on first
// use: a service, or a worker thread of one, that never parses HTML or XML never loads it. It is an
// optional package (support/optional.ts): without it, JSON and text bodies are read as ever and an
// HTML or XML body, or a scraper, fails its call with MissingPackageError naming the package.
import type * as Cheerio from 'cheerio'
import type { Plugin } from '../../engine/index.js'
import { loadCheerio } from '../../support/optional.js'

let loaded: typeof Cheerio | undefined

/** cheerio, loaded at the first call; `feature` names what needs it, in the error when it is missing. */
export function cheerio(feature: string): typeof Cheerio {
  return (loaded ??= loadCheerio(feature) as typeof Cheerio)
}

// The plugins createRequest built, under whatever name a surface registers them: the service looks
// for them among its surface's plugins, to warn at start-up when cheerio is missing
// (service/cheerio-warning.ts).
const requestPlugins = new WeakSet<Plugin>()

export function markRequestPlugin(plugin: Plugin): Plugin {
  requestPlugins.add(plugin)
  return plugin
}

/** The names under which a surface's plugins are request plugins. */
export function requestPluginNames(plugins: Readonly<Record<string, Plugin>>): string[] {
  return Object.keys(plugins).filter((name) => requestPlugins.has(plugins[name]!))
}
