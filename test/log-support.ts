// A pino logger whose lines are kept in memory, for the tests that read what the service logged.
import { Writable } from 'node:stream'
import { pino } from 'pino'

export interface CapturedLog {
  readonly logger: pino.Logger
  /** Everything written so far. */
  text(): string
  /** The lines written so far, parsed. */
  lines(): Array<Record<string, any>>
}

/** A logger at `level` (info by default) writing into memory. */
export function capturedLog(level = 'info'): CapturedLog {
  const chunks: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString())
      done()
    },
  })
  const text = (): string => chunks.join('')
  return {
    logger: pino({ level }, sink),
    text,
    lines: () =>
      text()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, any>),
  }
}
