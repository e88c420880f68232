// Shared by the request plugin tests: a real upstream server on 127.0.0.1 (never any other
// address) that records each request it receives, closed when the test ends.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Upstream {
  origin: string
  hits: string[]
}

/** A local upstream on 127.0.0.1 that records `METHOD path` per request; closed at teardown. */
export async function upstream(
  t: { teardown(fn: () => unknown): void },
  handle: (req: IncomingMessage, res: ServerResponse) => void
): Promise<Upstream> {
  const hits: string[] = []
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`)
    handle(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    return new Promise((resolve) => server.close(resolve))
  })
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits }
}
