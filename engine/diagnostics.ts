// Error objects of the language (engine.md §10.2, §11): provenance first, then the keyword's
// fields, then `message`; keys whose value would be undefined are left out.
import type { ErrorObject } from './types.js'

/** The provenance of a descriptor: the first of source, target, input, output that is defined. */
export type Provenance = readonly [key: string, value: unknown] | null

const PROVENANCE_KEYS = ['source', 'target', 'input', 'output'] as const

export function provenanceOf(descriptor: unknown): Provenance {
  if (descriptor === null || typeof descriptor !== 'object' || Array.isArray(descriptor)) return null
  for (const key of PROVENANCE_KEYS) {
    if (Object.hasOwn(descriptor, key) && (descriptor as Record<string, unknown>)[key] !== undefined) {
      return [key, (descriptor as Record<string, unknown>)[key]]
    }
  }
  return null
}

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
