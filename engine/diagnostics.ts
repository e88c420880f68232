// Error objects of the language (language.md §10.2, §11): provenance first, then the keyword's
// fields, then `message`; keys whose value would be undefined are left out.
import type { ErrorObject } from './types.js'

/** The provenance of a descriptor: its first pointer keyword that is defined (keywords/index.ts provenanceOf). */
export type Provenance = readonly [key: string, value: unknown] | null

/** Build an error object in the language's key order. */
export function errorObject(provenance: Provenance, fields: ReadonlyArray<readonly [string, unknown]>, message: string): ErrorObject {
  const error: Record<string, unknown> = {}
  if (provenance !== null) error[provenance[0]] = provenance[1]
  for (const [key, value] of fields) if (value !== undefined) error[key] = value
  error.message = message
  return error as ErrorObject
}

export const MESSAGES = {
  unrecognized: 'unrecognized string descriptor',
  dotDot: 'pointer must not contain .. segments',
  unknownReference: 'unknown mapping reference',
} as const
