// The keyword catalogue (engine.md §9): every name the language gives meaning to, one record each,
// with its stage, tier and operand grammar. The stage modules beside this file compile the
// keywords; mapping validation (validation.md §2) checks operands against `operand`. A plugin may
// never be registered under one of these names.
import { screenPattern } from '../validation/pattern-screen.js'
import { isObject } from '../values.js'

export type Stage =
  | 'registry'
  | 'structure'
  | 'locate'
  | 'dispatch'
  | 'shape'
  | 'validate'
  | 'finalize'
  | 'diagnostic'
  | 'inert'

export type Tier = 'core' | 'extended' | 'experimental'

/** A document-level finding about an operand; `at` continues the keyword's pointer. */
export interface OperandIssue {
  readonly rule: string
  readonly message: string
  readonly at?: readonly string[]
  readonly descriptor?: unknown
}

export interface KeywordRecord {
  readonly name: string
  readonly stage: Stage
  readonly tier: Tier
  /** The operand grammar: the issues an operand value has (none when it is well-formed). */
  readonly operand?: (value: unknown) => OperandIssue[]
}

const issue = (rule: string, message: string, at?: readonly string[], descriptor?: unknown): OperandIssue[] => [
  { rule, message, ...(at === undefined ? {} : { at }), ...(descriptor === undefined ? {} : { descriptor }) },
]
const ok: OperandIssue[] = []

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)

const locate = (name: string) => (value: unknown): OperandIssue[] =>
  typeof value === 'string' ? ok : issue('KW-locate-1', `${name} must be a JSON Pointer string`)

const structure = (name: string) => (value: unknown): OperandIssue[] =>
  isObject(value) || typeof value === 'string' ? ok : issue('KW-mapping-1', `${name} must be an object of pairings or a mapping reference`)

const combinator = (name: string) => (value: unknown): OperandIssue[] =>
  Array.isArray(value) ? ok : issue('KW-combinator-1', `${name} must be an array of descriptors`)

const boolean = (name: string, rule: string) => (value: unknown): OperandIssue[] =>
  typeof value === 'boolean' ? ok : issue(rule, `${name} must be true or false`)

const validator = (name: string, test: (v: unknown) => boolean, what: string) => (value: unknown): OperandIssue[] =>
  test(value) ? ok : issue('KW-validate-1', `${name} must be ${what}`)

const JSON_TYPES = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string']
const COERCIONS = ['string', 'number', 'boolean', 'json']
const FORBIDDEN_IDS = ['__proto__', 'constructor', 'prototype']

function transformOperand(value: unknown): OperandIssue[] {
  const message = 'transform must be a transformer name or a list of names and one-key step objects'
  if (typeof value === 'string') return ok
  if (!Array.isArray(value)) return issue('KW-pipeline-1', message)
  return value.flatMap((step, i): OperandIssue[] => {
    if (typeof step === 'string') return ok
    if (isObject(step) && Object.keys(step).length === 1) return ok
    if (isObject(step)) return issue('KW-pipeline-1', 'a transform step object must have exactly one key', [String(i)], step)
    return issue('KW-pipeline-1', message, [String(i)], step)
  })
}

function idOperand(value: unknown): OperandIssue[] {
  if (typeof value !== 'string' || value === '') return issue('REG-5', '$id must be a non-empty string')
  if (FORBIDDEN_IDS.includes(value)) return issue('REG-6', `"${value}" is not allowed as a mapping $id`)
  return ok
}

function extendOperand(value: unknown): OperandIssue[] {
  const good = (id: unknown): boolean => typeof id === 'string' && id !== ''
  if (good(value) || (Array.isArray(value) && value.length > 0 && value.every(good))) return ok
  return issue('REG-5', '$extend must be a mapping id or a non-empty list of mapping ids')
}

function switchOperand(value: unknown): OperandIssue[] {
  const named = isObject(value) && ['source', 'input', 'output'].some((k) => typeof value[k] === 'string' && value[k] !== '')
  return named && isObject(value.cases) ? ok : issue('KW-switch-1', 'switch must name source, input or output and give cases')
}

function findOperand(value: unknown): OperandIssue[] {
  const good = isObject(value) && isObject(value.eq) && (value.pointer === undefined || typeof value.pointer === 'string')
  return good ? ok : issue('KW-find-1', 'find must be an object with an eq object')
}

