// The code builder every generated source is written with (in the manner of Ajv's `_` template).
// Source is a `Code` value, never a bare string: `_` is a tagged template whose literal parts are
// the engine's own text, and whose interpolations are code only when they are `Code` already (a
// `Name` the generator made, or another `_`). Any other value — a string of a document, a number,
// a boolean, null — is written as the JavaScript literal of that value, and a value that has no
// literal (an object, a function) is refused: it is passed in as a constant (`Generator.constant`)
// and named. So no path puts document text into generated source except as an escaped literal.

/** A piece of generated source. Only `_`, `join` and the generator's names make one. */
export class Code {
  /** @internal Use `_` (or `join`): a Code holds source the engine wrote. */
  constructor(private readonly source: string) {}

  toString(): string {
    return this.source
  }

  /** Its length in characters (what the size bounds of a level count). */
  get length(): number {
    return this.source.length
  }
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/** An identifier of the generated source: a local, a parameter, a constant's name. */
export class Name extends Code {
  constructor(name: string) {
    if (!IDENTIFIER.test(name)) throw new TypeError(`mapper-service: ${JSON.stringify(name)} is not an identifier`)
    super(name)
  }
}

/** No source at all. */
export const nil = new Code('')

/** A string as a JavaScript string literal (JSON's, with U+2028 and U+2029 escaped as well). */
export function literal(text: string): string {
  return JSON.stringify(text).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')
}

/** What `_` may interpolate: code, or a value written as its literal. */
export type Interpolated = Code | string | number | boolean | null | undefined

/** The source of one interpolated value: code as it is, a value as its literal. */
function escaped(value: Interpolated): string {
  if (value instanceof Code) return value.toString()
  switch (typeof value) {
    case 'string':
      return literal(value)
    case 'boolean':
      return String(value)
    case 'undefined':
      return 'undefined'
    case 'number':
      // The host prints a finite number as a literal that reads back the same (-0 excepted); a
      // negative one in parentheses, so that its sign never meets the operator before it.
      if (Number.isFinite(value) && !Object.is(value, -0)) return value < 0 ? `(${String(value)})` : String(value)
      throw new TypeError(`mapper-service: ${String(value)} has no literal; pass it as a constant`)
    default:
      if (value === null) return 'null'
      throw new TypeError('mapper-service: only code and JSON scalars are written into generated source; pass other values as constants')
  }
}

/** Generated source: the template's text as it is, each interpolation as code or as a literal. */
export function _(template: TemplateStringsArray, ...values: readonly Interpolated[]): Code {
  let source = template[0]!
  for (let i = 0; i < values.length; i++) source += escaped(values[i]) + template[i + 1]!
  return new Code(source)
}

/** Pieces of source one after another, `separator` between them. */
export function join(pieces: readonly Code[], separator: Code = nil): Code {
  return new Code(pieces.map(String).join(separator.toString()))
}

/**
 * The level's source, as generated functions name it: a read from it (CodeGen.read) starts from
 * the source object the function looked at once (level.ts `sourceReadCode`).
 */
export const SOURCE = new Name('source')

/**
 * What an inline form (inline.ts) may ask of the code generator. Generated source sees these
 * locals: `v`, the value the pipeline carries (a locate step sets it; later steps read and replace
 * it); `source`, the scope's source; `run`, the evaluation's Run; `errors`, its error list.
 */
export interface CodeGen {
  /** The name of a value kept beside the generated function (a closure, an object, any value). */
  constant(value: unknown): Name
  /** An expression giving a JSON value: a literal for strings, numbers, booleans and null; a fresh copy of an object or array. */
  value(json: unknown): Code
  /**
   * Source that reads the JSON Pointer `pointer` from the expression `from` (omitted: the value in
   * `v` itself) into `v`; undefined when code cannot read it (it throws when read).
   */
  read(pointer: unknown, from?: Code): Code | undefined
  /** A local variable of the generated function, for the form's own use. */
  local(): Name
}
