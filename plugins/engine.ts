// The engine behind the routes: one Mapper with the registered mappings and the extension surface,
// every registered mapping validated at startup, and compiled explicit documents cached by content
// (an unobservable cache: the same document text always yields the same plan and report).
import { createHash } from 'node:crypto'
import fp from 'fastify-plugin'
import { escapeToken, Mapper, MAX_DOCUMENT_DEPTH, type CompiledMapping, type Extensions, type Limits, type ValidationReport } from '../engine/index.js'
import { nestingDepth } from '../engine/values.js'
import type { MappingEntry } from '../sources/mappings.js'

/** A registered mapping failed validation at startup; the message carries its report. */
export class RegistrationError extends Error {
  override readonly name = 'RegistrationError'
}

/** The validation report as the service gives it: with the static expansion bound where there is one. */
export interface ServiceReport extends ValidationReport {
  expansion?: number
}

export interface ExplicitPlan {
  readonly report: ServiceReport
  readonly plan: CompiledMapping | null
  /** The bytes it counts for in the cache. */
  readonly size: number
}

/** How many distinct explicit documents stay compiled (the byte budget usually binds first). */
const EXPLICIT_CACHE_SIZE = 256

/** What the engine service needs to know of the configuration. */
export interface EngineSettings {
  readonly limits: { readonly registered: Readonly<Required<Limits>>; readonly explicit: Readonly<Required<Limits>> }
  /** Whether explicit documents may use `stdout`. */
  readonly explicitStdout: boolean
  /** Total document bytes the explicit cache may hold. */
  readonly cacheBytes: number
}

/** Keywords whose operands are data, not descriptors: a `stdout` key inside them is inert. */
const DATA_OPERANDS = new Set(['constant', 'default', 'enum', 'find', 'transform'])

/** The pointer of the first truthy `stdout` keyword of a document, or undefined. */
function stdoutAt(document: object): string | undefined {
  const work: Array<[object, string]> = [[document, '']]
  while (work.length > 0) {
    const [value, pointer] = work.pop()!
    if (!Array.isArray(value) && Object.hasOwn(value, 'stdout') && (value as Record<string, unknown>).stdout) return `${pointer}/stdout`
    for (const key of Object.keys(value)) {
      const member: unknown = (value as Record<string, unknown>)[key]
      if (member === null || typeof member !== 'object' || (!Array.isArray(value) && DATA_OPERANDS.has(key))) continue
      work.push([member, `${pointer}/${escapeToken(key)}`])
    }
  }
  return undefined
}

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
function contentKey(document: object): { key: string; size: number } | undefined {
  if (!jsonExact(document)) return undefined
  const text = JSON.stringify(document)
  return { key: text.length <= KEY_TEXT_LIMIT ? text : createHash('sha256').update(text).digest('base64'), size: text.length }
}

export class EngineService {
  readonly mapper: Mapper
  readonly extensionNames: { initializers: string[]; transformers: string[]; plugins: string[] }
  private readonly registeredPlans = new Map<string, CompiledMapping>()
  private readonly explicitPlans = new Map<string, ExplicitPlan>()
  private cachedBytes = 0

  constructor(
    entries: readonly MappingEntry[],
    extensions: Extensions,
    warn: (message: string) => void,
    readonly settings: EngineSettings,
  ) {
    this.mapper = new Mapper({}, extensions, { limits: settings.limits.registered })
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

  /** The validation report of a registered id, with its static expansion bound. */
  registeredReport(id: string): ServiceReport {
    return this.withExpansion(this.mapper.validate(id), id)
  }

  /**
   * Validate (instance level, screens and the explicit budgets included) and, when valid, compile
   * an explicit document. Results are cached by content, least recently used first out, within a
   * count and a total document size.
   */
  explicit(document: object): ExplicitPlan {
    // Too deep to be a mapping: validation says so (DOC-6) without the document ever being printed.
    if (nestingDepth(document, MAX_DOCUMENT_DEPTH) > MAX_DOCUMENT_DEPTH) return this.prepare(document, 0)
    const key = contentKey(document)
    if (key === undefined) return this.prepare(document, 0)
    const cached = this.explicitPlans.get(key.key)
    if (cached !== undefined) {
      // Refresh its place in the least-recently-used order.
      this.explicitPlans.delete(key.key)
      this.explicitPlans.set(key.key, cached)
      return cached
    }
    const entry = this.prepare(document, key.size)
    const budget = this.settings.cacheBytes
    // A document larger than a quarter of the cache would push out everything else: not kept.
    if (entry.size > budget / 4) return entry
    this.explicitPlans.set(key.key, entry)
    this.cachedBytes += entry.size
    while (this.explicitPlans.size > EXPLICIT_CACHE_SIZE || this.cachedBytes > budget) {
      const [oldest, evicted] = this.explicitPlans.entries().next().value!
      this.explicitPlans.delete(oldest)
      this.cachedBytes -= evicted.size
    }
    return entry
  }

  /** Documents and bytes the explicit cache holds now. */
  get explicitCache(): { entries: number; bytes: number } {
    return { entries: this.explicitPlans.size, bytes: this.cachedBytes }
  }

  private prepare(document: object, size: number): ExplicitPlan {
    const report = this.withExpansion(this.mapper.validate(document, this.settings.limits.explicit), document)
    if (report.valid && !this.settings.explicitStdout) {
      const pointer = stdoutAt(document)
      if (pointer !== undefined) {
        report.valid = false
        report.errors.push({ rule: 'SVC-stdout', message: 'stdout is not enabled for explicit documents on this deployment', pointer, descriptor: true })
      }
    }
    return { report, plan: report.valid ? this.mapper.compile(document) : null, size }
  }

  private withExpansion(report: ValidationReport, documentOrId: unknown): ServiceReport {
    if (!report.valid && report.errors.some((error) => error.rule !== 'BUDGET-1')) return report
    const expansion = this.mapper.expansion(documentOrId)
    return expansion === undefined ? report : { ...report, expansion }
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
