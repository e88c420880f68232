// Memory given back once the service is idle (docs/reliability.md "Beside the slices"). V8 collects
// garbage when it allocates, so after a burst (twelve 10 MB upstream bodies, a 4 MB echo) an idle
// service keeps what the burst left: dead objects and, above all, the buffers behind them, which
// only a full collection frees. Measured with bench:hostile, the default service stayed 175 to 400
// MB above its start long after the attacks ended, and nothing would reclaim it until traffic
// resumed. So the service's own process (startFromEnvironment; a host that embeds the plugin
// keeps its own policy) runs one full collection when a check finds no request in flight and the
// heap V8 holds (in use or not) plus external memory standing RELEASE_BYTES above where the last
// collection left them. On an idle server that is a pause of a few tens of milliseconds, once per
// burst. What V8 holds, not what it uses: after a long load (bench:soak's 60 s) the heap in use had
// grown by less than the bound while V8 held 145 MB for it, and nothing gave that back.
//
// One collection is not enough for the young generation: V8 grows it under load (up to twice
// `--max-semi-space-size`, 64 MB as the image runs) and shrinks it only at a collection that finds
// the allocation rate low, which the collection right after a burst does not. So the next check
// that still finds the server idle collects once more, and the young generation goes back to a
// megabyte or two (measured on Node 20, 22 and 24; after bench:hostile's attacks the default
// service's young generation held 64 MB of its idle RSS).
//
// A full collection on demand needs V8's `gc` function, which only `--expose-gc` provides: the
// switch is set at run time here (as the service sets the linear RegExp engine's) and the function
// taken from a fresh context, the only one that sees the switch.
import type { Server } from 'node:http'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** Growth (bytes of heap held plus external memory) since the last collection that makes an idle check collect. */
export const RELEASE_BYTES = 64 * 1024 * 1024

/** The most of the loop's time (since the last check) that still counts as idle. */
export const IDLE_UTILIZATION = 0.1

/** How often (ms) the server is checked for idleness. */
export const CHECK_MS = 5000

export interface IdleRelease {
  /** Full collections run so far for grown memory. */
  readonly collections: number
  /** Collections run at the check after one of those, the server still idle (the young generation's). */
  readonly followUps: number
  stop(): void
}

/** The heap V8 holds (in use or free) and external memory (array buffers included), in bytes. */
function footprint(): number {
  const usage = process.memoryUsage()
  return usage.heapTotal + usage.external
}

let collect: (() => void) | undefined

/** V8's `gc`, exposed on first use (undefined where the switch cannot be set). */
function fullCollection(): (() => void) | undefined {
  if (collect === undefined) {
    try {
      setFlagsFromString('--expose-gc')
      collect = runInNewContext('gc') as () => void
    } catch {
      // A runtime that refuses the switch: memory is left to V8's own schedule.
    }
  }
  return collect
}

/**
 * Watch `server`: once no request is in flight at a check, the loop was mostly idle since the last
 * one (IDLE_UTILIZATION) and memory grew by RELEASE_BYTES, collect.
 */
export function releaseMemoryWhenIdle(server: Server, checkMs = CHECK_MS, releaseBytes = RELEASE_BYTES): IdleRelease {
  const gc = fullCollection()
  let inFlight = 0
  let collections = 0
  const ended = (): void => {
    inFlight--
  }
  const arrived = (_request: unknown, response: NodeJS.EventEmitter): void => {
    inFlight++
    response.once('close', ended)
  }
  server.on('request', arrived)
  let followUps = 0
  let followUp = false
  let floor = footprint()
  let loop = performance.eventLoopUtilization()
  const timer = setInterval(() => {
    // Busy without a request (a reload registering a large set in slices): not idle either. A
    // full collection there pauses the loop for as long as the new set is large.
    const now = performance.eventLoopUtilization()
    const busy = performance.eventLoopUtilization(now, loop).utilization
    loop = now
    if (gc === undefined || inFlight > 0 || busy > IDLE_UTILIZATION) return
    if (footprint() - floor >= releaseBytes) {
      gc()
      collections++
      followUp = true
    } else if (followUp) {
      gc()
      followUps++
      followUp = false
    } else return
    floor = footprint()
  }, checkMs)
  timer.unref()
  return {
    get collections() {
      return collections
    },
    get followUps() {
      return followUps
    },
    stop() {
      clearInterval(timer)
      server.off('request', arrived)
    },
  }
}
