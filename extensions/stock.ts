// The stock extension surface (http.md §8): no initializers, no transformers, and the `request`
// plugin with an empty header allowlist (no caller-chosen header goes upstream) that refuses
// redirects and private destinations. The hosts named in REQUEST_ALLOW_HOSTS are the exceptions
// to the last rule, for a deployment whose upstream is internal. A deployment replaces all of it
// with EXTENSIONS.
import { ConfigError } from '../support/config-error.js'
import type { Extensions } from '../engine/index.js'
import { createRequest, requestConfigOf, type RequestConfig } from './request/index.js'

const ALLOW_HOSTS_VARIABLE = 'REQUEST_ALLOW_HOSTS'

/** The comma-separated host names or IP addresses of REQUEST_ALLOW_HOSTS (blank entries skipped). */
function allowHostsFrom(env: NodeJS.ProcessEnv): string[] {
  return (env[ALLOW_HOSTS_VARIABLE] ?? '')
    .split(',')
    .map((host) => host.trim())
    .filter((host) => host !== '')
}

/** What a stock surface was built from: a worker thread builds its own copy from it. */
export const STOCK_SETTINGS = Symbol('mapper-service.stock')

/** The environment a stock surface read (only the variables it reads). */
export type StockSettings = Readonly<Record<typeof ALLOW_HOSTS_VARIABLE, string | undefined>>

/** The stock surface a surface was built as, when it is one (a copy or a change of it is not). */
export function stockSettingsOf(extensions: Extensions): StockSettings | undefined {
  return (extensions as { [STOCK_SETTINGS]?: StockSettings })[STOCK_SETTINGS]
}

/** The stock surface; `env` is read once, here. A wrong REQUEST_ALLOW_HOSTS is a ConfigError. */
export function stockExtensions(env: NodeJS.ProcessEnv = process.env): Extensions {
  let request
  try {
    request = createRequest({ allowHeaders: [], denyPrivateNetworks: true, allowHosts: allowHostsFrom(env) })
  } catch (error) {
    throw new ConfigError(`${ALLOW_HOSTS_VARIABLE}: ${(error as Error).message}`)
  }
  const surface: Extensions = { initializers: {}, transformers: {}, plugins: { request } }
  // Not enumerable: a surface spread into another is no longer the stock one.
  const settings: StockSettings = { [ALLOW_HOSTS_VARIABLE]: env[ALLOW_HOSTS_VARIABLE] }
  Object.defineProperty(surface, STOCK_SETTINGS, { value: settings })
  return surface
}

/**
 * A surface of `request` plugins only (no initializers, no transformers), each made by
 * `createRequest` from plain data: their configurations by name, from which a worker thread makes
 * the same surface (`requestSurface`). Undefined for any other surface.
 */
export function requestConfigsOf(extensions: Extensions): Record<string, RequestConfig> | undefined {
  const { initializers = {}, transformers = {}, plugins = {} } = extensions as Partial<Extensions>
  if (Object.keys(initializers).length > 0 || Object.keys(transformers).length > 0) return undefined
  const configs: Record<string, RequestConfig> = {}
  for (const [name, plugin] of Object.entries(plugins)) {
    const config = requestConfigOf(plugin)
    if (config === undefined) return undefined
    configs[name] = config
  }
  return configs
}

/** The surface `requestConfigsOf` described, made again (in a worker thread). */
export function requestSurface(configs: Readonly<Record<string, RequestConfig>>): Extensions {
  const plugins = Object.fromEntries(Object.entries(configs).map(([name, config]) => [name, createRequest(config)]))
  return { initializers: {}, transformers: {}, plugins }
}
