// The shape of a mapping document as data: JSON values, descriptors and each keyword's operand.
// This module imports nothing, so every other one (the public types, the keyword records, the
// compiler) can name these types without an import circle; the operand types come from the
// keywords' own modules, which add them to `KeywordOperands`.

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

/**
 * Every keyword of the language (language.md §9) and the type of its operand. Each keyword's own
 * module adds its member (a `declare module` block at its end), so a keyword is one module and
 * one entry in the list of keywords/index.ts; the names here and the records there are checked
 * against each other when the project compiles.
 */
export interface KeywordOperands {}

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
