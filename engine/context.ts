// The evaluation context (engine.md §4). Everything shared by one invocation lives in its `Run`;
// a `Context` adds the rebound scopes. Compiled plans hold no per-run state, so one plan serves
// any number of concurrent runs.
import { resolvePath, type WriteOwnership } from './pointer.js'
import type { Compiler } from './compile.js'
import type { RegistryView } from './registry.js'
import type {
  Descriptor,
  ErrorObject,
  EvaluationContext,
  Initializer,
  MappingDocument,
  Plugin,
  ScopeOverrides,
  Transformer,
} from './types.js'

const NO_EXTRAS: readonly string[] = []

/** Names an `extra` field may not take: they are the context's own members. */
const RESERVED = new Set([
  // Read through getters below, so a host may supply them lazily (a signal made on first use).
  'identity', 'signal',
  'input', 'output', 'errors', 'mappings', 'initializers', 'transformers', 'plugins', 'source',
  'target', 'paths', 'run', 'parent', 'index', 'sourcePath', 'targetPath', 'evaluate',
  'evaluateMapping', 'derive', 'constructor', '__proto__', 'prototype',
])

/** The shared state of one invocation. */
export class Run implements WriteOwnership {
  readonly extraKeys: readonly string[]
  private foreign: WeakSet<object> | null = null

  constructor(
    readonly input: unknown,
    readonly output: object,
    readonly errors: ErrorObject[],
    readonly registry: RegistryView,
    readonly compiler: Compiler,
    readonly stdout: (text: string) => void,
    readonly extra: Readonly<Record<string, unknown>> | undefined,
  ) {
    this.extraKeys = extra === undefined ? NO_EXTRAS : Object.keys(extra).filter((k) => !RESERVED.has(k))
  }

  /** A value written into the output that came from outside the engine (input, document, extension). */
  markForeign(value: object): void {
    ;(this.foreign ??= new WeakSet()).add(value)
  }

  isForeign(container: object): boolean {
    return this.foreign !== null && this.foreign.has(container)
  }

  adopt(copy: object): void {
    // The copy is the engine's own now; the members it shares with the original are not.
    for (const member of Object.values(copy)) {
      if (member !== null && typeof member === 'object') this.markForeign(member)
    }
  }
}

const ROOT_PATHS = Object.freeze({ source: '/', target: '/' })

/**
 * How many contexts deep one evaluation may go. A mapping that references itself recurses as long
 * as its input does; one whose scope never shrinks would recurse forever, so it is stopped here
 * with an error instead of exhausting the stack (or, when asynchronous, the memory).
 */
export const MAX_EVALUATION_DEPTH = 500

/** One depth of evaluation: the run's shared fields plus this depth's source, target and paths. */
export class Context implements EvaluationContext {
  private cachedPaths: { readonly source: string; readonly target: string } | undefined
  private readonly depth: number;
  readonly [extra: string]: unknown

  constructor(
    readonly run: Run,
    readonly source: unknown,
    readonly target: object,
    private readonly parent: Context | null,
    /** Element index appended to `paths.source` (NEST), or -1. */
    private readonly index: number,
    /** The descriptor's truthy `source`, appended to `paths.source`. */
    private readonly sourcePath: string | undefined,
    /** The descriptor's truthy `target`, appended to `paths.target`. */
    private readonly targetPath: string | undefined,
  ) {
    this.depth = parent === null ? 0 : parent.depth + 1
    if (this.depth > MAX_EVALUATION_DEPTH) {
      throw new RangeError(`evaluation nesting exceeds ${MAX_EVALUATION_DEPTH} levels: does a mapping reference itself without running out of input?`)
    }
    const keys = run.extraKeys
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!
      ;(this as Record<string, unknown>)[key] = run.extra![key]
    }
  }

  get input(): unknown {
    return this.run.input
  }
  get output(): object {
    return this.run.output
  }
  get errors(): ErrorObject[] {
    return this.run.errors
  }
  get mappings(): Readonly<Record<string, Readonly<MappingDocument>>> {
    return this.run.registry.view()
  }
  get initializers(): Readonly<Record<string, Initializer>> {
    return this.run.compiler.extensions.initializers
  }
  get transformers(): Readonly<Record<string, Transformer>> {
    return this.run.compiler.extensions.transformers
  }
  get plugins(): Readonly<Record<string, Plugin>> {
    return this.run.compiler.extensions.plugins
  }

  /** The caller's identity, when the host supplied one (`extra.identity`). */
  get identity(): unknown {
    return this.run.extra?.identity
  }

  /** The host's abort signal (`extra.signal`), read only when an extension asks for it. */
  get signal(): AbortSignal | undefined {
    return this.run.extra?.signal as AbortSignal | undefined
  }

  /** Computed on first use: only relative references and extensions look at paths. */
  get paths(): { readonly source: string; readonly target: string } {
    if (this.cachedPaths !== undefined) return this.cachedPaths
    const base = this.parent === null ? ROOT_PATHS : this.parent.paths
    let source = base.source
    if (this.sourcePath !== undefined) {
      source = this.index >= 0 ? resolvePath(source, `/${this.index}`, this.sourcePath) : resolvePath(source, this.sourcePath)
    }
    const target = this.targetPath !== undefined ? resolvePath(base.target, this.targetPath) : base.target
    this.cachedPaths = source === base.source && target === base.target ? base : Object.freeze({ source, target })
    return this.cachedPaths
  }

  /** A context with the same target and paths reading from another source. */
  withSource(source: unknown): Context {
    return new Context(this.run, source, this.target, this, -1, undefined, undefined)
  }

  evaluate(descriptor: Descriptor, overrides?: ScopeOverrides): unknown {
    return this.run.compiler.reenter(this, descriptor, overrides, false)
  }

  evaluateMapping(descriptor: Descriptor, overrides?: ScopeOverrides): object | null | Promise<object | null> {
    return this.run.compiler.reenter(this, descriptor, overrides, true) as object | null | Promise<object | null>
  }
}
