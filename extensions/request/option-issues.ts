// What is wrong with the options a document writes under `request` (request-plugin.md §1, rules
// REQ-1 … REQ-10), said two ways from one check: as validation findings (the plugin's
// `validateOptions`, which the engine's validation calls, so `/validate` reports them and an
// explicit document carrying them is refused before it runs), and as the typed error a call
// throws when it meets them anyway (a document no validation saw: a library caller's).

/** One finding: the rule broken, in words, and where under the options (tokens; none = the options themselves). */
export interface OptionIssue {
  readonly rule: string
  readonly message: string
  readonly at?: readonly string[]
}

/** How the checks report a finding. */
export type ReportIssue = (rule: string, message: string, at?: readonly string[]) => void

/**
 * Options a document wrote that no call can use: nothing is sent. It declares the answer a host
 * gives it (http.md §3): 422 `InvalidRequestOptions`, with the rule in the body, since the
 * document, not the service or the upstream, is at fault.
 */
export class InvalidRequestOptionsError extends TypeError {
  override readonly name = 'InvalidRequestOptionsError'
  readonly code = 'E_INVALID_REQUEST_OPTIONS'
  readonly statusCode = 422
  readonly responseCode = 'InvalidRequestOptions'

  constructor(
    message: string,
    /** The rule broken (`REQ-1` …). */
    readonly rule: string
  ) {
    super(message)
  }

  /** The members the error body carries beside code and message. */
  get responseFields(): Readonly<Record<string, unknown>> {
    return { rule: this.rule }
  }
}

/** A name from a document as a message shows it: at most 64 characters, then `…`. */
export function clip(text: string): string {
  return text.length > 64 ? `${text.slice(0, 64)}…` : text
}
