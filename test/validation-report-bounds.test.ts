// Validation reports are bounded (issue 30; docs/engine.md §6.2 "Bounds"): a large descriptor is
// summarized instead of echoed, so nested descriptors never repeat their subtree; a report lists
// at most 1,000 diagnostics and 256 KiB of them, counting the rest (`truncated`, `omitted`); an
// example's differences are capped and counted, however long the arrays compared (no spread:
// 200,000 extra entries once overflowed the stack). The HTTP report carries the new members.
import t from 'tap'
import { boundReport, differences, Mapper, REPORT_LIMITS, validate, type ValidationReport } from '../engine/index.js'
import { Sizer } from '../engine/validation/bounds.js'
import { buildServer } from '../server.js'

const SILENT = { logging: { level: 'silent' } } as const
const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value))

/** `depth` nested switches (each with a bad operand, so each level is reported) around a constant of `size` characters. */
function nestedSwitches(depth: number, size: number): Record<string, unknown> {
  let descriptor: unknown = { constant: 'x'.repeat(size) }
  for (let i = 0; i < depth; i++) descriptor = { switch: { source: 5, cases: { a: descriptor } } }
  return { mapping: { '/a': descriptor } }
}

t.test('32 nested switches around a 900 KB constant: every level reported, the subtree never repeated', async (t) => {
  const document = nestedSwitches(32, 900_000)
  for (const report of [validate(document), new Mapper().validate(document)]) {
    t.equal(report.valid, false)
    t.equal(report.errors.length, 64, 'two findings a level, all listed')
    t.ok(bytes(report) < 64 * 1024, `the report is ${bytes(report)} bytes (the document is ${bytes(document)})`)
    const outer = report.errors[0]!
    t.equal(outer.pointer, '/mapping/~1a/switch')
    const switchOperand = (document.mapping as Record<string, Record<string, unknown>>)['/a']!.switch
    t.same(outer.descriptor, { $omitted: 'object', bytes: bytes(switchOperand) }, 'summarized: its type and the bytes of its JSON text')
    t.equal(report.errors[1]!.descriptor, 5, 'a small descriptor is echoed as it is')
    t.equal(report.truncated, undefined)
  }
})

t.test('other shapes: a wide document of large siblings, a large string, deep arrays', async (t) => {
  const big = 'y'.repeat(300_000)
  const wide: Record<string, unknown> = {}
  for (let i = 0; i < 20; i++) wide[`/w${i}`] = { constant: big, type: 5 }
  const report = validate({ mapping: wide })
  t.equal(report.errors.length, 20)
  t.ok(bytes(report) < 32 * 1024, `${bytes(report)} bytes for 20 diagnostics beside 300 KB constants`)
  const long = validate({ mapping: { '/s': `#${'z'.repeat(100_000)}` } })
  t.same(long.errors[0]!.descriptor, { $omitted: 'string', bytes: 100_003 })
  let nested: unknown = { constant: big }
  for (let i = 0; i < 40; i++) nested = { all: [nested, { type: 5 }] }
  const deep = new Mapper().validate({ mapping: { '/d': nested } })
  t.ok(bytes(deep) < 64 * 1024, `${bytes(deep)} bytes for 40 nested combinators`)
})

t.test('past 1,000 diagnostics or 256 KiB the rest are counted: truncated, omitted, still invalid', async (t) => {
  const pairings: Record<string, unknown> = {}
  for (let i = 0; i < 5000; i++) pairings[`/k${i}`] = `nope${i}`
  const many = new Mapper().validate({ mapping: pairings })
  t.equal(many.valid, false)
  t.equal(many.errors.length, REPORT_LIMITS.diagnostics)
  t.equal(many.truncated, true)
  t.equal(many.omitted, 4000)
  t.ok(bytes(many) <= REPORT_LIMITS.bytes + 1024)

  // Diagnostics of about 2 KB each reach the byte bound first.
  const large: Record<string, unknown> = {}
  for (let i = 0; i < 400; i++) large[`/k${i}`] = { constant: 1, type: 'q'.repeat(1000 + (i % 7)) }
  const heavy = validate({ mapping: large })
  t.equal(heavy.truncated, true)
  t.ok(heavy.errors.length < 400)
  t.equal(heavy.errors.length + heavy.omitted!, 400, 'every error is listed or counted')
  t.ok(bytes(heavy) <= REPORT_LIMITS.bytes + 1024, `${bytes(heavy)} bytes`)

  // A long message is cut.
  const named = new Mapper().validate({ mapping: { '/n': 'n'.repeat(5000) } })
  t.equal(named.errors[0]!.message.length, REPORT_LIMITS.messageChars)
  t.ok(named.errors[0]!.message.endsWith('…'))
})