/** The largest `random` selection a document may ask for (each member is a value of the output). */
export const MAX_RANDOM = 10_000

function randomOperand(value: unknown): OperandIssue[] {
  if (!Number.isInteger(value) || (value as number) <= 0) return issue('KW-random-1', 'random must be a positive integer')
  return (value as number) <= MAX_RANDOM ? ok : issue('KW-random-1', `random must not exceed ${MAX_RANDOM}`)
}

function patternOperand(value: unknown): OperandIssue[] {
  const verdict = screenPattern(value)
  return verdict === undefined ? ok : issue(verdict.rule, verdict.message)
}

const record = (name: string, stage: Stage, operand?: (value: unknown) => OperandIssue[], tier: Tier = 'core'): KeywordRecord =>
  operand === undefined ? { name, stage, tier } : { name, stage, tier, operand }

export const KEYWORDS: readonly KeywordRecord[] = [
  record('$id', 'registry', idOperand),
  record('$ref', 'registry', (v) => (typeof v === 'string' ? ok : issue('REG-5', '$ref must be a mapping id string'))),
  record('$extend', 'registry', extendOperand),
  record('description', 'inert'),
  record('mapping', 'structure', structure('mapping')),
  record('each', 'structure', structure('each')),
  record('source', 'locate', locate('source')),
  record('target', 'locate', locate('target')),
  record('input', 'locate', locate('input')),
  record('output', 'locate', locate('output')),
  record('first', 'locate', combinator('first')),
  record('last', 'locate', combinator('last')),
  record('all', 'locate', combinator('all')),
  record('switch', 'dispatch', switchOperand),
  record('find', 'shape', findOperand),
  record('concat', 'shape', boolean('concat', 'KW-pipeline-1')),
  record('init', 'shape', (v) => (typeof v === 'string' ? ok : issue('KW-pipeline-1', 'init must be an initializer name'))),
  record('constant', 'shape'),
  record('random', 'shape', randomOperand, 'experimental'),
  record('unique', 'shape', (v) => (typeof v === 'boolean' ? ok : issue('KW-random-1', 'unique must be true or false')), 'experimental'),
  record('template', 'shape', (v) => (typeof v === 'string' ? ok : issue('KW-pipeline-1', 'template must be a string'))),
  record('transform', 'shape', transformOperand),
  record('type', 'validate', validator('type', (v) => typeof v === 'string' && JSON_TYPES.includes(v), `one of ${JSON_TYPES.join(', ')}`)),
  record('maximum', 'validate', validator('maximum', isNumber, 'a number')),
  record('minimum', 'validate', validator('minimum', isNumber, 'a number')),
  record('multipleOf', 'validate', validator('multipleOf', (v) => isNumber(v) && v > 0, 'a positive number')),
  record('minLength', 'validate', validator('minLength', (v) => Number.isInteger(v) && (v as number) >= 0, 'a non-negative integer')),
  record('maxLength', 'validate', validator('maxLength', (v) => Number.isInteger(v) && (v as number) >= 0, 'a non-negative integer')),
  record('enum', 'validate', validator('enum', Array.isArray, 'an array')),
  record('pattern', 'validate', patternOperand),
  record('required', 'validate', validator('required', (v) => typeof v === 'boolean', 'true or false')),
  record('default', 'finalize'),
  record('regexp_i', 'finalize', boolean('regexp_i', 'KW-pipeline-1'), 'experimental'),
  record('as', 'finalize', (v) => (typeof v === 'string' && COERCIONS.includes(v) ? ok : issue('KW-pipeline-1', 'as must be string, number, boolean, or json'))),
  record('stdout', 'diagnostic', (v) => (typeof v === 'boolean' || typeof v === 'string' ? ok : issue('KW-pipeline-1', 'stdout must be true or a JSON Pointer string')), 'experimental'),
]

const BY_NAME: ReadonlyMap<string, KeywordRecord> = new Map(KEYWORDS.map((k) => [k.name, k]))

export const KEYWORD_NAMES: ReadonlySet<string> = new Set(BY_NAME.keys())

export function isKeyword(name: string): boolean {
  return BY_NAME.has(name)
}

export function keyword(name: string): KeywordRecord | undefined {
  return BY_NAME.get(name)
}
