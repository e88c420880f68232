// The one scheduler of sliced main-thread work (engine/slices.ts): a slice ends when its time is
// up; with nothing else waiting the next one starts after a single turn of the loop; with other
// requests arriving, sliced work as a whole keeps to its share of the loop (it waits, on a timer,
// for the rest, and stops waiting once requests stop arriving); upstream calls start at most
// STARTS_PER_TURN in a turn, in order; and the service's worker threads run below the main thread.
import t from 'tap'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { readdirSync, readFileSync } from 'node:fs'
import { admitStart, HELPER_NICE_STEPS, noteArrival, SHARE, Slice, STARTS_PER_TURN } from '../engine/slices.js'
import { call, serve } from './http-support.js'

function spin(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until);
}

t.test('a slice is due once its time has run', async (t) => {
  const slice = new Slice(5)
  t.notOk(slice.due(), 'a fresh slice is not due')
  spin(6)
  t.ok(slice.due(), 'due after its time')
  await slice.next()
  t.notOk(slice.due(), 'the next slice starts fresh')
})

t.test('alone, the next slice starts after one turn of the loop, not a timer', async (t) => {
  // A wait for the share would leave the loop idle (blocked on its timer) for nine times each
  // slice's 4 ms: 180 ms over five slices. Alone, the loop is never idle between them: a turn with
  // an immediate pending does not block. Read as the loop's idle time, not the clock, so a loaded
  // machine that deschedules the process between two slices does not count as a wait.
  const slice = new Slice(4)
  const before = performance.eventLoopUtilization()
  for (let i = 0; i < 5; i++) {
    spin(4)
    await slice.next()
  }
  const { idle } = performance.eventLoopUtilization(before)
  t.ok(idle < 90, `five slices ran without waiting for the share (loop idle ${idle.toFixed(1)} ms, a wait would be 180)`)
})

/** A steady load: one arrival every turn of the loop (but while `paused` says so) until the returned function stops it. */
function steadyLoad(paused: () => boolean = () => false): () => void {
  let arriving = true
  const arrive = (): void => {
    if (!arriving) return
    if (!paused()) noteArrival()
    setImmediate(arrive)
  }
  setImmediate(arrive)
  return () => {
    arriving = false
  }
}

/** Let what earlier tests counted leave the window arrivals are counted over. */
const forget = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50))

/** A slice of 4 ms that has just run beside a steady load, begun 25 ms before it (`steadyLoad`). */
async function sliceUnderLoad(paused?: () => boolean): Promise<{ slice: Slice; stop: () => void }> {
  await forget()
  const stop = steadyLoad(paused)
  await new Promise((resolve) => setTimeout(resolve, 25))
  const slice = new Slice(4)
  spin(4)
  return { slice, stop }
}

t.test('with other requests arriving, the next slice waits for the rest of the share', async (t) => {
  // One arrival every turn of the loop, as on a busy server, from before the slice on.
  const { slice, stop } = await sliceUnderLoad()
  const ended = performance.now()
  await slice.next()
  const waited = performance.now() - ended
  // The slice ran about 4 ms; its share is SHARE of the loop, so the rest (4 × 19 ms) goes to others.
  t.ok(waited >= 4 * ((1 - SHARE) / SHARE) * 0.9, `waited ${waited.toFixed(1)} ms, at least the rest of the share`)
  const other = new Slice(4)
  spin(4)
  const second = performance.now()
  await other.next()
  t.ok(performance.now() - second >= 4 * ((1 - SHARE) / SHARE) * 0.9, 'and again for the next slice (of any sliced work) while requests keep arriving')
  stop()
})

t.test('a pause in the arrivals shorter than the window they are counted over does not end the wait (a client collecting its garbage)', async (t) => {
  // A steady load that stops for 10 ms once, 5 ms into the wait, then goes on.
  let paused = false
  const { slice, stop } = await sliceUnderLoad(() => paused)
  const pause = setTimeout(() => {
    paused = true
    setTimeout(() => {
      paused = false
    }, 10)
  }, 5)
  const ended = performance.now()
  await slice.next()
  const waited = performance.now() - ended
  stop()
  clearTimeout(pause)
  t.ok(waited >= 4 * ((1 - SHARE) / SHARE) * 0.9, `waited ${waited.toFixed(1)} ms, the rest of the share, through the pause`)
})

