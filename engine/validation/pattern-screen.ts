// The pattern safety screen (validation.md, KW-pattern-1/2/3): a pattern must compile for V8's
// linear-time engine (which alone makes matching safe; see linear-regexp.ts), must not
// quantify a group that itself contains a quantifier (star height above 1, safe-regex2's
// heuristic for catastrophic backtracking), and must not hold more than 25 quantifiers. It is a
// validation rule: every path that evaluates a caller's document validates it first.
import { createRequire } from 'node:module'
import safeRegex from 'safe-regex2'
import { linearRegExp, NonLinearPattern } from '../linear-regexp.js'

// safe-regex2's own parser, to tell "cannot analyze" apart from "unsafe" (ret is CommonJS whose
// export is the function itself, which its typings do not describe for ESM importers).
const tokenize = createRequire(import.meta.url)('ret') as (pattern: string) => unknown

export const PATTERN_QUANTIFIER_LIMIT = 25

export interface PatternVerdict {
  readonly rule: 'KW-pattern-1' | 'KW-pattern-2' | 'KW-pattern-3'
  readonly message: string
}

export const PATTERN_MESSAGES = {
  invalid: 'pattern must be a valid regular expression',
  nonLinear: 'pattern must run in linear time: no backreferences, lookahead or lookbehind, and no repetition count above 16',
  unanalyzable: 'pattern must be a regular expression the safety screen can analyze',
  starHeight: 'pattern must not quantify a group that contains a quantifier',
  quantifiers: `pattern must not contain more than ${PATTERN_QUANTIFIER_LIMIT} quantifiers`,
} as const

/** Judge a pattern operand; undefined when it is safe to run. */
export function screenPattern(pattern: unknown): PatternVerdict | undefined {
  if (typeof pattern !== 'string') return { rule: 'KW-pattern-1', message: PATTERN_MESSAGES.invalid }
  try {
    linearRegExp(pattern)
  } catch (error) {
    return { rule: 'KW-pattern-1', message: error instanceof NonLinearPattern ? PATTERN_MESSAGES.nonLinear : PATTERN_MESSAGES.invalid }
  }
  try {
    tokenize(pattern)
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
  return undefined
}
