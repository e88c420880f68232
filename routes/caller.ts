// The caller of an evaluation route (POST /map, POST /validate), as the evaluator needs it.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Caller } from '../runtime/evaluator.js'

/**
 * An abort signal for the request, made only when asked for (a pure mapping pays nothing). The
 * request stream closed long before (once its body was read): a disconnect shows as the response
 * closing unfinished.
 */
function clientSignal(reply: FastifyReply): () => AbortSignal {
  let controller: AbortController | undefined
  const response = reply.raw
  return () => {
    if (controller === undefined) {
      const made = new AbortController()
      const abort = (): void => {
        if (!response.writableFinished) made.abort(new Error('the client closed the request'))
      }
      if (response.destroyed) abort()
      else response.once('close', abort)
      controller = made
    }
    return controller.signal
  }
}

/** Who asked: `stdout` lines go to the request's log at debug level, as data, never a raw line of their own. */
export function callerOf(request: FastifyRequest, reply: FastifyReply): Caller {
  return {
    identity: request.identity,
    signal: clientSignal(reply),
    stdout: (text) => request.log.debug({ requestId: request.requestId, stdout: text }, 'mapping stdout'),
    // Asked only by an isolated evaluation (pino's level getter is not free).
    get wantsStdout() {
      const level = request.log.level
      return level === 'debug' || level === 'trace'
    },
  }
}
