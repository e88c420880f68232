// The value pipeline of a keyword object (language.md §8), built by walking the keyword records stage
// by stage: locate (the first locate keyword present), dispatch, the plugins named in the
// descriptor, shape, validate (all validators as one step, each reporting at most one error), and
// finalize. A stage's order is the order of the records in keywords/index.ts.
import type { Provenance } from '../diagnostics.js'
import { _, join, type Code, type CodeGen } from '../codegen/code.js'
import { emitInline } from '../codegen/inline.js'
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
  /** The keywords that take part, in the order they run (the locate keyword that won first). */
  readonly records: readonly KeywordRecord[]
  /** True when the descriptor names plugins. */
  readonly plugins: boolean
  /** The compiled validators, by record. */
  readonly checks: ReadonlyMap<KeywordRecord, Check>
}

export function compilePipeline(descriptor: Record<string, unknown>, cx: CompileContext, provenance: Provenance, plugins: readonly Step[]): CompiledPipeline {
  const compile = <T>(record: KeywordRecord): T | null => (record.compile?.(descriptor, cx, provenance) ?? null) as T | null
  let locate = PASS_THROUGH
  let located: string | undefined
  let readsAt: KeywordRecord['readsAt']
  const records: KeywordRecord[] = []
  for (const record of stage('locate')) {
    const found = compile<CompiledLocate>(record)
    if (found !== null) {
      locate = found
      located = record.name
      readsAt = record.readsAt
      records.push(record)
      break
    }
  }
  const steps: Step[] = []
  const labels: StepLabel[] = []
  const add = (record: KeywordRecord, step: Step | null): void => {
    if (step === null) return
    steps.push(step)
    labels.push({ stage: record.stage as 'dispatch' | 'shape' | 'finalize', keyword: record.name })
    records.push(record)
  }
  for (const record of stage('dispatch')) add(record, compile<Step>(record))
  for (const step of plugins) steps.push(step)
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
    .map((record): { record: KeywordRecord; name: string; check: Check | null } => ({ record, name: record.name, check: compile<Check>(record) }))
    .filter((validator): validator is { record: KeywordRecord; name: string; check: Check } => validator.check !== null)
  const checks = new Map<KeywordRecord, Check>()
  for (const validator of validators) {
    records.push(validator.record)
    checks.set(validator.record, validator.check)
  }
  if (checks.size > 0) {
    const list = [...checks.values()]
    steps.push({
      awaits: false,
      run(value, context) {
        const run = context.run
        for (const check of list) check(value, run)
        return value
      },
    })
    labels.push({ stage: 'validate', keyword: validators.map((validator) => validator.name).join(', ') })
  }
  for (const record of stage('finalize')) add(record, compile<Step>(record))
  return { locate, located, readsAt, steps, labels, records, plugins: plugins.length > 0, checks }
}

/**
 * The pipeline as generated source (engine/codegen/level.ts): each taking part keyword's inline
 * form in the order its step runs, the value left in `v`, and a call of a validator that has none;
 * with no locate keyword the scope passes through. Undefined when a keyword has no inline form
 * for its operand, or plugins take part (they may be async).
 */
export function pipelineCode(descriptor: Record<string, unknown>, pipeline: CompiledPipeline, gen: CodeGen, provenance: Provenance): Code | undefined {
  if (pipeline.plugins) return undefined
  const parts: Code[] = pipeline.located === undefined ? [_`v = source;\n`] : []
  for (const record of pipeline.records) {
    let part = record.inline === undefined ? undefined : emitInline(record.inline, record.name, descriptor[record.name], gen, provenance)
    // A validator needs nothing but the value and the run: one without an inline form is called.
    const check = pipeline.checks.get(record)
    if (part === undefined && check !== undefined) part = _`${gen.constant(check)}(v, run);\n`
    if (part === undefined) return undefined
    parts.push(part)
  }
  return join(parts)
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
