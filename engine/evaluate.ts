// One-shot evaluation against an environment (docs/spec/language.md Part 2 "API"): one descriptor through GET
// or MAP from a root context, and `$extend` flattening. The `get`, `map` and `extend` levels of the
// conformance suite run through these.
import { resolveLimits } from './budget.js'
import { Compiler } from './compile.js'
import { Context } from './context.js'
import { firstCheckpoint, Run } from './run.js'
import { DocumentError } from './errors.js'
import { admitDocument, resolveExtensions } from './mapper.js'
import { mapPlan } from './procedures.js'
import { flatten } from './keywords/registry/ancestry.js'
import { DocumentRegistry, EMPTY_REGISTRY } from './registry.js'
import type { Descriptor, Environment, MappingDocument } from './types.js'
import { isObject } from './values.js'

function rootContext(env: Environment): { root: Context; compiler: Compiler } {
  const stdout = env.stdout ?? ((text: string) => console.log(text))
  const compiler = new Compiler(resolveExtensions(env), { unknownNames: env.unknownNames ?? 'skip', stdout, codegen: env.codegen })
  const registry = env.mappings === undefined ? EMPTY_REGISTRY : new DocumentRegistry(admitDocument(env.mappings), compiler)
  const output = {}
  const limits = resolveLimits(env.limits)
  const run = new Run(env.input, output, env.errors ?? [], registry, compiler, stdout, undefined, limits, firstCheckpoint(limits), limits.depth)
  return { root: new Context(run, env.input, output, null, -1, undefined, undefined), compiler }
}

/** GET one descriptor in a context derived from the root (its own `source` extends the path). */
export async function evaluate(descriptor: Descriptor, env: Environment = {}): Promise<unknown> {
  const { root, compiler } = rootContext(env)
  const plan = compiler.plan(admitDocument(descriptor))
  return plan.get(new Context(root.run, root.source, root.target, root, -1, plan.sourcePath, plan.targetPath))
}

/** MAP a structural descriptor from the root: the target, or null when it short-circuited. */
export async function evaluateMapping(descriptor: Descriptor, env: Environment = {}): Promise<object | null> {
  const { root, compiler } = rootContext(env)
  return mapPlan(compiler.slot(admitDocument(descriptor))(root), root)
}

/** Resolve a descriptor's `$extend` against named mappings; the result has no `$extend` left. */
export function extend(descriptor: MappingDocument, { mappings = {} }: { mappings?: Record<string, unknown> } = {}): MappingDocument {
  if (!isObject(descriptor)) throw new DocumentError('a mapping document must be an object')
  const lookup = (id: string): unknown => (Object.hasOwn(mappings, id) ? mappings[id] : undefined)
  return flatten(descriptor, lookup) as MappingDocument
}
