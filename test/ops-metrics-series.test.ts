// observability/series.ts against prom-client itself: for any sequence of labelled observations, a fast
// counter or histogram prints exactly the exposition prom-client's own Counter and Histogram print,
// and a registry reset zeroes both alike.
import fc from 'fast-check'
import { Counter, Histogram, Registry } from 'prom-client'
import t from 'tap'
import { FastCounter, FastHistogram } from '../observability/series.js'

const BUCKETS = [0.001, 0.01, 0.1, 1, 10]
// Label values a caller could choose (a mapping id): quotes, backslashes, newlines included.
const value = fc.oneof(fc.constantFrom('a', 'b', 'x"y', 'back\\slash', 'new\nline', ''), fc.string({ maxLength: 4 }))
const observation = fc.record({ a: value, b: value, c: fc.integer({ min: 100, max: 599 }), v: fc.oneof(fc.double({ min: 0, max: 20, noNaN: true }), fc.constantFrom(0.001, 0.01, 1, 10)) })

t.test('a fast counter and histogram print what prom-client prints', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(observation, { maxLength: 40 }), fc.boolean(), async (observations, reset) => {
      const theirs = new Registry()
      const ours = new Registry()
      const labelNames = ['method', 'route', 'status'] as const
      const counter = new Counter({ name: 'c_total', help: 'c', labelNames, registers: [theirs] })
      const histogram = new Histogram({ name: 'h_seconds', help: 'h', labelNames, buckets: BUCKETS, registers: [theirs] })
      const twoLabels = new Counter({ name: 'd_total', help: 'd', labelNames: ['mapping', 'result'] as const, registers: [theirs] })
      const fastCounter = new FastCounter({ name: 'c_total', help: 'c', labelNames, registers: [ours] })
      const fastHistogram = new FastHistogram({ name: 'h_seconds', help: 'h', labelNames, buckets: BUCKETS, registers: [ours] })
      const fastTwo = new FastCounter({ name: 'd_total', help: 'd', labelNames: ['mapping', 'result'] as const, registers: [ours] })
      for (const { a, b, c, v } of observations) {
        counter.inc({ method: a, route: b, status: String(c) })
        histogram.observe({ method: a, route: b, status: String(c) }, v)
        twoLabels.inc({ mapping: a, result: b }, 2)
        fastCounter.series(a, b, c).value++
        fastHistogram.observe(fastHistogram.series(a, b, c), v)
        fastTwo.series(a, b).value += 2
      }
      if (reset) {
        theirs.resetMetrics()
        ours.resetMetrics()
      }
      t.equal(await ours.metrics(), await theirs.metrics())
    }),
    { numRuns: 200 }
  )
})

t.test('a fast series takes one to three labels', async (t) => {
  t.throws(() => new FastCounter({ name: 'none', help: 'n', labelNames: [], registers: [] }), /one to three labels/)
  t.throws(() => new FastCounter({ name: 'four', help: 'n', labelNames: ['a', 'b', 'c', 'd'], registers: [] }), /one to three labels/)
})
