// mapper-service/request: the request plugin (request-plugin.md), an extension like any other a
// deployment could write, built only on the engine's public extension interface.
//
//   const request = createRequest({ redirect: 'follow', allowHeaders: [] })
//   const mapper = new Mapper({ mappings }, { plugins: { request } })
import type { EvaluationContext, Plugin } from '../../engine/index.js'
import { admitStart } from '../../engine/slices.js'
import { redactUrl } from '../../support/redact.js'
import { sharedAgent } from './agent.js'
import { readBody, ResponseTooLargeError, type BodyBytes } from './body.js'
import { checkCallOptions, readCallOptions } from './call-options.js'
import { markRequestPlugin } from './cheerio.js'
import { resolvePolicy, type RequestConfig } from './config.js'
import { Deadline } from './deadline.js'
import { exchange } from './exchange.js'
import { forwardedHeaders } from './headers.js'
import { budgetFor, InFlightLimitError, Lease } from './in-flight.js'
import { readEnvelope } from './parse-thread.js'
import { UpstreamWatch } from './telemetry.js'
import { locateUrl, refuseProtocol } from './url.js'

export { DEFAULTS, type RedirectMode, type RequestConfig, type RequestPolicy } from './config.js'
export { RedirectRefusedError } from './redirect.js'
export { PrivateNetworkRefusedError, isPrivateAddress } from './private-network.js'
export { ResponseTooLargeError } from './body.js'
export { InFlightLimitError } from './in-flight.js'
export { HOP_HEADER } from './headers.js'
export { MAX_RESPONSE_DEPTH, ResponseTooDeepError } from './depth.js'
export { UPSTREAM_CHANNEL, type UpstreamCall } from './telemetry.js'
export { InvalidUrlError, ProtocolRefusedError } from './url.js'
export { closeParseThreads } from './parse-thread.js'
export { InvalidRequestOptionsError, type OptionIssue } from './option-issues.js'
export { checkCallOptions } from './call-options.js'

/**
 * Build a request plugin. The config is checked here, once; a wrong value throws naming its key.
 * The plugin returns the parse envelope; the engine applies `options.pointer` to it afterwards (a
 * body parsed in a thread comes back already narrowed to the pointer's path: the same read).
 * `validateOptions` on the plugin is the options check validation runs (REQ-1 … REQ-10).
 */
/**
 * Plugins made by `createRequest` from plain data (no `checkUrl`, no `dispatcher`), with a copy of
 * that data: a worker thread makes the same plugin from it, so a host's surface of such plugins
 * can run isolated (workers/isolation.ts) although functions cannot cross into a thread.
 */
const recreatable = new WeakMap<Plugin, RequestConfig>()

/** The plain configuration `plugin` was made from by `createRequest`; undefined for any other plugin, or one given functions. */
export function requestConfigOf(plugin: unknown): RequestConfig | undefined {
  return typeof plugin === 'function' ? recreatable.get(plugin as Plugin) : undefined
}

export function createRequest(config: RequestConfig = {}): Plugin {
  const policy = resolvePolicy(config)
  const dispatcher = policy.dispatcher ?? sharedAgent(policy.denyPrivateNetworks, policy.allowHosts)
  const budget = budgetFor(policy.maxBytesInFlight)

  const request = async function request(options: unknown, value: unknown, context: EvaluationContext): Promise<unknown> {
    const call = readCallOptions(options)
    const scraper = call.compiledScraper
    const url = await locateUrl(call, value, context)
    // A `search` mapping that short-circuited has recorded its errors; nothing is sent.
    if (url === null) return undefined
    refuseProtocol(url, policy.allowedProtocols)
    const headers = forwardedHeaders(call.headers, policy.allowHeaders)

    // Calls start a few dozen per turn of the event loop (engine/slices.ts): an `each` over a
    // thousand items starts its calls over many turns, and a run that stopped meanwhile (its budget
    // tripped, its client left) never starts the ones still waiting: the deadline, made from the
    // aborted signal, refuses to send.
    const admitted = admitStart()
    if (admitted !== undefined) await admitted
    const deadline = new Deadline(policy.timeoutMs, url.href, context.signal)
    try {
      if (policy.checkUrl !== undefined) await deadline.race(policy.checkUrl(url.href))
      let body: string | undefined
      if (call.body !== undefined) {
        const mapped = await deadline.race(context.evaluateMapping(call.body, { source: value }))
        if (mapped === null) return undefined
        body = JSON.stringify(mapped)
      }
      // From here on the call goes out: one span and one published outcome for it, redirects and body included.
      const watch = new UpstreamWatch(context, call.method, url, headers, policy.allowHeaders)
      // The body's bytes, held from the first one read until the envelope is built.
      const lease = new Lease(budget, deadline.signal)
      try {
        const incoming = await exchange({ url, method: call.method, headers, body }, policy, dispatcher, deadline)
        watch.responded(incoming.status)
        let bytes: BodyBytes
        try {
          // A HEAD response declares the length of a body it does not carry.
          const declared = call.method === 'HEAD' ? undefined : incoming.headers['content-length']
          bytes = await readBody(incoming.body, declared, policy.maxResponseBytes, lease)
        } catch (error) {
          // A deadline that passed while the call waited for room in the budget: busy, 503.
          if (error instanceof InFlightLimitError) throw error
          deadline.check()
          if (error instanceof ResponseTooLargeError) throw error
          throw new Error(`Reading the response of ${redactUrl(incoming.url)} failed: ${(error as Error).message}`, { cause: error })
        }
        const parse = { scraperSpec: call.scraper, scraper, pointer: call.pointer }
        return await readEnvelope(incoming.status, incoming.headers['content-type'], bytes, parse, redactUrl(incoming.url), context, deadline)
      } catch (error) {
        watch.failed(error)
        throw error
      } finally {
        lease.release()
        watch.end()
      }
    } finally {
      deadline.dispose()
    }
  }
  // The engine's validation asks the plugin about the options a document writes for it (REQ-…).
  const plugin = markRequestPlugin(Object.assign(request, { validateOptions: checkCallOptions }))
  if (policy.checkUrl === undefined && policy.dispatcher === undefined) {
    try {
      recreatable.set(plugin, structuredClone(config))
    } catch {
      // Something in it that does not clone: the plugin stays on the thread that made it.
    }
  }
  return plugin
}
