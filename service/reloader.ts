// Hot reload of the registered mappings: a whole new set is loaded, registered and validated, then
// swapped in at once (http/plugins/engine.ts ServedSet); a set that fails leaves the served one in
// place. One reload runs at a time; those asked for meanwhile share one more run after it, which
// reads the source afresh. Every attempt logs one line and is published on the
// `mapper-service:reload` diagnostics channel for whoever listens in the process; the service it
// is attached to counts its own attempts in its metrics.
import { channel } from 'node:diagnostics_channel'
import type { FastifyBaseLogger } from 'fastify'
import { mappingEntries, type MappingsInput } from '../sources/mappings.js'
import type { ServedSet } from './mapping-service.js'

/** The message every reload attempt publishes. */
export interface ReloadOutcome {
  readonly ok: boolean
  /** Mappings served after a successful reload. */
  readonly mappings?: number
  /** Why a failed reload was refused (the file is named when one is at fault). */
  readonly error?: string
}

export const RELOAD_CHANNEL = 'mapper-service:reload'
const reloads = channel(RELOAD_CHANNEL)

/** Where a reload reads the new set from: anything the `mappings` option accepts, or a promise of it. */
export type MappingsSource = () => MappingsInput | Promise<MappingsInput>

interface Pending {
  source: MappingsSource
  readonly promise: Promise<ReloadOutcome>
  readonly settle: (outcome: ReloadOutcome) => void
}

/**
 * Reloads one mapper-service's mappings. Pass it as the `reloader` option when registering the
 * service; `reload()` then replaces the served set with what `source` returns (the constructor's
 * source unless one is given) and resolves with the outcome. It never rejects for a bad set: the
 * outcome says `ok: false` and the previous set stays served.
 */
export class Reloader {
  #target: { readonly served: ServedSet; readonly log: FastifyBaseLogger; readonly observe: (outcome: ReloadOutcome) => void } | undefined
  #running: Promise<ReloadOutcome> | null = null
  #pending: Pending | null = null

  constructor(private readonly source?: MappingsSource) {}

  /**
   * Called by the service plugin at registration: one Reloader serves one service, which observes
   * the outcome of each attempt (its metrics) before it is published.
   */
  attach(served: ServedSet, log: FastifyBaseLogger, observe: (outcome: ReloadOutcome) => void = () => {}): void {
    if (this.#target !== undefined) throw new Error('this Reloader already serves a mapper-service')
    this.#target = { served, log, observe }
  }

  reload(source: MappingsSource | undefined = this.source): Promise<ReloadOutcome> {
    if (this.#target === undefined) return Promise.reject(new Error('this Reloader is not registered with a mapper-service yet'))
    if (source === undefined) return Promise.reject(new Error('reload() needs a mappings source (none was given to the Reloader)'))
    if (this.#running === null) {
      this.#running = this.#cycle(source)
      return this.#running
    }
    if (this.#pending !== null) {
      this.#pending.source = source
      return this.#pending.promise
    }
    let settle!: (outcome: ReloadOutcome) => void
    const promise = new Promise<ReloadOutcome>((resolve) => (settle = resolve))
    this.#pending = { source, promise, settle }
    return promise
  }

  async #cycle(source: MappingsSource): Promise<ReloadOutcome> {
    const outcome = await this.#attempt(source)
    const next = this.#pending
    this.#pending = null
    if (next === null) {
      this.#running = null
    } else {
      this.#running = this.#cycle(next.source)
      void this.#running.then(next.settle)
    }
    return outcome
  }

  async #attempt(source: MappingsSource): Promise<ReloadOutcome> {
    const { served, log, observe } = this.#target!
    let outcome: ReloadOutcome
    try {
      const entries = mappingEntries(await source(), 'reloaded mappings')
      const engine = await served.replace(entries)
      const count = Object.keys(engine.mappings).length
      outcome = { ok: true, mappings: count }
      log.info({ mappings: count }, `mappings reloaded: ${count} mappings`)
    } catch (error) {
      const reason = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ')
      outcome = { ok: false, error: reason }
      const kept = Object.keys(served.current.mappings).length
      log.error({ mappings: kept }, `mappings reload failed, still serving the previous ${kept} mappings: ${reason}`)
    }
    observe(outcome)
    reloads.publish(outcome)
    return outcome
  }
}
