// Patterns run on V8's linear-time regular-expression engine (the `l` flag), so no pattern and no
// input can make matching backtrack: `^(a|a)*$` or `\S+@\S+\.\S+` cost time proportional to the
// input, never exponential or polynomial in it. The flag only becomes available behind a V8 switch,
// which adds the flag and changes nothing else. The linear engine refuses what it cannot run in
// linear time: backreferences, lookahead and lookbehind, and counted repetitions above 16.
import { setFlagsFromString } from 'node:v8'

setFlagsFromString('--enable-experimental-regexp-engine')

/** A pattern that is valid ECMAScript but cannot run in linear time. */
export class NonLinearPattern extends SyntaxError {
  override readonly name = 'NonLinearPattern'
  /** Typed as a `DocumentError` is (engine/errors.ts): the caller's document is refused, a 4xx. */
  readonly code = 'MappingDocumentError'
  readonly responseCode = 'MappingDocumentError'
  readonly statusCode = 422
}

/** Compile a pattern (no flags, as the language has it) for linear-time matching; throws SyntaxError. */
export function linearRegExp(pattern: string): RegExp {
  // Invalid syntax is told apart from valid syntax the linear engine cannot run.
  RegExp(pattern)
  try {
    // 'l' is V8's linear-time engine (--enable-experimental-regexp-engine), unknown to the linter.
    // eslint-disable-next-line no-invalid-regexp
    return new RegExp(pattern, 'l')
  } catch {
    throw new NonLinearPattern(`pattern ${JSON.stringify(pattern)} cannot run in linear time (backreferences, lookaround and repetition counts above 16 are not supported)`)
  }
}