t.test('the load stops: the wait ends early, and the next slice is not held at all', async (t) => {
  const { slice, stop } = await sliceUnderLoad()
  // The load goes on for 5 ms into the wait, then stops.
  setTimeout(stop, 5)
  let shareOver = false
  const timer = setTimeout(() => {
    shareOver = true
  }, 4 * ((1 - SHARE) / SHARE))
  const ended = performance.now()
  await slice.next()
  const waited = performance.now() - ended
  t.notOk(shareOver, `the next slice starts before the rest of the share is over (waited ${waited.toFixed(1)} ms)`)
  clearTimeout(timer)
  await forget()
  const before = performance.eventLoopUtilization()
  spin(4)
  await slice.next()
  t.ok(performance.eventLoopUtilization(before).idle < 10, 'alone again: after one turn, no timer')
})

t.test('a trickle of requests (a probe every 10 ms) is not a load: the slices run back to back', async (t) => {
  await forget()
  const probe = setInterval(noteArrival, 10)
  const slice = new Slice(4)
  const before = performance.eventLoopUtilization()
  for (let i = 0; i < 10; i++) {
    spin(4)
    await slice.next()
  }
  clearInterval(probe)
  const { idle } = performance.eventLoopUtilization(before)
  // At the share, ten slices of 4 ms would leave the loop idle 10 × 76 ms.
  t.ok(idle < 100, `ten slices beside the probe, the loop idle ${idle.toFixed(1)} ms`)
})

t.test('a burst of requests that is over is not a load: the next slice is not held', async (t) => {
  // A slice ends during a burst (and is held), the burst goes on and ends; 60 ms later, with no
  // request since, the next slice starts after one turn. (Counted against the time the arrivals
  // were last read, the burst was averaged over the quiet that followed it, and still held it.)
  const stop = steadyLoad()
  await new Promise((resolve) => setTimeout(resolve, 25))
  const held = new Slice(1)
  spin(1)
  await held.next()
  for (let i = 0; i < 2000; i++) noteArrival()
  stop()
  await new Promise((resolve) => setTimeout(resolve, 60))
  const slice = new Slice(4)
  spin(4)
  const before = performance.eventLoopUtilization()
  await slice.next()
  const { idle } = performance.eventLoopUtilization(before)
  t.ok(idle < 10, `after one turn, no timer (the loop idle ${idle.toFixed(1)} ms; held, 76)`)
})

t.test('upstream calls start at most STARTS_PER_TURN in a turn, in order', async (t) => {
  await nextTurn()
  await nextTurn()
  const order: number[] = []
  const waiting: Array<Promise<void>> = []
  let atOnce = 0
  for (let i = 0; i < STARTS_PER_TURN * 3 + 5; i++) {
    const admitted = admitStart()
    if (admitted === undefined) {
      atOnce++
      order.push(i)
    } else {
      waiting.push(admitted.then(() => {
        order.push(i)
      }))
    }
  }
  t.equal(atOnce, STARTS_PER_TURN, 'this turn admits STARTS_PER_TURN at once')
  await nextTurn()
  await Promise.resolve()
  t.equal(order.length, STARTS_PER_TURN * 2, 'the next turn admits as many again')
  await Promise.all(waiting)
  t.same(order, Array.from({ length: STARTS_PER_TURN * 3 + 5 }, (_, i) => i), 'every call started, in the order it asked')
})

/** The nice value of every thread of this process, by thread id (Linux: /proc/self/task). */
function threadNiceValues(): Map<number, number> {
  const values = new Map<number, number>()
  for (const tid of readdirSync('/proc/self/task')) {
    // After the command's closing parenthesis: state is field 3; nice is field 19.
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    values.set(Number(tid), Number(fields[16]))
  }
  return values
}

t.test('worker threads of the service run below the main thread', { skip: process.platform === 'linux' ? false : 'thread priorities are per thread on Linux only' }, async (t) => {
  const main = threadNiceValues().get(process.pid)!
  const before = new Set(threadNiceValues().keys())
  // An isolated evaluation: the service's pool starts a worker thread for it, in this process (the
  // helper process's threads, lowered with the whole process: test/helper-process.test.ts).
  const app = await serve(t, { options: { map: { explicit: true }, isolation: { threads: 1 }, helperProcess: false } })
  const answer = await call(app, { method: 'POST', url: '/map', payload: { mapping: { mapping: { '/a': '/b' } }, input: { b: 1 } } })
  t.match(answer.data, { a: 1, valid: true }, 'the isolated evaluation answers')
  const started = [...threadNiceValues()].filter(([tid]) => !before.has(tid))
  t.ok(started.some(([, nice]) => nice === Math.min(19, main + HELPER_NICE_STEPS)), `a new thread runs ${HELPER_NICE_STEPS} steps below the main thread (main ${main}; new ${JSON.stringify(started.map(([, nice]) => nice))})`)
  t.equal(threadNiceValues().get(process.pid), main, 'the main thread keeps its priority')
})
