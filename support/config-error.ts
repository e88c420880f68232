// The error of a configuration that cannot start, in a module of its own: whatever throws it (the
// stock extensions in a worker thread, say) need not load the options schema and its compiler.

/** A setting that cannot be used: the message names it and says why, in one line. */
export class ConfigError extends Error {
  override readonly name: string = 'ConfigError'
}
