// The nesting bound of parsed bodies (request-plugin.md §1 "Result"). A body within
// `maxResponseBytes` can still nest a million levels deep: the XML parser's time grows with the
// square of the depth, and whatever walks the result recursively afterwards (the XML conversion,
// the engine, the reply serializer) runs out of stack. So the depth is measured first, by one
// linear scan of the text (the engine's `jsonNestsDeeper` for JSON), and a body deeper than the
// bound is refused before any parser sees it. HTML is bounded while it is parsed (html.ts).
import { jsonNestsDeeper } from '../../engine/index.js'

/** The deepest nesting a JSON, XML or HTML body (or an HTML page's JSON-LD block) may have. */
export const MAX_RESPONSE_DEPTH = 256

/** The refusal: an ordinary error with a stable code, like the size cap's. */
export class ResponseTooDeepError extends Error {
  override readonly name = 'ResponseTooDeepError'
  readonly code = 'E_RESPONSE_TOO_DEEP'
  readonly maxDepth = MAX_RESPONSE_DEPTH

  constructor(
    readonly url: string,
    /** `JSON`, `XML`, `HTML` or `JSON-LD`. */
    readonly format: string
  ) {
    super(`${format} in the response from ${url} nests deeper than ${MAX_RESPONSE_DEPTH} levels`)
  }
}

const QUOTE = 0x22
const OPEN_BRACKET = 0x5b

// The XML scan follows the tokenizer and the element stack of htmlparser2 in xmlMode (what
// cheerio's `xml: true` parses with), so the depth it finds is the depth the parser would build:
// a tag name runs to whitespace, `/` or `>`; quotes only delimit attribute values (after `=`);
// `/>` closes the element it ends; `</name>` closes up to the innermost open `name` and is
// ignored when none is open; comments, CDATA, declarations and processing instructions hold no
// elements.

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0c || c === 0x0d
const GT = 0x3e
const SLASH = 0x2f
const EQUALS = 0x3d
const APOSTROPHE = 0x27
const endsTagSection = (c: number): boolean => c === SLASH || c === GT || isSpace(c)

/** The position just after the next `>` from `from`, or the end. */
function pastGreaterThan(text: string, from: number): number {
  const at = text.indexOf('>', from)
  return at === -1 ? text.length : at + 1
}

/** The position after `<!…`, `from` being just after the `!`. */
function pastDeclaration(text: string, from: number): number {
  if (text.startsWith('--', from)) {
    // `<!-->` and `<!--->` are complete comments: the opening dashes count towards `-->`.
    const end = text.indexOf('-->', from)
    return end === -1 ? text.length : end + 3
  }
  if (text.charCodeAt(from) === 0x2d) return pastGreaterThan(text, from + 2)
  if (text.charCodeAt(from) === OPEN_BRACKET) {
    let i = from + 1
    for (const expected of 'CDATA[') {
      if (text[i] !== expected) return pastGreaterThan(text, i)
      i++
    }
    const end = text.indexOf(']]>', i)
    return end === -1 ? text.length : end + 3
  }
  // The character after `!` belongs to the declaration even when it is `>`.
  return pastGreaterThan(text, from + 1)
}

/** The position after `</…>`, `from` being just after the `/`; closes what it names. */
function pastClosingTag(text: string, from: number, open: string[]): number {
  let i = from
  while (i < text.length && isSpace(text.charCodeAt(i))) i++
  if (i >= text.length) return i
  const c = text.charCodeAt(i)
  if (c === GT) return i + 1
  if (c === SLASH) return pastGreaterThan(text, i + 1)
  const start = i
  while (i < text.length && text.charCodeAt(i) !== GT && !isSpace(text.charCodeAt(i))) i++
  const innermost = open.lastIndexOf(text.slice(start, i))
  if (innermost !== -1) open.length = innermost
  return pastGreaterThan(text, i)
}

/** The position after the attributes of an open tag; pops the element again when it self-closes. */
function pastAttributes(text: string, from: number, open: string[]): number {
  let i = from
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === GT) return i + 1
    if (isSpace(c)) {
      i++
    } else if (c === SLASH) {
      i++
      while (i < text.length && isSpace(text.charCodeAt(i))) i++
      if (text.charCodeAt(i) === GT) {
        open.pop()
        return i + 1
      }
    } else {
      i = pastAttribute(text, i)
    }
  }
  return i
}

/** The position after one attribute (`name`, `name=value`, `name="value"`) starting at `from`. */
function pastAttribute(text: string, from: number): number {
  // The first character belongs to the name whatever it is (`="` is a name, not a value).
  let i = from + 1
  while (i < text.length && text.charCodeAt(i) !== EQUALS && !endsTagSection(text.charCodeAt(i))) i++
  while (i < text.length && isSpace(text.charCodeAt(i))) i++
  if (text.charCodeAt(i) !== EQUALS) return i
  i++
  while (i < text.length && isSpace(text.charCodeAt(i))) i++
  const quote = text.charCodeAt(i)
  if (quote === QUOTE || quote === APOSTROPHE) {
    const end = text.indexOf(String.fromCharCode(quote), i + 1)
    return end === -1 ? text.length : end + 1
  }
  // An unquoted value runs to whitespace or `>`; a `/` in it does not self-close the tag.
  while (i < text.length && text.charCodeAt(i) !== GT && !isSpace(text.charCodeAt(i))) i++
  return i
}

/** True when the XML text opens more than `limit` elements inside one another. */
export function xmlNestsDeeper(text: string, limit: number): boolean {
  const open: string[] = []
  let i = 0
  while (i < text.length) {
    const lt = text.indexOf('<', i)
    if (lt === -1 || lt + 1 >= text.length) return false
    const c = text.charCodeAt(lt + 1)
    if (c === 0x21) {
      i = pastDeclaration(text, lt + 2)
    } else if (c === 0x3f) {
      i = pastGreaterThan(text, lt + 2)
    } else if (c === SLASH) {
      i = pastClosingTag(text, lt + 2, open)
    } else if (endsTagSection(c)) {
      // `<` before whitespace or `>` is text.
      i = lt + 1
    } else {
      let end = lt + 2
      while (end < text.length && !endsTagSection(text.charCodeAt(end))) end++
      open.push(text.slice(lt + 1, end))
      if (open.length > limit) return true
      i = pastAttributes(text, end, open)
    }
  }
  return false
}

/** Refuse a JSON text nested deeper than `MAX_RESPONSE_DEPTH`. */
export function checkJsonDepth(text: string, url: string, format = 'JSON'): void {
  if (jsonNestsDeeper(text, MAX_RESPONSE_DEPTH)) throw new ResponseTooDeepError(url, format)
}

/** Refuse an XML text nested deeper than `MAX_RESPONSE_DEPTH`. */
export function checkXmlDepth(text: string, url: string): void {
  if (xmlNestsDeeper(text, MAX_RESPONSE_DEPTH)) throw new ResponseTooDeepError(url, 'XML')
}
