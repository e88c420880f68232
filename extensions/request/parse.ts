// The parse envelope (request-plugin.md §1 "Result"): `{ status, 'content-type', … }` with the body
// parsed by its content type. Deterministic: the same response always gives the same envelope (no
// timestamps), and a non-2xx response is data like any other, its `status` telling what happened.
import { TextDecoder } from 'node:util'
import { checkJsonDepth, checkXmlDepth } from './depth.js'
import { readHtml } from './html.js'
import type { CompiledScraper, PatternMeter } from './scraper.js'
import { xmlToJson } from './xml.js'

type BodyKind = 'json' | 'xml' | 'html' | 'text'

interface MediaType {
  /** `type/subtype`, lowercased, or null when the response had no usable Content-Type. */
  readonly essence: string | null
  readonly charset: string | undefined
}

const ESSENCE = /^[!#$%&'*+\-.^_`|~0-9a-z]+\/[!#$%&'*+\-.^_`|~0-9a-z]+$/

/** Split a Content-Type header into its essence and charset (case-insensitive). */
export function mediaType(header: string | string[] | undefined): MediaType {
  const text = Array.isArray(header) ? header[0] : header
  if (text === undefined) return { essence: null, charset: undefined }
  const [head = '', ...parameters] = text.split(';')
  const essence = head.trim().toLowerCase()
  let charset: string | undefined
  for (const parameter of parameters) {
    const [name, ...rest] = parameter.split('=')
    if (name?.trim().toLowerCase() === 'charset') charset = rest.join('=').trim().replace(/^"(.*)"$/, '$1')
  }
  return { essence: ESSENCE.test(essence) ? essence : null, charset }
}

/** Which parser a media type gets; a missing or unknown type is text. */
export function bodyKind(essence: string | null): BodyKind {
  if (essence === null) return 'text'
  if (essence === 'application/json' || essence.endsWith('+json')) return 'json'
  if (essence === 'application/xml' || essence === 'text/xml' || essence.endsWith('+xml')) return 'xml'
  if (essence === 'text/html') return 'html'
  return 'text'
}

/** Decode with the declared charset when the platform knows it, else as UTF-8 (a BOM is dropped). */
function decodeText(bytes: Uint8Array, charset: string | undefined): string {
  let decoder: TextDecoder
  try {
    decoder = new TextDecoder(charset ?? 'utf-8')
  } catch {
    decoder = new TextDecoder('utf-8')
  }
  return decoder.decode(bytes)
}

export function parseEnvelope(
  status: number,
  contentType: string | string[] | undefined,
  bytes: Uint8Array,
  scraper: CompiledScraper | undefined,
  url: string,
  meter: PatternMeter
): Record<string, unknown> {
  const type = mediaType(contentType)
  const envelope: Record<string, unknown> = { status, 'content-type': type.essence }
  switch (bodyKind(type.essence)) {
    case 'json': {
      // JSON is UTF-8 (RFC 8259); an empty body (a 204, say) is null rather than a parse error.
      const text = decodeText(bytes, 'utf-8')
      checkJsonDepth(text, url)
      try {
        envelope.json = text.trim() === '' ? null : JSON.parse(text)
      } catch (error) {
        throw new SyntaxError(`Invalid JSON in response from ${url}: ${(error as Error).message}`, { cause: error })
      }
      break
    }
    case 'xml': {
      const text = decodeText(bytes, type.charset)
      checkXmlDepth(text, url)
      envelope.xml = text
      envelope.json = xmlToJson(text, url)
      break
    }
    case 'html':
      Object.assign(envelope, readHtml(decodeText(bytes, type.charset), scraper, url, meter))
      break
    case 'text':
      envelope.text = decodeText(bytes, type.charset)
      break
  }
  return envelope
}
