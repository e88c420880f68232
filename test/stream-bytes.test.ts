// service/ndjson.ts in this process: the bytes of a stream read exactly (a byte order mark dropped
// at the stream's start only, whatever chunks carry it; the line limit on the content, without its
// `\n` or `\r\n`, both ways and across chunk boundaries; a line that is not UTF-8 an error line,
// never replacement characters), malformed lines refused cheaply (no stack trace, the column from
// the parser or from a bounded scan), and answering in slices: however many lines one chunk
// brings, the event loop gets turns between them (counted, never timed).
import t from 'tap'
import { answerLines, ClientGone, LineSplitter, NdjsonReader, parseLine, SCAN_CHARS, SLICE_LINES, type Answering, type Line } from '../service/ndjson.js'

const bytes = (...parts: Array<string | number[] | Buffer>): Buffer => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))))

/** Every line of `chunks` through a splitter of `max` bytes, as [number, text or fault, bytes]. */
function split(max: number, ...chunks: Buffer[]): Array<[number, string, number]> {
  const splitter = new LineSplitter(max)
  const lines: Line[] = []
  for (const chunk of chunks) splitter.push(chunk, lines)
  splitter.end(lines)
  return lines.map((line) => [line.number, line.text ?? `!${line.fault}`, line.bytes])
}

/** Every way to cut `whole` in two (and whole), so each boundary is crossed by a chunk's end. */
function cuts(whole: Buffer): Buffer[][] {
  const ways: Buffer[][] = [[whole]]
  for (let at = 1; at < whole.length; at++) ways.push([whole.subarray(0, at), whole.subarray(at)])
  // One byte per chunk, too.
  ways.push([...whole].map((byte) => Buffer.from([byte])))
  return ways
}

const BOM = [0xef, 0xbb, 0xbf]

/** The chunks as a source, one at a time. */
async function * from(chunks: Buffer[]): AsyncGenerator<Buffer> {
  for (const chunk of chunks) yield chunk
}

t.test('a byte order mark is dropped at the stream\'s start, whatever chunks carry it; nowhere else', async (t) => {
  const whole = bytes(BOM, '\n{"a":1}\n')
  for (const chunks of cuts(whole)) {
    t.strictSame(split(64, ...chunks), [[1, '', 0], [2, '{"a":1}', 7]], `${chunks.length} chunk(s), first of ${chunks[0]!.length} bytes: line 1 is empty`)
  }
  t.strictSame(split(64, bytes(BOM, '{"a":1}')), [[1, '{"a":1}', 7]], 'a mark and one line without a newline')
  t.strictSame(split(64, bytes(BOM)), [], 'a mark alone: no line')
  t.strictSame(split(64, bytes('{"a":1}\n', BOM, '{"b":2}\n')), [[1, '{"a":1}', 7], [2, '\ufeff{"b":2}', 10]], 'a mark inside the stream is the line\'s')
  t.strictSame(split(64, Buffer.from([0xef, 0xbb])), [[1, '!utf8', 2]], 'the start of a mark, then the end of the stream: not UTF-8')
  t.strictSame(split(64, Buffer.from([0xef]), bytes('A\n')), [[1, '!utf8', 2]], 'a first byte of a mark, then something else: its line, not UTF-8')

  // Through the reader, as the route and the CLI read: the empty first line is skipped.
  const reader = new NdjsonReader(from([Buffer.from(BOM), Buffer.from('\n{"mapping":"echo"}\n{"a":1}\n')]), 64)
  t.equal((await reader.first())?.text, '{"mapping":"echo"}')
})

t.test('the line limit counts the content, without its newline: exactly the limit passes with LF and CRLF, one more fails both ways', async (t) => {
  const max = 8
  const exact = 'x'.repeat(max)
  const over = 'x'.repeat(max + 1)
  for (const [ending, label] of [['\n', 'LF'], ['\r\n', 'CRLF']] as const) {
    const whole = Buffer.from(`${exact}${ending}${over}${ending}{}${ending}`)
    for (const chunks of cuts(whole)) {
      t.strictSame(split(max, ...chunks), [[1, exact, max], [2, '!size', max + 1], [3, '{}', 2]], `${label}, ${chunks.length} chunk(s) (first ${chunks[0]!.length} bytes)`)
    }
  }
  t.strictSame(split(max, Buffer.from(`${exact}\r`)), [[1, exact, max]], 'the last line, with a CR and no LF')
  t.strictSame(split(max, Buffer.from(`${'y'.repeat(40)}\r\n{}\r\n`)), [[1, '!size', 40], [2, '{}', 2]], 'a line far over: counted, not kept')
})

