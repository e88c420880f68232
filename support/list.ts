// The one reading of an option that takes a list either way, an array or one comma-separated string
// (`"RS256, ES256"`, as an environment variable holds it): service-wide options (config/resolve.ts)
// and the options a plugin resolves itself (http/plugins/auth/options.ts) read it alike.

/** The members of a list option: a string split at commas, each trimmed, empty ones dropped. */
export function list(value: string | readonly string[]): string[] {
  return typeof value === 'string' ? value.split(',').map((s) => s.trim()).filter((s) => s !== '') : [...value]
}
