// The value pipeline of a keyword object (language.md §8), built by walking the keyword records stage
// by stage: locate (the first locate keyword present), dispatch, the plugins named in the
// descriptor, shape, validate (all validators as one step, each reporting at most one error), and
// finalize. A stage's order is the order of the records in keywords/index.ts.
import type { Provenance } from '../diagnostics.js'
import type { CompileContext, Print, Step } from '../context.js'
import { stage } from './index.js'
import { pluginNames } from './plugins.js'
import type { Check, CompiledLocate, KeywordRecord } from './record.js'

/** With no locate keyword, the scope passes through. */
const PASS_THROUGH: CompiledLocate = { locate: (context) => context.source, sync: true }

/** Where an initializer's promise is settled, before the first keyword that needs a settled value. */
const SETTLE: Step = { awaits: true, run: (value) => value }

/** What a step is, for explain traces: its stage and keyword; null for the engine's own settling step. */
export type StepLabel = { readonly stage: 'dispatch' | 'plugins' | 'shape' | 'validate' | 'finalize'; readonly keyword: string } | null

export interface CompiledPipeline {
  readonly locate: CompiledLocate
  /** The locate keyword that won, when one is present. */
  readonly located: string | undefined
  /** Explain mode: where in the input the winning keyword's read stands (its record's `readsAt`). */
  readonly readsAt: KeywordRecord['readsAt']
  readonly steps: readonly Step[]
  /** One label per step (read only when compiling in explain mode). */
  readonly labels: readonly StepLabel[]
}

export function compilePipeline(descriptor: Record<string, unknown>, cx: CompileContext, provenance: Provenance, plugins: readonly Step[]): CompiledPipeline {
  const compile = <T>(record: KeywordRecord): T | null => (record.compile?.(descriptor, cx, provenance) ?? null) as T | null
  let locate = PASS_THROUGH
  let located: string | undefined
  let readsAt: KeywordRecord['readsAt']
  for (const record of stage('locate')) {
    const found = compile<CompiledLocate>(record)
    if (found !== null) {
      locate = found
      located = record.name
      readsAt = record.readsAt
      break
    }
  }
  const steps: Step[] = []
  const labels: StepLabel[] = []
  const add = (record: KeywordRecord, step: Step | null): void => {
    if (step === null) return
    steps.push(step)
    labels.push({ stage: record.stage as 'dispatch' | 'shape' | 'finalize', keyword: record.name })
  }
  for (const record of stage('dispatch')) add(record, compile<Step>(record))
  steps.push(...plugins)
  for (const name of pluginNames(descriptor, cx)) labels.push({ stage: 'plugins', keyword: name })
  let unsettled = false
  for (const record of stage('shape')) {
    if (unsettled && record.needsSettled === true) {
      steps.push(SETTLE)
      labels.push(null)
      unsettled = false
    }
    const step = compile<Step>(record)
    add(record, step)
    if (step !== null && record.settlesLater === true) unsettled = true
  }
  if (unsettled) {
    steps.push(SETTLE)
    labels.push(null)
  }
  const validators = stage('validate')
    .map((record): { name: string; check: Check | null } => ({ name: record.name, check: compile<Check>(record) }))
    .filter((validator): validator is { name: string; check: Check } => validator.check !== null)
  const checks = validators.map((validator) => validator.check)
  if (checks.length > 0) {
    steps.push({
      awaits: false,
      run(value, context) {
        for (const check of checks) check(value, context)
        return value
      },
    })
    labels.push({ stage: 'validate', keyword: validators.map((validator) => validator.name).join(', ') })
  }
  for (const record of stage('finalize')) add(record, compile<Step>(record))
  return { locate, located, readsAt, steps, labels }
}

/** A descriptor's diagnostics (stage `diagnostic`), run when MAP receives it; undefined when it has none. */
export function compileDiagnostics(descriptor: Record<string, unknown>, cx: CompileContext, provenance: Provenance): Print | undefined {
  const prints: Print[] = []
  for (const record of stage('diagnostic')) {
    const print = record.compile?.(descriptor, cx, provenance) as Print | null | undefined
    if (print !== null && print !== undefined) prints.push(print)
  }
  if (prints.length <= 1) return prints[0]
  return (context) => {
    for (const print of prints) print(context)
  }
}
