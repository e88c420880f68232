// The worker side of workers/isolation.ts: one engine per thread over the service's mappings and
// extensions (built once, at the thread's first task), and one task at a time: evaluate as the
// route would inline (service/evaluation.ts), or run an explicit document's examples. Whatever
// fails is shaped here as the error handler would shape it, so only plain data crosses back.
import { subscribe } from 'node:diagnostics_channel'
import { Piscina } from 'piscina'
import { loadExtensions } from '../sources/extensions.js'
import { BudgetExceeded, type Extensions, type Plugin } from '../engine/index.js'
import { requestSurface, stockExtensions } from '../extensions/stock.js'
import { UPSTREAM_CHANNEL, type UpstreamCall } from '../extensions/request/index.js'
import { EngineService } from '../service/mapping-service.js'
import { shapeError } from '../service/errors.js'
import { evaluateRequest, validateDocument } from '../service/evaluation.js'
import { documentOf, parseJsonText } from '../service/json-text.js'
import { markStarted, type IsolatedTask, type PoolWorkerData, type TaskAnswer, type TaskFacts } from './isolation.js'

const data = Piscina.workerData as PoolWorkerData
const started = new BigInt64Array(data.started)

/** What the running task saw; one task runs at a time in a worker. */
let facts: { stdout: string[]; pluginCalls: Record<string, number>; upstream: Array<number | undefined>; prepared?: TaskFacts['prepared'] }
/** The most `stdout` lines a task sends back (the rest is dropped, as a log would rate-limit it). */
const STDOUT_LINES = 1000

function freshFacts(): typeof facts {
  return { stdout: [], pluginCalls: Object.create(null) as Record<string, number>, upstream: [] }
}
facts = freshFacts()

/** Every plugin counted under its name, as the main thread's observer counts inline evaluations; its options check kept. */
function counted(extensions: Extensions): Extensions {
  if (extensions.plugins === undefined) return extensions
  const plugins: Record<string, Plugin> = {}
  for (const [name, plugin] of Object.entries(extensions.plugins)) {
    const wrapped: Plugin = function counted(options, value, context) {
      facts.pluginCalls[name] = (facts.pluginCalls[name] ?? 0) + 1
      return plugin(options, value, context)
    }
    if (plugin.validateOptions !== undefined) wrapped.validateOptions = plugin.validateOptions
    plugins[name] = wrapped
  }
  return { ...extensions, plugins }
}

subscribe(UPSTREAM_CHANNEL, (message) => {
  const call = message as Partial<UpstreamCall> | null
  facts.upstream.push(typeof call?.status === 'number' ? call.status : undefined)
})

let engine: Promise<EngineService> | undefined

async function buildEngine(): Promise<EngineService> {
  const spec = data.extensions
  const surface = 'module' in spec ? await loadExtensions(spec.module) : 'stock' in spec ? stockExtensions(spec.stock) : requestSurface(spec.requests)
  // The main thread validated the set and ran its examples before it served it.
  return new EngineService(data.entries, counted(surface), () => {}, data.settings)
}

export default async function run(task: IsolatedTask): Promise<TaskAnswer> {
  // The engine is built before the clock starts: a thread's start-up is not the evaluation's time.
  engine ??= buildEngine()
  try {
    await engine
  } catch {
    // Answered below, as the task's failure.
  }
  markStarted(started, task)
  facts = freshFacts()
  const stdout = task.stdout
    ? (text: string): void => {
        if (facts.stdout.length < STDOUT_LINES) facts.stdout.push(text)
      }
    : undefined
  const extra = { identity: task.identity }
  try {
    const service = await engine
    if (task.kind === 'map') {
      // A large input crosses as its text: parsed here, off the event loop.
      const request = task.request.inputText === undefined ? task.request : { ...task.request, input: parseJsonText(task.request.inputText), inputText: undefined }
      const outcome = await evaluateRequest(service, request, extra, stdout, (prepared) => {
        facts.prepared = { cached: prepared.cached, refused: prepared.compiled === null, report: prepared.compiled === null ? prepared.report : undefined }
      })
      return { ok: true, outcome, ...facts }
    }
    const document = task.documentText === undefined ? task.document! : documentOf(parseJsonText(task.documentText))
    const report = await validateDocument(service, document, task.mayEvaluate, extra, stdout)
    // Printed here: a string crosses back as a copy, where a report's objects would be cloned on the main thread.
    if (task.printed === true) return { ok: true, reportText: JSON.stringify(report), valid: report.valid, ...facts }
    return { ok: true, report, ...facts }
  } catch (error) {
    const shaped = shapeError(error, 0)
    const failure = { ...shaped, budget: error instanceof BudgetExceeded ? error.budget : undefined }
    return { ok: false, failure, ...facts }
  }
}
