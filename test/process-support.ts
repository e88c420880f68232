// This process's children and threads as Linux's /proc shows them: the tests that see where work
// ran (a worker thread of this process, or of the helper process, workers/helper-process.ts).
import { readdirSync, readFileSync } from 'node:fs'

/** The fields of a /proc stat file from the third on (state, ppid, …): what follows the command's name. */
export function statFields(file: string): string[] {
  const stat = readFileSync(file, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** Whether process `pid` runs (a zombie, ended but not yet reaped by whoever adopted it, does not). */
export function running(pid: number): boolean {
  try {
    return statFields(`/proc/${pid}/stat`)[0] !== 'Z'
  } catch {
    return false
  }
}

/** The running children of this process whose command line includes `command` (any, without). */
export function children(command = ''): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (Number(statFields(`/proc/${entry}/stat`)[1]) !== process.pid || !running(Number(entry))) continue
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(command)) found.push(Number(entry))
    } catch {
      // Ended meanwhile.
    }
  }
  return found
}

/** The threads of this process and of its children, as `pid/tid`. */
export function threadsWithChildren(): Set<string> {
  const threads = new Set<string>()
  for (const pid of [process.pid, ...children()]) {
    try {
      for (const thread of readdirSync(`/proc/${pid}/task`)) threads.add(`${pid}/${thread}`)
    } catch {
      // Ended meanwhile.
    }
  }
  return threads
}
