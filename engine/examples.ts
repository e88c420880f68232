// Running a document's `examples` (keywords/inert/examples.ts): each input is evaluated as the
// mapping would be once registered, and the envelope is compared with what the example states. A
// failure is reported as the list of places where the two differ, so a reader sees what changed
// rather than two documents to compare by eye.
import type { SharedBudget } from './budget.js'
import { documentForm, idOf } from './document.js'
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
  /** The first `MAX_DIFFERENCES` places where they differ. */
  readonly differences: readonly Difference[]
  /** How many places they differ at in all (`differences` lists the first ones). */
  readonly differenceCount: number
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
        const id = idOf(mapping)
        if (registered && id !== undefined) return id
        const others = Object.fromEntries(Object.entries(siblings).filter(([name]) => name !== key))
        return id !== undefined || Object.keys(others).length > 0 ? { mappings: { ...others, [key]: mapping } } : mapping
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

/** Where differences are collected: the first `limit` listed, every one counted. */
interface Collected {
  readonly list: Difference[]
  count: number
  readonly limit: number
}

function note(into: Collected, difference: Difference): void {
  into.count++
  if (into.list.length < into.limit) into.list.push(difference)
}

/** Nesting past which two values that differ count as one difference (JSON values this deep are refused long before). */
const COMPARED_DEPTH = 512

function collect(expected: unknown, actual: unknown, pointer: string, into: Collected, depth: number): void {
  if (expected === actual) return
  if (depth < COMPARED_DEPTH && Array.isArray(expected) && Array.isArray(actual)) {
    const length = Math.max(expected.length, actual.length)
    for (let i = 0; i < length; i++) {
      const at = `${pointer}/${i}`
      if (i >= actual.length) note(into, { pointer: at, expected: expected[i] })
      else if (i >= expected.length) note(into, { pointer: at, actual: actual[i] })
      else collect(expected[i], actual[i], at, into, depth + 1)
    }
    return
  }
  if (depth < COMPARED_DEPTH && isObject(expected) && isObject(actual)) {
    for (const key of Object.keys(expected)) {
      const at = `${pointer}/${escapeToken(key)}`
      if (!Object.hasOwn(actual, key)) note(into, { pointer: at, expected: expected[key] })
      else collect(expected[key], actual[key], at, into, depth + 1)
    }
    for (const key of Object.keys(actual)) {
      if (!Object.hasOwn(expected, key)) note(into, { pointer: `${pointer}/${escapeToken(key)}`, actual: actual[key] })
    }
    return
  }
  note(into, { pointer, expected, actual })
}

/** How many differences a failing example lists (the rest are counted: `ExampleResult.differenceCount`). */
export const MAX_DIFFERENCES = 100

/**
 * Where `expected` and `actual` differ, in the expected value's key order, then keys only `actual`
 * has: the first `limit` of them (however many there are, the list is never longer).
 */
export function differences(expected: unknown, actual: unknown, pointer = '', limit = MAX_DIFFERENCES): Difference[] {
  const into: Collected = { list: [], count: 0, limit }
  collect(expected, actual, pointer, into, 0)
  return into.list
}

/** `differences`, with how many there are in all. */
function counted(expected: unknown, actual: unknown): Collected {
  const into: Collected = { list: [], count: 0, limit: MAX_DIFFERENCES }
  collect(expected, actual, '', into, 0)
  return into
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
  const more = result.differenceCount - 1
  return `${what} fails: ${first === undefined ? 'no difference' : describeDifference(first)}${more > 0 ? ` (and ${more} more difference${more === 1 ? '' : 's'})` : ''}`
}

async function runOne(set: ExampleSet, index: number, target: unknown, evaluate: ExampleEvaluator): Promise<ExampleResult> {
  const example = set.examples[index]!
  const expected: Record<string, unknown> = { ...example.output, valid: example.valid ?? true }
  if (example.errors !== undefined) expected.errors = example.errors
  const base = {
    pointer: `${set.pointer}/${index}`,
    mapping: idOf(set.mapping),
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
    return { ...base, pass: false, differences: [], differenceCount: 0, error: error instanceof Error ? error.message : String(error) }
  }
  const found = counted(asJson(expected), actual)
  return { ...base, pass: found.count === 0, actual, differences: found.list, differenceCount: found.count }
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
      differences: result.differences.slice(),
      ...(result.differenceCount > result.differences.length ? { omittedDifferences: result.differenceCount - result.differences.length } : {}),
    }))
}
