// POST /map/stream when its client leaves mid-upload, the upload paused (the server stopped reading
// it while every answer in flight waits on an upstream): a real upstream on 127.0.0.1 counts the
// calls it has open; once the client's socket is gone, every call of the stream is closed and no
// new one starts. Bounded polls, no timing assertions.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { request as httpRequest } from 'node:http'
import t from 'tap'
import { stockExtensions } from '../extensions/stock.js'
import { originOf, serve } from './http-support.js'
import { upstream } from './request-support.js'

/** Polls `check` every 20 ms until it holds or `tries` run out; true when it held. */
async function eventually(check: () => boolean, tries = 250): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (check()) return true
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return check()
}

t.test('a client that leaves while its upload is paused: every upstream call of its stream is closed, and no new one starts', async (t) => {
  let open = 0
  let started = 0
  // Never answers: a call ends only when the service closes it.
  const up = await upstream(t, (req: IncomingMessage, _res: ServerResponse) => {
    open++
    started++
    req.socket.once('close', () => open--)
  })
  const app = await serve(t, {
    mappings: [{ $id: 'fetch', mapping: { '/r': { request: { origin: up.origin, pathname: '/slow', pointer: '/json' } } } }],
    extensions: stockExtensions({ REQUEST_ALLOW_HOSTS: '127.0.0.1' }),
    options: { isolation: false, logging: { level: 'silent' }, underPressure: false },
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const origin = originOf(app)

  for (const leave of ['destroy', 'reset'] as const) {
    const before = started
    const line = `{"pad":"${'p'.repeat(200)}"}\n`
    const client = httpRequest(`${origin}/map/stream?mapping=fetch&concurrency=4`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' } })
    client.on('error', () => {})
    // Write until the upload backs up: the service has stopped reading it.
    let paused = false
    client.on('drain', () => {})
    for (let i = 0; i < 200_000 && !paused; i++) {
      if (!client.write(line)) {
        paused = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(true), 300)
          client.once('drain', () => {
            clearTimeout(timer)
            resolve(false)
          })
        })
      }
    }
    t.ok(paused, `${leave}: the upload backed up`)
    t.ok(await eventually(() => open === started - before && open === 4), `${leave}: four calls open (${open})`)
    const socket = client.socket!
    if (leave === 'reset') socket.resetAndDestroy()
    else socket.destroy()
    t.ok(await eventually(() => open === 0), `${leave}: every call closed (${open} open)`)
    const made = started
    await new Promise((resolve) => setTimeout(resolve, 300))
    t.equal(started, made, `${leave}: no call started after the client left`)
  }
})
