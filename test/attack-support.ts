// Attacks against a real listening server (issue 17, "Done when"): while an attack runs, GET /health
// is asked over and over; a test asserts the attack's answer, that every health answer was a 200
// within a generous bound (seconds, not minutes: the tight figure is a benchmark's business), and
// that the server still answers once the attack is over.
import type { FastifyInstance } from 'fastify'

/** Start `app` on an ephemeral port of 127.0.0.1 (closed at teardown) and return its origin. */
export async function listening(t: { teardown(fn: () => unknown): void }, app: FastifyInstance): Promise<string> {
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address !== 'object') throw new Error('the server has no port')
  return `http://127.0.0.1:${address.port}`
}

export interface Watched<T> {
  readonly result: T
  /** The status of every /health answer while the attack ran (0: no answer within 30 s). */
  readonly health: readonly number[]
  /** The slowest of them, in milliseconds, from request to answer. */
  readonly worstMs: number
  /** The attack's own wall time, in milliseconds. */
  readonly attackMs: number
}

/**
 * Run `attack` while asking `${origin}/health` every 20 ms, the next request sent once the last
 * one is answered. The server runs in this process, so a blocked event loop shows as one late
 * health answer: its latency includes the time the loop was held.
 */
export async function watchingHealth<T>(origin: string, attack: () => Promise<T>): Promise<Watched<T>> {
  const health: number[] = []
  let worstMs = 0
  const state = { done: false }
  const probe = (async () => {
    // At least one answer, even when the attack is over at once. A request is due 20 ms after the
    // last answer; its latency counts from then, so a loop held while no request was in flight
    // (the timer firing late) is counted too.
    let due = performance.now()
    do {
      const status = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(30_000) }).then(
        async (response) => {
          await response.arrayBuffer()
          return response.status
        },
        () => 0
      )
      const answered = performance.now()
      worstMs = Math.max(worstMs, answered - due)
      health.push(status)
      due = answered + 20
      await new Promise((resolve) => setTimeout(resolve, 20))
    } while (!state.done)
  })()
  const started = performance.now()
  let result: T
  let attackMs: number
  try {
    result = await attack()
    attackMs = performance.now() - started
  } finally {
    state.done = true
    await probe
  }
  return { result, health, worstMs, attackMs }
}
