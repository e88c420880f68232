// The engine's typed error for what a caller's document makes impossible before anything runs: an
// `$extend` ancestry that does not flatten, a document nested too deeply, a name that never
// reaches pairings. A host tells it apart by its `code`; the service answers it with its
// `statusCode` (a 4xx, never a 500), as it answers every error that declares its answer.

/** A caller's document (or a member of one) that cannot be registered, compiled or evaluated. */
export class DocumentError extends TypeError {
  readonly code = 'MappingDocumentError'
  /** The code of the service's error body. */
  readonly responseCode = 'MappingDocumentError'
  /** The service's status for it: the document is understood, and refused. */
  readonly statusCode = 422
}

/** A pointer in a caller's document that does not parse: a SyntaxError, as the language has it, with the code of a `DocumentError`. */
export class DocumentSyntaxError extends SyntaxError {
  readonly code = 'MappingDocumentError'
  /** The code of the service's error body. */
  readonly responseCode = 'MappingDocumentError'
  /** The service's status for it. */
  readonly statusCode = 422
}

/** A `#` pointer in a caller's document whose percent-escapes do not decode: a URIError, as the language has it, typed likewise. */
export class DocumentURIError extends URIError {
  readonly code = 'MappingDocumentError'
  /** The code of the service's error body. */
  readonly responseCode = 'MappingDocumentError'
  /** The service's status for it. */
  readonly statusCode = 422
}
