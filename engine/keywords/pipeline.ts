// The value pipeline of a keyword object (engine.md §8), built by walking the keyword records stage
// by stage: locate (the first locate keyword present), dispatch, the plugins named in the
// descriptor, shape, validate (all validators as one step, each reporting at most one error), and
// finalize. A stage's order is the order of the records in keywords/index.ts.
import type { Provenance } from '../diagnostics.js'
import type { CompileContext, Step } from '../plan.js'
import { stage } from './index.js'
import type { Check, CompiledLocate, KeywordRecord } from './record.js'

/** With no locate keyword, the scope passes through. */
const PASS_THROUGH: CompiledLocate = { locate: (context) => context.source, sync: true }

/** Where an initializer's promise is settled, before the first keyword that needs a settled value. */
const SETTLE: Step = { awaits: true, run: (value) => value }

export interface CompiledPipeline {
  readonly locate: CompiledLocate
  readonly steps: readonly Step[]
}

export function compilePipeline(descriptor: Record<string, unknown>, cx: CompileContext, provenance: Provenance, plugins: readonly Step[]): CompiledPipeline {
  const compile = <T>(record: KeywordRecord): T | null => (record.compile?.(descriptor, cx, provenance) ?? null) as T | null
  let locate = PASS_THROUGH
  for (const record of stage('locate')) {
    const found = compile<CompiledLocate>(record)
    if (found !== null) {
      locate = found
      break
    }
  }
  const steps: Step[] = []
  const add = (step: Step | null): void => {
    if (step !== null) steps.push(step)
  }
  for (const record of stage('dispatch')) add(compile<Step>(record))
  steps.push(...plugins)
  let unsettled = false
  for (const record of stage('shape')) {
    if (unsettled && record.needsSettled === true) {
      steps.push(SETTLE)
      unsettled = false
    }
    const step = compile<Step>(record)
    add(step)
    if (step !== null && record.settlesLater === true) unsettled = true
  }
  if (unsettled) steps.push(SETTLE)
  const checks = stage('validate').map((record) => compile<Check>(record)).filter((check): check is Check => check !== null)
  if (checks.length > 0) {
    steps.push({
      awaits: false,
      run(value, context) {
        for (const check of checks) check(value, context)
        return value
      },
    })
  }
  for (const record of stage('finalize')) add(compile<Step>(record))
  return { locate, steps }
}
