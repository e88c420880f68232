// Runs conformance case files (conformance/README.md) against the engine's public API: the
// `mapper` level through `new Mapper` + `map`, `map` through `evaluateMapping`, `get` through
// `evaluate`, `extend` through `extend`.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import { Mapper, evaluate, evaluateMapping, extend } from '../../engine/index.js'
import { readPointer } from '../../engine/pointer.js'
import type { ErrorObject } from '../../engine/types.js'
import { fixtureExtensions } from './fixtures.js'

export const PROJECT_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..')
/** The language's conformance suite, kept in the project as test data (test/conformance/README.md). */
export const SUITE_DIR = resolve(PROJECT_ROOT, 'test/conformance/engine')

const UNDEFINED = '__undefined__'

export interface ConformanceCase {
  description: string
  tier?: string
  level?: 'mapper' | 'map' | 'get' | 'extend'
  mappings?: Record<string, unknown>
  descriptor?: unknown
  id?: string
  input?: unknown
  expected?: {
    value?: unknown
    result?: unknown
    errors?: unknown[] | number
    valid?: boolean
    stdout?: Record<string, unknown>
  }
  assert?: Record<string, Record<string, unknown>>
  throws?: string
  deviation?: string
}

export interface ConformanceFile {
  file: string
  suite: string
  cases: Array<ConformanceCase & { level: NonNullable<ConformanceCase['level']> }>
}

/** Every `.yaml`/`.yml` file under the given files and directories, in lexicographic order. */
export function caseFiles(paths: readonly string[]): string[] {
  const found: string[] = []
  const visit = (path: string): void => {
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path).sort()) visit(join(path, name))
    } else if (/\.ya?ml$/.test(path)) {
      found.push(path)
    }
  }
  for (const path of paths) visit(resolve(path))
  return found
}

export function loadFile(file: string): ConformanceFile {
  const data = parse(readFileSync(file, 'utf8')) as { suite?: string; level?: string; tests?: ConformanceCase[] }
  const level = (data.level ?? 'mapper') as NonNullable<ConformanceCase['level']>
  return {
    file,
    suite: data.suite ?? file,
    cases: (data.tests ?? []).map((c) => ({ ...c, level: c.level ?? level })),
  }
}

/** JSON data-model equality; the expected string `__undefined__` demands an undefined actual. */
export function jsonEqual(actual: unknown, expected: unknown): boolean {
  if (expected === UNDEFINED) return actual === undefined
  if (actual === undefined) return false
  const normal = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? 'null')
  return deepEqual(normal(actual), expected)
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (b === UNDEFINED) return a === undefined
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const list = b as unknown[]
    return a.length === list.length && a.every((member, i) => deepEqual(member, list[i]))
  }
  const ao = a as Record<string, unknown>
  const bo = b as Record<string, unknown>
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)])
  for (const key of keys) {
    const expected = Object.hasOwn(bo, key) ? bo[key] : UNDEFINED
    const actual = Object.hasOwn(ao, key) ? ao[key] : undefined
    if (!deepEqual(actual, expected)) return false
  }
  return true
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/** The assertion ops of conformance/README.md; returns a failure message or undefined. */
export function assertOp(op: string, operand: unknown, value: unknown): string | undefined {
  const fail = (what: string): string => `${op} ${JSON.stringify(operand)}: ${what} (got ${JSON.stringify(value)})`
  switch (op) {
    case 'equals':
      return jsonEqual(value, operand) ? undefined : fail('not equal')
    case 'defined':
      return (value !== undefined) === operand ? undefined : fail('definedness differs')
    case 'type': {
      const type = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value
      return type === operand || (operand === 'object' && typeof value === 'object' && value !== null && !Array.isArray(value))
        ? undefined
        : fail(`type is ${type}`)
    }
    case 'length':
      return (value as { length?: unknown } | undefined)?.length === operand ? undefined : fail('length differs')
    case 'pattern':
      return new RegExp(String(operand)).test(typeof value === 'string' ? value : JSON.stringify(value)) ? undefined : fail('no match')
    case 'contains':
      if (typeof value === 'string') return value.includes(String(operand)) ? undefined : fail('substring missing')
      return Array.isArray(value) && value.some((m) => sameJson(m, operand)) ? undefined : fail('member missing')
    case 'oneOf':
      return Array.isArray(operand) && operand.some((o) => sameJson(o, value)) ? undefined : fail('not one of them')
    case 'subsetOf':
      return Array.isArray(value) && Array.isArray(operand) && value.every((m) => operand.some((o) => sameJson(m, o)))
        ? undefined
        : fail('not a subset')
    case 'keys': {
      const keys = value !== null && typeof value === 'object' ? Object.keys(value).sort() : []
      return sameJson(keys, [...(operand as string[])].sort()) ? undefined : fail(`keys are ${JSON.stringify(keys)}`)
    }
    default:
      return `unknown assertion op ${op}`
  }
}

