// What the transport tests share: a server from `buildServer` listening on 127.0.0.1 (closed at
// teardown), and raw connections whose every byte and pause the test decides, observed until the
// server answers or closes them, each bounded in time.
import { connect, type AddressInfo, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { buildServer, type BuildConfig } from '../server.js'
import { ECHO, type Teardown } from './http-support.js'

export interface Listening {
  readonly app: FastifyInstance
  readonly port: number
}

/** A server from `buildServer` (logging silenced unless told) listening on 127.0.0.1, closed at teardown. */
export async function listening(t: Teardown, build: BuildConfig = {}): Promise<Listening> {
  const { options = {}, ...rest } = build
  const app = await buildServer({ mappings: [ECHO], ...rest, options: { logging: { level: 'silent' }, ...options } })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as AddressInfo).port }
}

/** A response as read off the wire. */
export interface Parsed {
  readonly status: number
  /** Header names lower-cased; a repeated header keeps its last value. */
  readonly headers: Record<string, string>
  readonly body: string
}

/** Parse the first response in `text` (no chunked bodies: this service sends Content-Length). */
export function parseResponse(text: string): Parsed | undefined {
  const end = text.indexOf('\r\n\r\n')
  if (end < 0) return undefined
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n')
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? NaN)
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const length = Number(headers['content-length'] ?? 0)
  return { status, headers, body: text.slice(end + 4, end + 4 + length) }
}

/** One raw connection to the server, with what it has received so far and whether it was closed. */
export interface Connection {
  readonly socket: Socket
  /** Everything received so far. */
  received(): string
  /** True once the connection is closed (by either side). */
  closed(): boolean
  /** Settles when the connection has closed, with what was received and how long it stayed open after `since`. */
  readonly ended: Promise<{ received: string; openMs: number }>
  /** Write bytes now (ignored once closed). */
  send(text: string): void
  /**
   * Send `text` one byte every `everyMs` until it is all sent or the connection closes; settles
   * with how many bytes went out.
   */
  trickle(text: string, everyMs: number): Promise<number>
  /** Restart the clock `ended` measures from. */
  mark(): void
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Open a connection to 127.0.0.1:port; it is destroyed at teardown. */
export async function open(t: Teardown, port: number): Promise<Connection> {
  const socket = connect(port, '127.0.0.1')
  let text = ''
  let isClosed = false
  let since = Date.now()
  socket.setEncoding('latin1')
  socket.on('data', (chunk: string) => (text += chunk))
  // A reset after the server gave up on us is an expected way for the connection to end.
  socket.on('error', () => {})
  const ended = new Promise<{ received: string; openMs: number }>((resolve) => {
    socket.once('close', () => {
      isClosed = true
      resolve({ received: text, openMs: Date.now() - since })
    })
  })
  t.teardown(() => {
    socket.destroy()
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('close', () => reject(new Error('closed before it connected')))
  }).catch(() => undefined)
  return {
    socket,
    received: () => text,
    closed: () => isClosed,
    ended,
    send(chunk) {
      if (!isClosed && socket.writable) socket.write(chunk, 'latin1')
    },
    async trickle(chunk, everyMs) {
      let sent = 0
      for (const byte of chunk) {
        if (isClosed || !socket.writable) break
        socket.write(byte, 'latin1')
        sent += 1
        await pause(everyMs)
      }
      return sent
    },
    mark() {
      since = Date.now()
    },
  }
}

/** Settle with `promise`, or fail naming `what` after `ms` (a bound, never a performance claim). */
export async function within<T>(what: string, ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, bound])
  } finally {
    clearTimeout(timer)
  }
}

/** The first complete response on a connection (fails if it closes first or takes over `ms`). */
export async function responseOn(connection: Connection, ms = 10000): Promise<Parsed> {
  const complete = (): Parsed | undefined => {
    const parsed = parseResponse(connection.received())
    return parsed !== undefined && Buffer.byteLength(parsed.body, 'latin1') === Number(parsed.headers['content-length'] ?? 0) ? parsed : undefined
  }
  return within(
    'a response',
    ms,
    (async () => {
      for (;;) {
        const parsed = complete()
        if (parsed !== undefined) return parsed
        if (connection.closed()) throw new Error(`closed without a response: ${JSON.stringify(connection.received().slice(0, 200))}`)
        await pause(10)
      }
    })()
  )
}

/** A whole request in one write and its response, on a fresh connection destroyed afterwards. */
export async function rawExchange(t: Teardown, port: number, request: string): Promise<Parsed> {
  const connection = await open(t, port)
  connection.send(request)
  try {
    return await responseOn(connection)
  } finally {
    connection.socket.destroy()
  }
}
