// The pattern safety screen (validation.md, KW-pattern-1/2/3/4): a pattern must compile for V8's
// linear-time engine (which alone makes matching safe; see linear-regexp.ts), must not
// quantify a group that itself contains a quantifier (star height above 1, safe-regex2's
// heuristic for catastrophic backtracking), must not hold more than 25 quantifiers, and must be
// small enough that the linear engine's cost per input character stays small (engine.md §6.4). It
// is a validation rule: every path that evaluates a caller's document validates it first.
import { createRequire } from 'node:module'
import safeRegex from 'safe-regex2'
import { LinearEngineUnavailable, linearRegExp, NonLinearPattern } from '../linear-regexp.js'

// safe-regex2's own parser, to tell "cannot analyze" apart from "unsafe" (ret is CommonJS whose
// export is the function itself, which its typings do not describe for ESM importers).
const tokenize = createRequire(import.meta.url)('ret') as (pattern: string) => Token

export const PATTERN_QUANTIFIER_LIMIT = 25

/**
 * The longest pattern admitted, in UTF-16 code units. Checked first, so neither V8's compiler nor
 * the screen's parser ever sees a pattern of 35 KB.
 */
export const PATTERN_LENGTH_LIMIT = 1000

/**
 * The most character ranges a pattern may compile to (engine.md §6.4). The linear engine keeps one
 * thread per live position of the pattern and tries every range of a class on every input
 * character, so its cost per character grows with this count: 5,000 ranges under `{16}` ran 23.5 s
 * on 20,000 characters. A literal character is one range; a class counts the ranges it lists (an
 * escape such as `\s` its own); each counts once per copy its repetitions make (`[a-z]{16}` is 16).
 * At 128 the worst pattern costs about a second on 20,000 characters (the explicit form's
 * patternInput), while `\s{8}`, `.{16}` or a UUID pattern still pass.
 */
export const PATTERN_RANGE_LIMIT = 128

export interface PatternVerdict {
  readonly rule: 'KW-pattern-1' | 'KW-pattern-2' | 'KW-pattern-3' | 'KW-pattern-4'
  readonly message: string
}

export const PATTERN_MESSAGES = {
  invalid: 'pattern must be a valid regular expression',
  nonLinear: 'pattern must run in linear time: no backreferences, lookahead or lookbehind, and no repetition count above 16',
  unanalyzable: 'pattern must be a regular expression the safety screen can analyze',
  starHeight: 'pattern must not quantify a group that contains a quantifier',
  quantifiers: `pattern must not contain more than ${PATTERN_QUANTIFIER_LIMIT} quantifiers`,
  length: `pattern must not be longer than ${PATTERN_LENGTH_LIMIT} characters`,
  ranges: `pattern must not compile to more than ${PATTERN_RANGE_LIMIT} character ranges`,
} as const

// The token shapes of ret 0.5 that the count reads (its `types` enumeration).
const ROOT = 0
const GROUP = 1
const SET = 3
const RANGE = 4
const REPETITION = 5
const CHAR = 7

interface Token {
  readonly type: number
  readonly stack?: readonly Token[]
  readonly options?: ReadonlyArray<readonly Token[]>
  readonly set?: readonly Token[]
  readonly min?: number
  readonly max?: number | null
  readonly value?: Token | number
}

/**
 * The copies of its operand a repetition compiles to: `{n,m}` unrolls to m, an unbounded `{n,}`
 * (`*`, `+`) to n and a loop around one more.
 */
function copies(min: number, max: number | null | undefined): number {
  return typeof max === 'number' && Number.isFinite(max) ? max : min + 1
}

/** The character ranges one token compiles to; stops counting once past `limit`. */
function rangesOf(token: Token, limit: number): number {
  switch (token.type) {
    case CHAR:
    case RANGE:
      return 1
    case SET:
      return sum(token.set ?? [], limit)
    case REPETITION: {
      const inner = rangesOf(token.value as Token, limit)
      return inner === 0 ? 0 : Math.min(inner * copies(token.min ?? 0, token.max), limit + 1)
    }
    case ROOT:
    case GROUP: {
      // Every alternative is compiled, whichever one matches.
      if (token.options !== undefined) {
        let total = 0
        for (const option of token.options) {
          total += sum(option, limit)
          if (total > limit) return total
        }
        return total
      }
      return sum(token.stack ?? [], limit)
    }
    default:
      // Anchors and boundaries (`^`, `$`, `\b`) consume nothing; references never pass the linear engine.
      return 0
  }
}

function sum(tokens: readonly Token[], limit: number): number {
  let total = 0
  for (const token of tokens) {
    total += rangesOf(token, limit)
    if (total > limit) return total
  }
  return total
}

/** The character ranges a pattern compiles to (engine.md §6.4), or a number past `limit` once it is. */
export function patternRanges(pattern: string, limit = PATTERN_RANGE_LIMIT): number {
  return rangesOf(tokenize(pattern), limit)
}

/** Judge a pattern operand; undefined when it is safe to run. */
export function screenPattern(pattern: unknown): PatternVerdict | undefined {
  if (typeof pattern !== 'string') return { rule: 'KW-pattern-1', message: PATTERN_MESSAGES.invalid }
  if (pattern.length > PATTERN_LENGTH_LIMIT) return { rule: 'KW-pattern-4', message: PATTERN_MESSAGES.length }
  try {
    linearRegExp(pattern)
  } catch (error) {
    if (error instanceof LinearEngineUnavailable) throw error
    return { rule: 'KW-pattern-1', message: error instanceof NonLinearPattern ? PATTERN_MESSAGES.nonLinear : PATTERN_MESSAGES.invalid }
  }
  let tokens: Token
  try {
    tokens = tokenize(pattern)
  } catch {
    // Valid ECMAScript the screen's parser does not know (lookbehind, for one): refused, since
    // nothing vouches for it.
    return { rule: 'KW-pattern-1', message: PATTERN_MESSAGES.unanalyzable }
  }
  if (!safeRegex(pattern, { limit: Number.POSITIVE_INFINITY })) {
    return { rule: 'KW-pattern-2', message: PATTERN_MESSAGES.starHeight }
  }
  if (!safeRegex(pattern, { limit: PATTERN_QUANTIFIER_LIMIT })) {
    return { rule: 'KW-pattern-3', message: PATTERN_MESSAGES.quantifiers }
  }
  if (rangesOf(tokens, PATTERN_RANGE_LIMIT) > PATTERN_RANGE_LIMIT) {
    return { rule: 'KW-pattern-4', message: PATTERN_MESSAGES.ranges }
  }
  return undefined
}
