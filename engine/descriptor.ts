// The shape of a mapping document as data: JSON values, descriptors and each keyword's operand.
// This module imports nothing, so every other one (the public types, the keyword records, the
// compiler) can name these types without an import circle. The keyword names here and the records
// of keywords/index.ts are checked against each other when the project compiles.

/** A JSON value as the engine reads and writes it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

/** A descriptor: a pointer, relative reference or name string; a keyword object; or a variant list. */
export type Descriptor = string | DescriptorObject | Descriptor[]

/** The pairings of a mapping: target pointer → descriptor, in written order. */
export interface PairingMap {
  [targetPointer: string]: Descriptor
}

/** The value of `mapping` / `each`: pairings, a mapping id, or a reference to one. */
export type PairingValue = PairingMap | string | { $ref: string }

/** One example of a document: an input and the envelope it must give. */
export interface Example {
  input: unknown
  output: Record<string, unknown>
  valid?: boolean
  errors?: unknown[]
  description?: string
}

/** Every keyword of the language (language.md §9) and the type of its operand. */
export interface KeywordOperands {
  $id?: string
  $ref?: string
  $extend?: string | string[]
  description?: string
  examples?: Example[]
  mapping?: PairingValue
  each?: PairingValue
  source?: string
  target?: string
  input?: string
  output?: string
  first?: Descriptor[]
  last?: Descriptor[]
  all?: Descriptor[]
  switch?: { source?: string; input?: string; output?: string; cases: Record<string, Descriptor> }
  find?: { eq: Record<string, unknown>; pointer?: string }
  concat?: boolean
  init?: string
  constant?: unknown
  random?: number
  unique?: boolean
  template?: string
  transform?: string | Array<string | Record<string, unknown>>
  type?: string
  maximum?: number
  minimum?: number
  multipleOf?: number
  minLength?: number
  maxLength?: number
  enum?: unknown[]
  pattern?: string
  required?: boolean
  default?: unknown
  regexp_i?: boolean
  as?: 'string' | 'number' | 'boolean' | 'json'
  stdout?: boolean | string
}

/** A keyword's name. */
export type KeywordName = keyof KeywordOperands

/**
 * A keyword object: each keyword's operand type is checked. Keys outside the catalogue are inert
 * unless they name a registered plugin.
 */
export interface DescriptorObject extends KeywordOperands {
  [pluginOrOther: string]: unknown
}

/** A descriptor object with pairings: the usual registered or explicit mapping document. */
export type MappingDocument = DescriptorObject
