// Stream client for `npm run bench:stream`, in its own process so it does not share an event loop
// with the server it measures: POSTs `lines` copies of one input line to a /map/stream URL on
// 127.0.0.1 from a generator (the body is never held whole), reads the answers as they come and
// prints one JSON line { lines, errors, seconds }.
import { request } from 'node:http'
import { Readable } from 'node:stream'

const [url = '', count = '0', line = '{}'] = process.argv.slice(2)
if (!url.startsWith('http://127.0.0.1:')) {
  process.stderr.write('stream-client: the target must be on 127.0.0.1\n')
  process.exit(2)
}
const lines = Number(count)

async function * body(): AsyncGenerator<string> {
  const batch = `${line}\n`.repeat(500)
  for (let sent = 0; sent < lines; sent += 500) yield sent + 500 <= lines ? batch : `${line}\n`.repeat(lines - sent)
}

const started = performance.now()
const answered = await new Promise<{ lines: number; errors: number }>((resolve, reject) => {
  const sending = request(url, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' } }, (response) => {
    if (response.statusCode !== 200) reject(new Error(`status ${response.statusCode}`))
    let got = 0
    let errors = 0
    let rest = ''
    response.setEncoding('utf8')
    response.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n')
      rest = parts.pop()!
      got += parts.length
      for (const part of parts) if (part.startsWith('{"line":')) errors++
    })
    response.on('end', () => resolve({ lines: got, errors }))
    response.on('error', reject)
  })
  sending.on('error', reject)
  Readable.from(body()).pipe(sending)
})
process.stdout.write(`${JSON.stringify({ ...answered, seconds: (performance.now() - started) / 1000 })}\n`)
