// The rejections nobody handled while a test file ran: the tests assert there are none, instead
// of letting the process's crash-on-unhandled-rejection policy end the file.
import type { Test } from 'tap'

export function recordUnhandled(t: Pick<Test, 'teardown'>): unknown[] {
  const unhandled: unknown[] = []
  const record = (reason: unknown): void => {
    unhandled.push(reason)
  }
  process.on('unhandledRejection', record)
  t.teardown(() => {
    process.off('unhandledRejection', record)
  })
  return unhandled
}
