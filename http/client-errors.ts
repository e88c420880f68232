// Fastify's `clientErrorHandler` for buildServer (http.md §3): a request Node's HTTP parser refuses
// before any route or hook sees it — malformed (400), not received in time (408), headers over the
// limit (431) — still gets the error body and a fresh X-Request-Id, then its connection is closed.
// Node's error carries the raw bytes received, bearer tokens included, so the log line names the
// error's code and nothing else (Fastify's own handler logs the whole error at trace level).
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { BadRequest, HeadersTooLarge, RequestTimeout } from '../service/errors.js'
import { shapeError } from '../service/errors.js'
import { freshRequestId } from './plugins/request-id.js'

interface ClientErrorOptions {
  readonly log: FastifyBaseLogger
  readonly requestIdPrefix: string
  readonly maxHeaderSize: number
}

/**
 * Connections whose request may outlast `server.requestTimeout`: a POST /map/stream upload, whose
 * body is read a line at a time and may run as long as the batch (http/routes/stream.ts adds its socket
 * once the stream is admitted, and removes it when the answer ends). Node still reports such a
 * request as expired on every check; it is left alone here. The exemption is not a licence to
 * stay: the stream has bounds of its own (options.stream): a stream that answers no line within
 * `idleTimeout` (a client trickling blank lines is never silent, yet makes no progress) or that
 * runs past `maxDurationMs` is ended by http/routes/stream.ts with a last error line and its
 * connection closed; one that goes silent is still ended by `server.connectionTimeout`.
 */
export const streamingSockets = new WeakSet<Socket>()

/** Node's codes are fixed identifiers; anything else is not repeated into the log. */
const ERROR_CODE = /^[A-Z][A-Z0-9_]{0,63}$/

function failureFor(code: string | undefined, maxHeaderSize: number): Error {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestTimeout()
    case 'HPE_HEADER_OVERFLOW':
      return new HeadersTooLarge(maxHeaderSize)
    default:
      return new BadRequest('Malformed HTTP request')
  }
}

export function clientErrorHandler({ log, requestIdPrefix, maxHeaderSize }: ClientErrorOptions): (error: Error, socket: Socket) => void {
  return (error, socket) => {
    const code = (error as NodeJS.ErrnoException).code
    // A connection the client already reset has nobody to answer.
    if (code === 'ECONNRESET' || socket.destroyed) return
    if (code === 'ERR_HTTP_REQUEST_TIMEOUT' && streamingSockets.has(socket)) return
    const { status, code: bodyCode, message } = shapeError(failureFor(code, maxHeaderSize), maxHeaderSize)
    const requestId = freshRequestId(requestIdPrefix)
    log.info({ requestId, status, code: bodyCode, error: code !== undefined && ERROR_CODE.test(code) ? code : 'unknown' }, 'client error')
    // As Node does: never write into a response that has already started (a keep-alive connection
    // whose previous response is still being sent), or the client would read a corrupt stream.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage
    if (socket.writable && inFlight?.headersSent !== true) {
      const body = JSON.stringify({ code: bodyCode, message, requestId })
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
          'content-type: application/json; charset=utf-8\r\n' +
          `content-length: ${Buffer.byteLength(body)}\r\n` +
          `x-request-id: ${requestId}\r\n` +
          'cache-control: no-store\r\n' +
          'connection: close\r\n' +
          `\r\n${body}`
      )
    }
    socket.destroy()
  }
}
