// Reading a response body under `maxResponseBytes` (request-plugin.md §2): a declared length over
// the cap is refused before a byte is read, and an undeclared (or lying) one as soon as the running
// total passes it, so a huge or endless body never sits in memory. The bytes read are held against
// the thread's budget of bodies in flight (in-flight.ts) as they arrive.
import type { Readable } from 'node:stream'
import type { Lease } from './in-flight.js'

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

/** The size of the segments an undeclared body is kept in. */
const SEGMENT_BYTES = 1024 * 1024

/**
 * A body as read: its bytes copied, chunk by chunk as they arrive, into segments that each own
 * their memory, so they can be moved to a parse thread whole; no single copy of the whole body is
 * ever made on the thread that read it. A declared length gets one segment of that size.
 */
export class BodyBytes {
  readonly segments: Uint8Array[] = []
  length = 0
  private room = 0

  constructor(private readonly firstSegment: number) {}

  append(chunk: Uint8Array): void {
    let offset = 0
    while (offset < chunk.length) {
      if (this.room === 0) {
        const size = this.segments.length === 0 && this.firstSegment > 0 ? this.firstSegment : SEGMENT_BYTES
        this.segments.push(new Uint8Array(new ArrayBuffer(size)))
        this.room = size
      }
      const segment = this.segments[this.segments.length - 1]!
      const used = segment.length - this.room
      const take = Math.min(this.room, chunk.length - offset)
      segment.set(chunk.subarray(offset, offset + take), used)
      offset += take
      this.room -= take
      this.length += take
    }
  }

  /** The segments trimmed to what they hold (views; nothing is copied). */
  parts(): Uint8Array[] {
    const last = this.segments.length - 1
    return this.segments.map((segment, i) => (i === last ? segment.subarray(0, segment.length - this.room) : segment))
  }

  /** The bytes as one array: the segment itself when there is one, else a copy (small bodies, worker threads). */
  whole(): Uint8Array {
    const parts = this.parts()
    if (parts.length === 1) return parts[0]!
    if (parts.length === 0) return new Uint8Array(0)
    return Buffer.concat(parts, this.length)
  }
}

/**
 * The body, whole, under `maxBytes`; its bytes covered by `lease` before they are kept (the
 * declared length at once). A wait for room pauses the read, so the socket is not drained meanwhile.
 */
export async function readBody(body: Readable, declaredLength: string | string[] | undefined, maxBytes: number, lease: Lease): Promise<BodyBytes> {
  const declared = typeof declaredLength === 'string' ? Number(declaredLength) : NaN
  const known = Number.isSafeInteger(declared) && declared > 0
  if (known && declared > maxBytes) {
    discardBody(body)
    throw new ResponseTooLargeError(maxBytes)
  }
  const bytes = new BodyBytes(known ? declared : 0)
  try {
    if (known) await lease.cover(declared)
    for await (const chunk of body) {
      const piece = chunk as Buffer
      if (bytes.length + piece.length > maxBytes) throw new ResponseTooLargeError(maxBytes)
      const waiting = lease.cover(bytes.length + piece.length)
      if (waiting !== undefined) await waiting
      bytes.append(piece)
    }
  } catch (error) {
    discardBody(body)
    throw error
  }
  return bytes
}
