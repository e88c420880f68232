// The engine behind the routes: one Mapper with the registered mappings and the extension surface,
// every registered mapping validated at startup. Compiled plans — registered ids and explicit
// documents alike — are cached by the Mapper itself; this service keeps none of its own.
import fp from 'fastify-plugin'
import { Mapper, type CompiledMapping, type Extensions, type Limits, type Prepared, type ValidationReport } from '../engine/index.js'
import type { MappingEntry } from '../config/mappings.js'

/** A registered mapping failed validation at startup; the message carries its report. */
export class RegistrationError extends Error {
  override readonly name = 'RegistrationError'
}

/** What the engine service needs to know of the configuration. */
export interface EngineSettings {
  readonly limits: { readonly registered: Readonly<Required<Limits>>; readonly explicit: Readonly<Required<Limits>> }
  /** Whether explicit documents may use `stdout`. */
  readonly explicitStdout: boolean
  /** Total document bytes the explicit-document cache may hold. */
  readonly cacheBytes: number
}

export class EngineService {
  readonly mapper: Mapper
  readonly extensionNames: { initializers: string[]; transformers: string[]; plugins: string[] }

  constructor(
    entries: readonly MappingEntry[],
    extensions: Extensions,
    warn: (message: string) => void,
    readonly settings: EngineSettings,
  ) {
    this.mapper = new Mapper({}, extensions, { limits: settings.limits.registered, cache: { bytes: settings.cacheBytes } })
    try {
      this.mapper.register({ mappings: Object.fromEntries(entries.map((entry, i) => [String(i), entry.document])) })
    } catch (error) {
      throw new RegistrationError(`registering mappings failed: ${(error as Error).message}`)
    }
    for (const entry of entries) {
      const report = this.mapper.validate(entry.id)
      if (!report.valid) {
        throw new RegistrationError(`mapping "${entry.id}" from ${entry.source} is invalid: ${JSON.stringify(report)}`)
      }
      for (const warning of report.warnings) {
        warn(`mapping "${entry.id}" from ${entry.source}: ${warning.rule} ${warning.message} at ${warning.pointer || '/'}`)
      }
    }
    const { initializers, transformers, plugins } = this.mapper.extensions
    this.extensionNames = {
      initializers: Object.keys(initializers),
      transformers: Object.keys(transformers),
      plugins: Object.keys(plugins),
    }
  }

  /** The compiled plan of a registered id, or undefined (own ids only: never a prototype member). */
  registered(id: string): CompiledMapping | undefined {
    return Object.hasOwn(this.mapper.mappings, id) ? this.mapper.compile(id) : undefined
  }

  /** The validation report of a registered id, with its static expansion bound. */
  registeredReport(id: string): ValidationReport & { expansion?: number } {
    return this.mapper.report(id)
  }

  /** An explicit document validated (its budgets and stdout policy included) and, when valid, compiled. */
  explicit(document: object): Prepared {
    return this.mapper.prepare(document, { limits: this.settings.limits.explicit, stdout: this.settings.explicitStdout ? undefined : false })
  }
}

/**
 * The engine being served, replaceable as a whole (hot reload). A new set is registered and
 * validated into a complete EngineService before the swap, so a set that fails leaves the served
 * one untouched; a request reads `current` once and keeps that engine (and its compiled plans)
 * to its end, whatever is swapped in meanwhile.
 */
export class EngineRegistry {
  #current: EngineService

  constructor(
    entries: readonly MappingEntry[],
    private readonly extensions: Extensions,
    private readonly warn: (message: string) => void,
    private readonly settings: EngineSettings,
  ) {
    this.#current = new EngineService(entries, extensions, warn, settings)
  }

  get current(): EngineService {
    return this.#current
  }

  /** Serve `entries` from now on; throws RegistrationError (and keeps the served set) when one is invalid. */
  replace(entries: readonly MappingEntry[]): EngineService {
    const next = new EngineService(entries, this.extensions, this.warn, this.settings)
    this.#current = next
    return next
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The engine serving now: read it once per request (a reload may swap it afterwards). */
    readonly engine: EngineService
  }
}

export interface EnginePluginOptions {
  readonly registry: EngineRegistry
}

/** Decorates the service's context with its current engine. */
export const enginePlugin = fp<EnginePluginOptions>(
  async (app, { registry }) => {
    app.decorate('engine', {
      getter: () => registry.current,
    })
  },
  { name: 'mapper-engine', fastify: '5.x' },
)
