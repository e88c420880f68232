// The engine behind the routes: one Mapper with the registered mappings and the extension surface,
// every registered mapping validated at startup, and compiled explicit documents cached by content
// (an unobservable cache: the same document text always yields the same plan and report).
import { createHash } from 'node:crypto'
import fp from 'fastify-plugin'
import { Mapper, type CompiledMapping, type Extensions, type ValidationReport } from '../engine/index.js'
import type { MappingEntry } from '../sources/mappings.js'

/** A registered mapping failed validation at startup; the message carries its report. */
export class RegistrationError extends Error {
  override readonly name = 'RegistrationError'
}

export interface ExplicitPlan {
  readonly report: ValidationReport
  readonly plan: CompiledMapping | null
}

/** How many distinct explicit documents stay compiled. */
const EXPLICIT_CACHE_SIZE = 256

/** Documents this short are their own cache key; longer ones are keyed by a hash of their text. */
const KEY_TEXT_LIMIT = 2048

/** True when every number of a parsed document prints back as itself in JSON (not ±Infinity, not -0). */
function jsonExact(document: object): boolean {
  const work: unknown[] = [document]
  while (work.length > 0) {
    const value = work.pop()
    if (typeof value === 'number') {
      if (!Number.isFinite(value) || Object.is(value, -0)) return false
    } else if (value !== null && typeof value === 'object') {
      for (const member of Object.values(value)) work.push(member)
    }
  }
  return true
}

/**
 * The cache key of a parsed document: its JSON text (hashed when long), or undefined when that text
 * would not tell it apart from another document (1e400 and null, -0 and 0 print alike), so it is
 * never shared.
 */
function contentKey(document: object): string | undefined {
  if (!jsonExact(document)) return undefined
  const text = JSON.stringify(document)
  return text.length <= KEY_TEXT_LIMIT ? text : createHash('sha256').update(text).digest('base64')
}

export class EngineService {
  readonly mapper: Mapper
  readonly extensionNames: { initializers: string[]; transformers: string[]; plugins: string[] }
  private readonly registeredPlans = new Map<string, CompiledMapping>()
  private readonly explicitPlans = new Map<string, ExplicitPlan>()

  constructor(entries: readonly MappingEntry[], extensions: Extensions, warn: (message: string) => void) {
    this.mapper = new Mapper({}, extensions)
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
    let plan = this.registeredPlans.get(id)
    if (plan === undefined && Object.hasOwn(this.mapper.mappings, id)) {
      plan = this.mapper.compile(id)
      this.registeredPlans.set(id, plan)
    }
    return plan
  }

  /** Validate (instance level, screens included) and, when valid, compile an explicit document. */
  explicit(document: object): ExplicitPlan {
    const key = contentKey(document)
    if (key === undefined) return this.prepare(document)
    const cached = this.explicitPlans.get(key)
    if (cached !== undefined) {
      // Refresh its place in the least-recently-used order.
      this.explicitPlans.delete(key)
      this.explicitPlans.set(key, cached)
      return cached
    }
    const entry = this.prepare(document)
    this.explicitPlans.set(key, entry)
    if (this.explicitPlans.size > EXPLICIT_CACHE_SIZE) this.explicitPlans.delete(this.explicitPlans.keys().next().value!)
    return entry
  }

  private prepare(document: object): ExplicitPlan {
    const report = this.mapper.validate(document)
    return { report, plan: report.valid ? this.mapper.compile(document) : null }
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    engine: EngineService
  }
}

export interface EnginePluginOptions {
  readonly engine: EngineService
}

/** Decorates the service's context with its engine. */
export const enginePlugin = fp<EnginePluginOptions>(
  async (app, { engine }) => {
    app.decorate('engine', engine)
  },
  { name: 'mapper-engine', fastify: '5.x' },
)
