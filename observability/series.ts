// Labelled counters and histograms for the request path. prom-client's own `inc` and `observe`
// validate and hash the label object on every call (a sorted key string, a closure, an object per
// observation): about a tenth of a registered /map's time went there. Here a series is found once
// per distinct label values, through one small map per label, and updated with plain arithmetic;
// prom-client's Registry still prints it (a registered metric is any object with a name, a type and
// `get()` in prom-client's MetricObject form), so the exposition is the one prom-client writes.
import type { Registry } from 'prom-client'

type Labels = Record<string, string>

/** A label's value; a number (an HTTP status) is printed as its decimal string. */
export type LabelValue = string | number

interface Definition<L extends string> {
  readonly name: string
  readonly help: string
  readonly labelNames: readonly L[]
  readonly registers: readonly Registry[]
}

/** One value of the MetricObject form prom-client's Registry prints. */
interface Value {
  readonly labels: Labels
  readonly value: number
  readonly metricName?: string
}

/** Series by label values, one Map level per label, so a lookup builds no key. */
class SeriesIndex<S> {
  readonly #root = new Map<LabelValue, unknown>()
  all: Array<{ labels: Labels; series: S }> = []

  constructor(
    private readonly labelNames: readonly string[],
    private readonly create: () => S
  ) {}

  /** The series of these label values, in `labelNames` order (no array per lookup: at most three labels). */
  find(a: LabelValue, b?: LabelValue, c?: LabelValue): S {
    const depth = this.labelNames.length
    let level: Map<LabelValue, unknown> = this.#root
    if (depth > 1) level = this.#below(level, a)
    if (depth > 2) level = this.#below(level, b!)
    const last = depth === 1 ? a : depth === 2 ? b! : c!
    let series = level.get(last) as S | undefined
    if (series === undefined) {
      series = this.create()
      level.set(last, series)
      const values = [a, b, c]
      this.all.push({ labels: Object.fromEntries(this.labelNames.map((name, i) => [name, String(values[i])])), series })
    }
    return series
  }

  /** No series at all (as prom-client's reset leaves a metric). */
  clear(): void {
    this.#root.clear()
    this.all = []
  }

  #below(level: Map<LabelValue, unknown>, value: LabelValue): Map<LabelValue, unknown> {
    let next = level.get(value) as Map<LabelValue, unknown> | undefined
    if (next === undefined) level.set(value, (next = new Map()))
    return next
  }
}

abstract class FastMetric<L extends string, S> {
  readonly name: string
  readonly help: string
  abstract readonly type: 'counter' | 'histogram'
  protected readonly index: SeriesIndex<S>

  constructor(definition: Definition<L>, create: () => S) {
    if (definition.labelNames.length < 1 || definition.labelNames.length > 3) throw new Error(`${definition.name}: a fast series has one to three labels`)
    this.name = definition.name
    this.help = definition.help
    this.index = new SeriesIndex(definition.labelNames, create)
    for (const registry of definition.registers) registry.registerMetric(this as never)
  }

  protected abstract values(): Value[]

  /** prom-client's MetricObject of this metric (what its Registry prints). */
  get(): { name: string; help: string; type: string; values: Value[]; aggregator: 'sum' } {
    return { name: this.name, help: this.help, type: this.type, values: this.values(), aggregator: 'sum' }
  }

  /** No series left (prom-client's Registry.resetMetrics). */
  reset(): void {
    this.index.clear()
  }
}

/** A counter: `counter.series(...labelValues).value += n`. */
export class FastCounter<L extends string> extends FastMetric<L, { value: number }> {
  readonly type = 'counter'

  constructor(definition: Definition<L>) {
    super(definition, () => ({ value: 0 }))
  }

  /** The series of these label values (in `labelNames` order): add to its `value`. */
  series(a: LabelValue, b?: LabelValue, c?: LabelValue): { value: number } {
    return this.index.find(a, b, c)
  }

  protected values(): Value[] {
    return this.index.all.map(({ labels, series }) => ({ labels, value: series.value }))
  }
}

export interface Buckets {
  /** Observations at or below each bound (not cumulative; the exposition sums them). */
  readonly counts: number[]
  sum: number
  count: number
}

/** A histogram with fixed upper bounds. */
export class FastHistogram<L extends string> extends FastMetric<L, Buckets> {
  readonly type = 'histogram'
  readonly #bounds: readonly number[]

  constructor(definition: Definition<L> & { readonly buckets: readonly number[] }) {
    const bounds = [...definition.buckets].sort((a, b) => a - b)
    super(definition, () => ({ counts: bounds.map(() => 0), sum: 0, count: 0 }))
    this.#bounds = bounds
  }

  /** The series of these label values, in `labelNames` order. */
  series(a: LabelValue, b?: LabelValue, c?: LabelValue): Buckets {
    return this.index.find(a, b, c)
  }

  /** Record `value` in `series` (one of this histogram's). */
  observe(series: Buckets, value: number): void {
    const bounds = this.#bounds
    let i = 0
    while (i < bounds.length && value > bounds[i]!) i++
    if (i < bounds.length) series.counts[i]!++
    series.sum += value
    series.count++
  }

  protected values(): Value[] {
    const out: Value[] = []
    const bucket = `${this.name}_bucket`
    for (const { labels, series } of this.index.all) {
      let cumulative = 0
      this.#bounds.forEach((bound, i) => {
        cumulative += series.counts[i]!
        out.push({ labels: { le: String(bound), ...labels }, value: cumulative, metricName: bucket })
      })
      out.push({ labels: { le: '+Inf', ...labels }, value: series.count, metricName: bucket })
      out.push({ labels, value: series.sum, metricName: `${this.name}_sum` })
      out.push({ labels, value: series.count, metricName: `${this.name}_count` })
    }
    return out
  }
}
