// Memory given back once the service is idle (service/idle-memory.ts): a full collection runs when
// a check finds no request in flight and memory grown past the bound since the last one; never
// while a request is in flight, never without growth. Collections are counted, not timed, with a
// real listening server and real requests (bench:hostile measures the resident memory).
import t, { type Test } from 'tap'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { releaseMemoryWhenIdle } from '../service/idle-memory.js'

const CHECK_MS = 20
const GROWTH = 16 * 1024 * 1024
/** What a test holds to grow memory: well past the bound. */
const HELD = GROWTH * 4
/**
 * Every buffer a test allocated, kept until the file ends: garbage of one test, freed by V8 while
 * the next runs, would shrink that test's growth and hide it.
 */
const kept: Buffer[] = []
const grow = (): Buffer => {
  const buffer = Buffer.alloc(HELD, 1)
  kept.push(buffer)
  return buffer
}

async function listening(t: Test, handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; port: number }> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return { server, port: (server.address() as AddressInfo).port }
}

t.test('an idle server with grown memory is collected once; without growth, not again', async (t) => {
  const { server } = await listening(t, (_request, response) => response.end('ok'))
  const release = releaseMemoryWhenIdle(server, CHECK_MS, GROWTH)
  t.teardown(() => release.stop())
  await sleep(CHECK_MS * 5)
  t.equal(release.collections, 0, 'no growth: no collection')
  const held = grow()
  for (let i = 0; i < 100 && release.collections === 0; i++) await sleep(CHECK_MS)
  t.equal(release.collections, 1, 'grown and idle: one full collection')
  t.equal(held.length, HELD, 'what is still referenced stays')
  for (let i = 0; i < 100 && release.followUps === 0; i++) await sleep(CHECK_MS)
  t.equal(release.followUps, 1, 'still idle at a later check: one more collection (for the young generation)')
  await sleep(CHECK_MS * 5)
  t.equal(release.collections, 1, 'no new growth since: no second collection')
  t.equal(release.followUps, 1, 'and no other follow-up')
})

t.test('no collection while a request is in flight; one once it has ended', async (t) => {
  let answer: () => void = () => {}
  const arrived = new Promise<void>((resolve) => {
    answer = resolve
  })
  let reply: () => void = () => {}
  const { server, port } = await listening(t, (_request, response) => {
    reply = () => response.end('ok')
    answer()
  })
  const release = releaseMemoryWhenIdle(server, CHECK_MS, GROWTH)
  t.teardown(() => release.stop())
  const done = new Promise<number>((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, path: '/' }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode ?? 0))
    })
    sent.on('error', reject)
    sent.end()
  })
  await arrived
  const held = grow()
  await sleep(CHECK_MS * 8)
  t.equal(release.collections, 0, 'a request in flight: no collection, however much memory grew')
  t.equal(release.followUps, 0)
  reply()
  t.equal(await done, 200)
  for (let i = 0; i < 100 && release.collections === 0; i++) await sleep(CHECK_MS)
  t.equal(release.collections, 1, 'the request ended: collected')
  t.ok(held.length > 0)
})

t.test('stop() ends the checks', async (t) => {
  const { server } = await listening(t, (_request, response) => response.end('ok'))
  const release = releaseMemoryWhenIdle(server, CHECK_MS, GROWTH)
  release.stop()
  const held = grow()
  await sleep(CHECK_MS * 5)
  t.equal(release.collections, 0, 'no check after stop')
  t.equal(server.listenerCount('request'), 1, 'its request listener is gone (the server keeps its own)')
  t.ok(held.length > 0)
})