/** The engine's two ways of running a level: generated JavaScript (the default) and the closure plan. */
export const PATHS = { generated: true, closures: false } as const

/** Run one case on both paths; the failures of each are prefixed with the path's name. */
export async function runCase(c: ConformanceFile['cases'][number]): Promise<string[]> {
  const failures: string[] = []
  for (const [path, codegen] of Object.entries(PATHS)) {
    for (const failure of await runCaseOn(c, codegen)) failures.push(`${path}: ${failure}`)
  }
  return failures
}

/** Run one case with code generation on or off; returns the list of failures (empty when it passes). */
export async function runCaseOn(c: ConformanceFile['cases'][number], codegen: boolean): Promise<string[]> {
  const printed: string[] = []
  const stdout = (text: string): void => {
    printed.push(text)
  }
  const errors: ErrorObject[] = []
  let actual: unknown
  let actualErrors: unknown[] = errors
  let valid: boolean | undefined
  try {
    switch (c.level) {
      case 'mapper': {
        const mapper = new Mapper({ mappings: c.mappings }, fixtureExtensions, { stdout, codegen })
        const envelope = await mapper.map(c.id ?? c.descriptor, c.input)
        actual = envelope
        actualErrors = envelope.errors
        valid = envelope.valid
        break
      }
      case 'map':
        actual = await evaluateMapping(c.descriptor as never, { ...fixtureExtensions, input: c.input, errors, mappings: c.mappings, stdout, codegen })
        break
      case 'get':
        actual = await evaluate(c.descriptor as never, { ...fixtureExtensions, input: c.input, errors, mappings: c.mappings, stdout, codegen })
        break
      case 'extend':
        actual = extend(c.descriptor as never, { mappings: c.mappings })
        break
      default:
        return [`unknown level ${String(c.level)}`]
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    if (c.throws === undefined) return [`threw unexpectedly: ${message}`]
    return message.includes(c.throws) ? [] : [`threw "${message}", expected a message containing "${c.throws}"`]
  }
  if (c.throws !== undefined) return [`expected a throw containing "${c.throws}", got ${JSON.stringify(actual)}`]

  const failures: string[] = []
  const expected = c.expected ?? {}
  if ('value' in expected && !jsonEqual(actual, expected.value)) {
    failures.push(`value: expected ${JSON.stringify(expected.value)}, got ${JSON.stringify(actual)}`)
  }
  if ('result' in expected && !jsonEqual(actual, expected.result)) {
    failures.push(`result: expected ${JSON.stringify(expected.result)}, got ${JSON.stringify(actual)}`)
  }
  if (expected.errors !== undefined) {
    const ok = typeof expected.errors === 'number' ? actualErrors.length === expected.errors : jsonEqual(actualErrors, expected.errors)
    if (!ok) failures.push(`errors: expected ${JSON.stringify(expected.errors)}, got ${JSON.stringify(actualErrors)}`)
  }
  if (expected.valid !== undefined && valid !== expected.valid) {
    failures.push(`valid: expected ${String(expected.valid)}, got ${String(valid)}`)
  }
  for (const [op, operand] of Object.entries(expected.stdout ?? {})) {
    const failure = assertOp(op, operand, printed.join('\n'))
    if (failure !== undefined) failures.push(`stdout ${failure}`)
  }
  for (const [pointer, ops] of Object.entries(c.assert ?? {})) {
    const value = pointer === '/' ? actual : readPointer(actual, pointer)
    for (const [op, operand] of Object.entries(ops)) {
      const failure = assertOp(op, operand, value)
      if (failure !== undefined) failures.push(`assert ${pointer} ${failure}`)
    }
  }
  return failures
}
