// Request ids (http.md §2): the configured prefix and 16 lowercase hex characters from a
// cryptographic source, on every response as X-Request-Id. An incoming id is used only with
// `trustRequestId`, and only when it is a plain token. Every body is `no-store`.
import { randomFillSync } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import fp from 'fastify-plugin'

const TRUSTED_ID = /^[A-Za-z0-9._:-]{1,128}$/

// Random bytes are drawn in blocks, written out as hex once a block, and handed out 16 characters
// (eight bytes) at a time: one system call and one conversion per 512 ids.
const pool = Buffer.alloc(4096)
let hex = ''
let offset = 0

function randomHex(): string {
  if (offset === hex.length) {
    hex = randomFillSync(pool).toString('hex')
    offset = 0
  }
  return hex.slice(offset, (offset += 16))
}

interface RequestIdOptions {
  readonly prefix: string
  readonly trust: boolean
}

/** A new id with this prefix, never taken from the request. */
export function freshRequestId(prefix: string): string {
  return prefix + randomHex()
}

/** Choose the id of a request (also used as Fastify's own request id by buildServer). */
export function requestIdFor(raw: IncomingMessage, { prefix, trust }: RequestIdOptions): string {
  if (trust) {
    const incoming = raw.headers['x-request-id']
    if (typeof incoming === 'string' && TRUSTED_ID.test(incoming)) return incoming
  }
  return freshRequestId(prefix)
}

declare module 'fastify' {
  interface FastifyRequest {
    /** This service's id of the request (X-Request-Id). */
    requestId: string
  }
}

interface RequestIdPluginOptions extends RequestIdOptions {
  /** True when the Fastify instance generates ids with `requestIdFor` (buildServer). */
  readonly serverIds: boolean
}

export const requestIdPlugin = fp<RequestIdPluginOptions>(
  async (app, options) => {
    app.decorateRequest('requestId', '')
    // A callback hook: no promise per request.
    app.addHook('onRequest', (request, reply, done) => {
      request.requestId = options.serverIds ? request.id : requestIdFor(request.raw, options)
      reply.header('x-request-id', request.requestId)
      reply.header('cache-control', 'no-store')
      done()
    })
  },
  { name: 'mapper-request-id', fastify: '5.x' }
)