t.test('a line that is not UTF-8 has no text and the fault "utf8"; characters split across chunks are whole', async (t) => {
  const euro = Buffer.from('"€"')
  const whole = bytes('"a"\n', euro, '\n', [0x22, 0xc3, 0x28, 0x22], '\n', [0xed, 0xa0, 0x80], '\n"z"\n')
  for (const chunks of cuts(whole)) {
    t.strictSame(
      split(64, ...chunks),
      [[1, '"a"', 3], [2, '"€"', 5], [3, '!utf8', 4], [4, '!utf8', 3], [5, '"z"', 3]],
      `${chunks.length} chunk(s) (first ${chunks[0]!.length} bytes): an invalid sequence and an encoded surrogate refused`
    )
  }
  const line: Line = { number: 3, text: null, bytes: 4, fault: 'utf8' }
  t.throws(() => parseLine(line, 64), { statusCode: 400, message: 'Line 3 is not valid UTF-8' })
})

t.test('a malformed line is refused with its column, from the parser or a bounded scan, and without a stack trace', async (t) => {
  const limit = Error.stackTraceLimit
  const refusal = (text: string): Error => {
    try {
      parseLine({ number: 7, text, bytes: Buffer.byteLength(text), fault: undefined }, 1 << 20)
    } catch (error) {
      return error as Error
    }
    throw new Error(`${text} parsed`)
  }
  for (const [text, tail] of [
    ['x', ' (column 1): unexpected "x"'],
    ['   @', ' (column 4): unexpected "@"'],
    ['{"i": 70000, oops}', ' (column 14): unexpected "o"'],
    ['{"a":1}}', ' (column 8): unexpected "}"'],
    ['[1,2,', ' (column 6): unexpected end of input'],
    ['[1,,2]', ' (column 4): unexpected ","'],
    ['{"a": tru}', ' (column 7): unexpected "t"'],
    // The place is past what is scanned, and the parser does not say it: no column.
    [`[${'1,'.repeat(SCAN_CHARS)},2]`, ''],
  ] as const) {
    const error = refusal(text)
    t.match(error, { statusCode: 400 })
    t.equal(error.message, `Line 7 must be valid JSON${tail}`, text.slice(0, 20))
    t.notMatch(error.stack ?? '', /\n\s+at /, 'no stack trace captured')
  }
  t.match(refusal(`${'['.repeat(600)}${']'.repeat(600)}`), { statusCode: 400, message: 'Line 7 must not nest deeper than 512 levels' })
  t.match(refusal('{"__proto__":{"x":1}}'), { statusCode: 400, message: 'Line 7 must not contain __proto__ or constructor.prototype keys' })
  t.match(refusal('{"constructor":{"prototype":{}}}'), { statusCode: 400 })
  const tooLarge = (() => {
    try {
      parseLine({ number: 2, text: null, bytes: 99, fault: 'size' }, 64)
    } catch (error) {
      return error as Error
    }
  })()
  t.match(tooLarge, { statusCode: 413, message: 'Line 2 exceeds the 64-byte limit (99 bytes)' })
  t.notMatch(tooLarge?.stack ?? '', /\n\s+at /)
  t.equal(Error.stackTraceLimit, limit, 'the stack trace limit is restored')
})

/** An answering that answers each line synchronously with its number. */
function numbering(extra: Partial<Answering> = {}): Answering {
  return {
    concurrency: 4,
    maxLineBytes: 1024,
    evaluate: (_input, line) => `${line}\n`,
    fail: (line, error) => `{"line":${line},"error":${JSON.stringify((error as Error).message)}}\n`,
    ...extra,
  }
}