t.test('boundReport: idempotent, keeps valid, and bounds what a host appends', async (t) => {
  const diagnostic = { rule: 'X-1', message: 'm', pointer: '', descriptor: { big: 'b'.repeat(10_000) } }
  const report: ValidationReport = { valid: false, errors: Array.from({ length: 1500 }, () => diagnostic), warnings: [{ ...diagnostic, rule: 'W-1' }] }
  const once = boundReport(report)
  t.equal(once.errors.length, 1000)
  t.equal(once.warnings.length, 0)
  t.equal(once.omitted, 501)
  t.same(once.errors[0]!.descriptor, { $omitted: 'object', bytes: bytes(diagnostic.descriptor) })
  t.same(boundReport(once), once, 'bounding a bounded report changes nothing')
  const clean: ValidationReport = { valid: true, errors: [], warnings: [] }
  t.equal(boundReport(clean).truncated, undefined)
})

t.test('Sizer: the bytes of JSON text, escapes and UTF-8 included, each object measured once', async (t) => {
  const sizer = new Sizer()
  for (const value of ['plain', 'quote " and \\ backslash', 'tab\tnewline\n\u0001', 'é ü', '日本', '😀 pair', '\ud800 lone', { a: [1, 2.5, -3e21, null, true, false], 'k"ey': { nested: 'ö' }, skip: undefined }, [], {}, [[[]]]]) {
    t.equal(sizer.size(value), bytes(value), JSON.stringify(value))
  }
})

t.test('differences: 200,000 extra entries are counted, the list capped, no stack overflow', async (t) => {
  const expected = { list: Array.from({ length: 200_001 }, (_, i) => i) }
  const actual = { list: [0] }
  const found = differences(expected, actual)
  t.equal(found.length, 100)
  t.same(found[0], { pointer: '/list/1', expected: 1 })
  const mapper = new Mapper()
  const document = { mapping: { '/list': { constant: [0] } }, examples: [{ input: {}, output: expected }] }
  const [result] = await mapper.examples(document)
  t.equal(result!.pass, false)
  t.equal(result!.differenceCount, 200_000)
  t.equal(result!.differences.length, 100)
  t.match(result!.error, undefined)
})

t.test('POST /validate: the bounded report over HTTP, its new members serialized', async (t) => {
  const app = await buildServer({ options: { ...SILENT, map: { explicit: true } } })
  t.teardown(() => app.close())
  const post = async (mapping: unknown): Promise<{ status: number; body: string; data: ValidationReport }> => {
    const response = await app.inject({ method: 'POST', url: '/validate', payload: { mapping } })
    return { status: response.statusCode, body: response.body, data: response.json() as ValidationReport }
  }
  const amplified = await post(nestedSwitches(32, 900_000))
  t.equal(amplified.status, 200)
  t.ok(amplified.body.length < 64 * 1024, `${amplified.body.length} bytes answered`)
  const outer = (nestedSwitches(32, 900_000).mapping as Record<string, Record<string, unknown>>)['/a']!.switch
  t.same(amplified.data.errors[0]!.descriptor, { $omitted: 'object', bytes: bytes(outer) })

  const pairings: Record<string, unknown> = {}
  for (let i = 0; i < 3000; i++) pairings[`/k${i}`] = `nope${i}`
  const many = await post({ mapping: pairings })
  t.equal(many.status, 200)
  t.equal(many.data.valid, false)
  t.equal(many.data.truncated, true)
  t.equal(many.data.omitted, 2000)

  // An example 200,000 entries longer than the evaluation: EXAMPLE-1 with 100 differences, not a 500.
  const expected = { list: new Array<number>(200_001).fill(0) }
  const example = await post({ mapping: { '/list': { constant: [0] } }, examples: [{ input: {}, output: expected }] })
  t.equal(example.status, 200)
  t.equal(example.data.valid, false)
  const failing = example.data.errors[0]!
  t.equal(failing.rule, 'EXAMPLE-1')
  t.equal(failing.differences!.length, 100)
  t.equal(failing.omittedDifferences, 199_900)
  t.match(failing.message, /and 199999 more differences/)
  t.same(failing.descriptor, { $omitted: 'object', bytes: bytes({ input: {}, output: expected }) })
  t.ok(example.body.length < 64 * 1024)
})
