// Reading a response body under `maxResponseBytes` (request-plugin.md §2): a declared length over
// the cap is refused before a byte is read, and an undeclared (or lying) one as soon as the running
// total passes it, so a huge or endless body never sits in memory.
import type { Readable } from 'node:stream'

/** The `maxResponseBytes` refusal: an ordinary error with a stable code. */
export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError'
  readonly code = 'E_RESPONSE_TOO_LARGE'

  constructor(readonly maxBytes: number) {
    super(`Response exceeds ${maxBytes} bytes`)
  }
}

/**
 * Drop a body unread. undici reports a destroyed, unfinished body as an 'error' event, which
 * nobody is left to hear once the plugin has given up on the response.
 */
export function discardBody(body: Readable): void {
  body.on('error', () => {})
  body.destroy()
}

export async function readBody(body: Readable, declaredLength: string | string[] | undefined, maxBytes: number): Promise<Buffer> {
  const declared = typeof declaredLength === 'string' ? Number(declaredLength) : NaN
  if (Number.isFinite(declared) && declared > maxBytes) {
    discardBody(body)
    throw new ResponseTooLargeError(maxBytes)
  }
  const chunks: Buffer[] = []
  let total = 0
  for await (const chunk of body) {
    const bytes = chunk as Buffer
    total += bytes.length
    if (total > maxBytes) {
      discardBody(body)
      throw new ResponseTooLargeError(maxBytes)
    }
    chunks.push(bytes)
  }
  return Buffer.concat(chunks, total)
}
