// Running a document's `examples` (keywords/inert/examples.ts): each input is evaluated as the
// mapping would be once registered, and the envelope is compared with what the example states. A
// failure is reported as the list of places where the two differ, so a reader sees what changed
// rather than two documents to compare by eye.
import type { SharedBudget } from './budget.js'
import { documentForm } from './document.js'
import { escapeToken } from './pointer.js'
import type { Envelope } from './types.js'
import type { Diagnostic } from './validation/validate.js'
import { isObject } from './values.js'

/** One example as a document states it (its shape is checked by validation, KW-examples-1). */
export interface Example {
  readonly input: unknown
  readonly output: Readonly<Record<string, unknown>>
  readonly valid?: boolean
  readonly errors?: readonly unknown[]
  readonly description?: string
}

/** One place where the envelope and the example differ; a side that is absent there has no member. */
export interface Difference {
  readonly pointer: string
  readonly expected?: unknown
  readonly actual?: unknown
}

export interface ExampleResult {
  /** Where the example stands in the document: `/examples/0`, `/mappings/<key>/examples/0`. */
  readonly pointer: string
  /** The `$id` of the mapping the example belongs to, when it has one. */
  readonly mapping: string | undefined
  readonly index: number
  readonly description?: string
  /** The example as the document states it. */
  readonly example: Example
  readonly pass: boolean
  /** `{ ...output, valid }`, with `errors` when the example states them. */
  readonly expected: Readonly<Record<string, unknown>>
  /** The envelope as compared (without `errors` unless the example states them); absent when evaluation threw. */
  readonly actual?: unknown
  readonly differences: readonly Difference[]
  /** Why evaluation threw (a budget, an extension's error). */
  readonly error?: string
}

/** Evaluates a document or a registered id against an input. */
export type ExampleEvaluator = (documentOrId: unknown, input: unknown) => Promise<Envelope> | Envelope

export interface ExampleOptions {
  /**
   * The document's mappings are registered on the engine that evaluates: each one with a `$id` runs
   * by that id. Otherwise each runs from the document, flattened as registration would flatten it,
   * and nothing is registered.
   */
  readonly registered?: boolean
  /** Called with each result as it is known (progress on long runs). */
  readonly onResult?: (result: ExampleResult) => void
  /**
   * One budget for every example (`Mapper.examples` evaluates on it): once an example passes it,
   * that example fails with the budget's error and the examples after it are not run, so fewer
   * results than `countExamples` come back. Without it, each example has budgets of its own.
   */
  readonly budget?: SharedBudget
}

/** The examples of a document: those of a single document's top, and of each compound member. */
interface ExampleSet {
  readonly pointer: string
  readonly mapping: Record<string, unknown>
  readonly examples: readonly Example[]
  /** What to evaluate so that this mapping is the entry, as registration would see it. */
  readonly target: (registered: boolean) => unknown
}

const hasId = (mapping: Record<string, unknown>): mapping is Record<string, unknown> & { $id: string } =>
  typeof mapping.$id === 'string' && mapping.$id !== ''

function exampleSets(document: unknown): ExampleSet[] {
  const form = documentForm(document)
  if (form === 'invalid') return []
  const sets: ExampleSet[] = []
  const add = (pointer: string, mapping: Record<string, unknown>, siblings: Record<string, unknown>, key: string): void => {
    if (!Array.isArray(mapping.examples) || mapping.examples.length === 0) return
    sets.push({
      pointer: `${pointer}/examples`,
      mapping,
      examples: mapping.examples as Example[],
      // The last member of a compound document is its entry, and a member with a `$id` runs flattened.
      target: (registered) => {
        if (registered && hasId(mapping)) return mapping.$id
        const others = Object.fromEntries(Object.entries(siblings).filter(([name]) => name !== key))
        return hasId(mapping) || Object.keys(others).length > 0 ? { mappings: { ...others, [key]: mapping } } : mapping
      },
    })
  }
  const root = document as Record<string, unknown>
  if (form === 'compound') {
    if (!isObject(root.mappings)) return []
    for (const [key, member] of Object.entries(root.mappings)) {
      if (isObject(member)) add(`/mappings/${escapeToken(key)}`, member, root.mappings, key)
    }
  } else if (form === 'descriptor') {
    add('', root, {}, 'entry')
  }
  return sets
}

/** A JSON value as a document would hold it (undefined members dropped, as in the printed envelope). */
const asJson = (value: unknown): unknown => (value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown))

