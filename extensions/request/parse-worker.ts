// A parse thread's task (parse-thread.ts): one response body parsed as the plugin would parse it
// inline, with the scraper compiled again from its written form, then narrowed to the path of the
// call's pointer and packed into transferred batches (pack.ts). Pattern inputs are recorded, not
// judged: the evaluation's budget lives in the thread that asked.
import { move, transferableSymbol, valueSymbol } from 'piscina'
import { MissingPackageError } from '../../support/optional.js'
import { narrow, pack } from './pack.js'
import type { ParseAnswer, ParseFailure, ParseTask } from './parse-thread.js'
import { parseEnvelope } from './parse.js'
import { compileScraper } from './scraper.js'

/** The body's segments as one array (a copy only when there are several). */
function joined(parts: readonly Uint8Array[]): Uint8Array {
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts)
}

export default function parse(task: ParseTask): ParseAnswer {
  const patternInputs: number[] = []
  const meter = {
    matchInput(length: number): void {
      patternInputs.push(length)
    },
  }
  try {
    const scraper = task.scraper === undefined ? undefined : compileScraper(task.scraper)
    const { spine, target } = narrow(parseEnvelope(task.status, task.contentType, joined(task.parts), scraper, task.url, meter), task.pointer)
    const batches = pack(target)
    const answer: ParseAnswer = { spine, batches, patternInputs }
    // The batches are moved, not cloned: receiving them costs the main thread nothing.
    return move({
      get [transferableSymbol]() {
        return batches.map((batch) => batch.buffer)
      },
      get [valueSymbol]() {
        return answer
      },
    }) as unknown as ParseAnswer
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
