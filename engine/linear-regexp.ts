// Patterns run on V8's linear-time regular-expression engine (the `l` flag), so no pattern and no
// input can make matching backtrack: `^(a|a)*$` or `\S+@\S+\.\S+` cost time proportional to the
// input, never exponential or polynomial in it. The linear engine refuses what it cannot run in
// linear time: backreferences, lookahead and lookbehind, and counted repetitions above 16.
//
// The `l` flag exists only behind a V8 switch (`--enable-experimental-regexp-engine`), which adds
// the flag and changes nothing else; but a switch is process-wide, and Node documents changing V8
// switches after start-up as unsupported. So importing the engine changes nothing: the host turns
// the switch on, explicitly, with `enableLinearRegExp()` (the service does at start-up) or with
// the command-line option. Until it does, a pattern is never run on the backtracking engine
// instead: compiling one throws LinearEngineUnavailable, which says how to turn it on.
import { setFlagsFromString } from 'node:v8'

/** V8's flag for its linear-time engine (unknown to the linter, so never written as a literal). */
const LINEAR = 'l'

/** Whether the `l` flag is known to be available (only `true` is remembered: the switch may be turned on later). */
let available = false

function linearEngineAvailable(): boolean {
  if (!available) {
    try {
      RegExp('', LINEAR)
      available = true
    } catch {
      // Not switched on (yet).
    }
  }
  return available
}

/**
 * Turn V8's linear-time regular-expression engine on for this process (the V8 switch
 * `--enable-experimental-regexp-engine`, set at run time), so that `pattern` and the request
 * plugin's scraper patterns can run. Process-wide: it adds the RegExp flag `l` for all code in the
 * process and changes nothing else. Does nothing when the engine is already on (started with the
 * command-line option, or called before). Returns whether the engine is available afterwards.
 */
export function enableLinearRegExp(): boolean {
  if (!linearEngineAvailable()) setFlagsFromString('--enable-experimental-regexp-engine')
  return linearEngineAvailable()
}

/** A pattern met before the host turned the linear-time engine on: a setup error of the host, not of the document. */
export class LinearEngineUnavailable extends Error {
  override readonly name = 'LinearEngineUnavailable'
  readonly code = 'LinearEngineUnavailable'

  constructor() {
    super('patterns need V8\'s linear-time RegExp engine: call enableLinearRegExp() (mapper-service/engine) at start-up, or start node with --enable-experimental-regexp-engine')
  }
}

/** A pattern that is valid ECMAScript but cannot run in linear time. */
export class NonLinearPattern extends SyntaxError {
  override readonly name = 'NonLinearPattern'
  /** Typed as a `DocumentError` is (engine/errors.ts): the caller's document is refused, a 4xx. */
  readonly code = 'MappingDocumentError'
  readonly responseCode = 'MappingDocumentError'
  readonly statusCode = 422
}

/** Compile a pattern (no flags, as the language has it; the scraper adds some) for linear-time matching; throws SyntaxError, NonLinearPattern or LinearEngineUnavailable. */
export function linearRegExp(pattern: string, flags = ''): RegExp {
  // Invalid syntax is told apart from valid syntax the linear engine cannot run.
  RegExp(pattern, flags)
  if (!linearEngineAvailable()) throw new LinearEngineUnavailable()
  try {
    return new RegExp(pattern, flags + LINEAR)
  } catch {
    throw new NonLinearPattern(`pattern ${JSON.stringify(pattern)} cannot run in linear time (backreferences, lookaround and repetition counts above 16 are not supported)`)
  }
}