/** Where `expected` and `actual` differ, in the expected value's key order, then keys only `actual` has. */
export function differences(expected: unknown, actual: unknown, pointer = ''): Difference[] {
  if (expected === actual) return []
  if (Array.isArray(expected) && Array.isArray(actual)) {
    const found: Difference[] = []
    for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
      const at = `${pointer}/${i}`
      if (i >= actual.length) found.push({ pointer: at, expected: expected[i] })
      else if (i >= expected.length) found.push({ pointer: at, actual: actual[i] })
      else found.push(...differences(expected[i], actual[i], at))
    }
    return found
  }
  if (isObject(expected) && isObject(actual)) {
    const found: Difference[] = []
    for (const key of Object.keys(expected)) {
      const at = `${pointer}/${escapeToken(key)}`
      if (!Object.hasOwn(actual, key)) found.push({ pointer: at, expected: expected[key] })
      else found.push(...differences(expected[key], actual[key], at))
    }
    for (const key of Object.keys(actual)) {
      if (!Object.hasOwn(expected, key)) found.push({ pointer: `${pointer}/${escapeToken(key)}`, actual: actual[key] })
    }
    return found
  }
  return [{ pointer, expected, actual }]
}

const MAX_VALUE_TEXT = 80

function valueText(value: unknown): string {
  const text = JSON.stringify(value)
  return text.length > MAX_VALUE_TEXT ? `${text.slice(0, MAX_VALUE_TEXT - 1)}…` : text
}

/** One line for a difference: `/a/b: expected 1, got "1"`. */
export function describeDifference(difference: Difference): string {
  const where = difference.pointer === '' ? '(envelope)' : difference.pointer
  if (!('actual' in difference)) return `${where}: expected ${valueText(difference.expected)}, but it is absent`
  if (!('expected' in difference)) return `${where}: not expected, got ${valueText(difference.actual)}`
  return `${where}: expected ${valueText(difference.expected)}, got ${valueText(difference.actual)}`
}

/** One line for a failing example: its place and its first difference (or the error it threw). */
export function describeFailure(result: ExampleResult): string {
  const what = result.description === undefined ? `example ${result.index}` : `example ${result.index} (${result.description})`
  if (result.error !== undefined) return `${what} fails: evaluation threw: ${result.error}`
  const [first] = result.differences
  const more = result.differences.length - 1
  return `${what} fails: ${first === undefined ? 'no difference' : describeDifference(first)}${more > 0 ? ` (and ${more} more difference${more === 1 ? '' : 's'})` : ''}`
}

async function runOne(set: ExampleSet, index: number, target: unknown, evaluate: ExampleEvaluator): Promise<ExampleResult> {
  const example = set.examples[index]!
  const expected: Record<string, unknown> = { ...example.output, valid: example.valid ?? true }
  if (example.errors !== undefined) expected.errors = example.errors
  const base = {
    pointer: `${set.pointer}/${index}`,
    mapping: hasId(set.mapping) ? set.mapping.$id : undefined,
    index,
    example,
    ...(example.description === undefined ? {} : { description: example.description }),
    expected,
  }
  let actual: unknown
  try {
    const compared: Record<string, unknown> = { ...(await evaluate(target, example.input)) }
    if (example.errors === undefined) delete compared.errors
    // A value an extension returned that JSON cannot print (a BigInt) fails here, as it would in /map.
    actual = asJson(compared)
  } catch (error) {
    return { ...base, pass: false, differences: [], error: error instanceof Error ? error.message : String(error) }
  }
  const found = differences(asJson(expected), actual)
  return { ...base, pass: found.length === 0, actual, differences: found }
}

/** Run every example of a document, in document order. */
export async function runExamples(document: unknown, evaluate: ExampleEvaluator, options: ExampleOptions = {}): Promise<ExampleResult[]> {
  const results: ExampleResult[] = []
  for (const set of exampleSets(document)) {
    // Built once per mapping, so the evaluator's compiled-document cache serves every example.
    const target = set.target(options.registered === true)
    for (let i = 0; i < set.examples.length; i++) {
      if (options.budget?.tripped) return results
      const result = await runOne(set, i, target, evaluate)
      options.onResult?.(result)
      results.push(result)
    }
  }
  return results
}

/** How many examples a document has (what `runExamples` would run). */
export function countExamples(document: unknown): number {
  return exampleSets(document).reduce((sum, set) => sum + set.examples.length, 0)
}

/** Failing examples as validation errors (`EXAMPLE-1`), with their differences. */
export function exampleDiagnostics(results: readonly ExampleResult[]): Diagnostic[] {
  return results
    .filter((result) => !result.pass)
    .map((result) => ({
      rule: 'EXAMPLE-1',
      message: describeFailure(result),
      pointer: result.pointer,
      descriptor: result.example,
      differences: [...result.differences],
    }))
}
