// Where a JSON text stops being JSON. Node 20's `JSON.parse` errors do not always carry a position
// (and some quote the whole text, newlines included), so a startup message could not name the line;
// this strict scanner (RFC 8259) finds the first offending character itself.

interface JsonSyntaxProblem {
  readonly line: number
  readonly column: number
  /** `unexpected "}"`, `unexpected end of input`. */
  readonly description: string
}

class Stop {
  constructor(readonly position: number) {}
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r'])
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't'])
const HEX = /^[0-9a-fA-F]{4}$/
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y

function scan(text: string): void {
  let i = 0
  const stop = (at = i): never => {
    throw new Stop(at)
  }
  const space = (): void => {
    while (i < text.length && WHITESPACE.has(text[i]!)) i++
  }
  const expect = (char: string): void => {
    if (text[i] !== char) stop()
    i++
  }
  const string = (): void => {
    expect('"')
    for (;;) {
      if (i >= text.length) stop()
      const char = text[i]!
      if (char === '"') {
        i++
        return
      }
      if (char < ' ') stop()
      if (char === '\\') {
        const escape = text[i + 1]
        if (escape === 'u') {
          if (!HEX.test(text.slice(i + 2, i + 6))) stop(i + 1)
          i += 6
        } else {
          if (escape === undefined || !ESCAPES.has(escape)) stop(i + 1)
          i += 2
        }
        continue
      }
      i++
    }
  }
  const value = (): void => {
    space()
    const char = text[i]
    if (char === '{') {
      i++
      space()
      if (text[i] === '}') {
        i++
        return
      }
      for (;;) {
        space()
        string()
        space()
        expect(':')
        value()
        space()
        if (text[i] === ',') {
          i++
          continue
        }
        expect('}')
        return
      }
    }
    if (char === '[') {
      i++
      space()
      if (text[i] === ']') {
        i++
        return
      }
      for (;;) {
        value()
        space()
        if (text[i] === ',') {
          i++
          continue
        }
        expect(']')
        return
      }
    }
    if (char === '"') return string()
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, i)) {
        i += literal.length
        return
      }
    }
    NUMBER.lastIndex = i
    const number = NUMBER.exec(text)
    if (number === null || number[0] === '' || number[0] === '-') stop()
    i += number![0].length
  }
  value()
  space()
  if (i < text.length) stop()
}

/** The first syntax problem of a text that is not JSON, or undefined when it is JSON. */
export function jsonSyntaxProblem(text: string): JsonSyntaxProblem | undefined {
  try {
    scan(text)
    return undefined
  } catch (error) {
    // A text nested too deep for the scanner's recursion has no position to report.
    if (!(error instanceof Stop)) return undefined
    // Counted in place: a refused body may be a megabyte of short lines.
    let line = 1
    let lineStart = 0
    for (let at = text.indexOf('\n'); at !== -1 && at < error.position; at = text.indexOf('\n', at + 1)) {
      line++
      lineStart = at + 1
    }
    const column = error.position - lineStart + 1
    const found = text.codePointAt(error.position)
    return {
      line,
      column,
      description: found === undefined ? 'unexpected end of input' : `unexpected ${JSON.stringify(String.fromCodePoint(found))}`,
    }
  }
}

/**
 * Where a text that JSON.parse refused stops being JSON, as a message's tail:
 * ` (line 3, column 7): unexpected "}"`; empty when the scanner finds no position.
 */
export function whereJsonFails(text: string): string {
  const problem = jsonSyntaxProblem(text)
  return problem === undefined ? '' : ` (line ${problem.line}, column ${problem.column}): ${problem.description}`
}