/** Every write `answerLines` made, in order, to an output that always keeps up. */
async function written(reader: NdjsonReader, answering: Answering): Promise<string[]> {
  const out: string[] = []
  await answerLines(reader, answering, {
    write: (text) => out.push(text) > 0,
    drain: () => Promise.resolve(),
  })
  return out
}

t.test('an output that does not keep up is waited for: nothing more is read or answered until it asks for more', async (t) => {
  const count = 3 * SLICE_LINES
  let pulled = 0
  async function * source(): AsyncGenerator<Buffer> {
    for (let i = 0; i < count; i++) {
      pulled++
      yield Buffer.from(`${i}\n`)
    }
  }
  const out: string[] = []
  let waiting = false
  let pulledWhileWaiting = 0
  await answerLines(new NdjsonReader(source(), 1024), numbering(), {
    write: (text) => {
      t.notOk(waiting, 'no write while the reader has not caught up')
      out.push(text)
      // Full after every write: the next one waits for the reader.
      return false
    },
    drain: () => {
      waiting = true
      const before = pulled
      return new Promise((resolve) =>
        setImmediate(() => {
          pulledWhileWaiting += pulled - before
          waiting = false
          resolve()
        })
      )
    },
  })
  t.equal(out.join('').split('\n').length - 1, count, 'every line answered, in order')
  t.strictSame(out.join('').split('\n').slice(0, 3), ['1', '2', '3'])
  t.equal(pulledWhileWaiting, 0, 'the source was not read while the output was full')
})

t.test('one chunk of many lines is answered in slices, the event loop getting a turn between two', async (t) => {
  const count = 20 * SLICE_LINES + 7
  const chunk = Buffer.from('1\n'.repeat(count))
  let turns = 0
  let counting = true
  const count1 = (): void => {
    turns++
    if (counting) setImmediate(count1)
  }
  setImmediate(count1)
  let answered = 0
  let outputs = 0
  for (const text of await written(new NdjsonReader(from([chunk]), 1024), numbering())) {
    outputs++
    answered += text.split('\n').length - 1
  }
  counting = false
  t.equal(answered, count, 'every line answered')
  t.ok(turns >= 20, `the loop turned at least once a slice of ${SLICE_LINES} lines (${turns} turns)`)
  t.ok(outputs >= 20, `answers went out slice by slice (${outputs} outputs)`)

  // Malformed lines and blank ones are sliced alike.
  turns = 0
  counting = true
  setImmediate(count1)
  let errors = 0
  for (const text of await written(new NdjsonReader(from([Buffer.from('x\n\n'.repeat(count))]), 1024), numbering())) errors += text.split('\n').length - 1
  counting = false
  t.equal(errors, count, 'one error line per malformed line, none for blank ones')
  t.ok(turns >= 40, `a slice counts blank lines too (${turns} turns)`)
})

t.test('an abort stops the answers at once: no line starts after it, its reason is the last line unless the client is gone', async (t) => {
  const started: number[] = []
  const never = new Promise<string>(() => {})
  const run = async (reason: Error): Promise<string[]> => {
    const stop = new AbortController()
    started.length = 0
    const answering = numbering({
      concurrency: 2,
      evaluate: (_input, line) => {
        started.push(line)
        if (line === 3) queueMicrotask(() => stop.abort(reason))
        return line >= 3 ? never : `${line}\n`
      },
      signal: stop.signal,
    })
    // A source that never ends: the abort alone ends the answers.
    async function * source(): AsyncGenerator<Buffer> {
      yield Buffer.from('{}\n{}\n{}\n{}\n{}\n')
      await never
    }
    const out = await written(new NdjsonReader(source(), 1024), answering)
    return out.join('').split('\n').filter((line) => line !== '')
  }
  t.strictSame(await run(new Error('ended')), ['1', '2', '{"line":3,"error":"ended"}'], 'the answers, then the reason numbered as the first line left unanswered')
  t.strictSame(started, [1, 2, 3, 4], 'line 4 had started (concurrency 2); line 5 never did')
  t.strictSame(await run(new ClientGone()), ['1', '2'], 'the client gone: no last line')
})
