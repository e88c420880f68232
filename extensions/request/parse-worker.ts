// A parse thread's task (parse-thread.ts): one response body parsed as the plugin would parse it
// inline, with the scraper compiled again from its written form. Pattern inputs are recorded, not
// judged: the evaluation's budget lives in the thread that asked.
import { MissingPackageError } from '../../config/optional.js'
import type { ParseAnswer, ParseFailure, ParseTask } from './parse-thread.js'
import { parseEnvelope } from './parse.js'
import { compileScraper } from './scraper.js'

export default function parse(task: ParseTask): ParseAnswer {
  const patternInputs: number[] = []
  const meter = {
    matchInput(length: number): void {
      patternInputs.push(length)
    },
  }
  try {
    const scraper = task.scraper === undefined ? undefined : compileScraper(task.scraper)
    return { envelope: parseEnvelope(task.status, task.contentType, task.bytes, scraper, task.url, meter), patternInputs }
  } catch (error) {
    const { name, message, format } = error as { name?: unknown; message?: unknown; format?: unknown }
    const failure: ParseFailure = {
      name: String(name),
      message: String(message),
      ...(typeof format === 'string' ? { format } : {}),
      ...(error instanceof MissingPackageError ? { missing: { packageName: error.packageName, feature: error.feature } } : {}),
    }
    return { failure, patternInputs }
  }
}
