// The keyword catalogue (engine.md §9): every name the language gives meaning to, with its stage
// and tier. The stage modules beside this file compile each keyword; validation reads the operand
// grammar from the same records. A plugin may never be registered under one of these names.

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

export interface KeywordRecord {
  readonly name: string
  readonly stage: Stage
  readonly tier: Tier
}

const record = (name: string, stage: Stage, tier: Tier = 'core'): KeywordRecord => ({ name, stage, tier })

export const KEYWORDS: readonly KeywordRecord[] = [
  record('$id', 'registry'),
  record('$ref', 'registry'),
  record('$extend', 'registry'),
  record('description', 'inert'),
  record('mapping', 'structure'),
  record('each', 'structure'),
  record('source', 'locate'),
  record('target', 'locate'),
  record('input', 'locate'),
  record('output', 'locate'),
  record('first', 'locate'),
  record('last', 'locate'),
  record('all', 'locate'),
  record('switch', 'dispatch'),
  record('find', 'shape'),
  record('concat', 'shape'),
  record('init', 'shape'),
  record('constant', 'shape'),
  record('random', 'shape', 'experimental'),
  record('unique', 'shape', 'experimental'),
  record('template', 'shape'),
  record('transform', 'shape'),
  record('type', 'validate'),
  record('maximum', 'validate'),
  record('minimum', 'validate'),
  record('multipleOf', 'validate'),
  record('minLength', 'validate'),
  record('maxLength', 'validate'),
  record('enum', 'validate'),
  record('pattern', 'validate'),
  record('required', 'validate'),
  record('default', 'finalize'),
  record('regexp_i', 'finalize', 'experimental'),
  record('as', 'finalize'),
  record('stdout', 'diagnostic', 'experimental'),
]

export const KEYWORD_NAMES: ReadonlySet<string> = new Set(KEYWORDS.map((k) => k.name))

export function isKeyword(name: string): boolean {
  return KEYWORD_NAMES.has(name)
}
