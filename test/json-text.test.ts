// service/json-text.ts against JSON.parse and sources/json-syntax.ts: for texts made by mutating a
// JSON text (characters deleted, inserted, replaced; a seeded generator, so every run checks the
// same texts), the strict scan accepts exactly what JSON.parse accepts, finds each top-level member
// as JSON.parse reads it, refuses where jsonSyntaxProblem says the text stops being JSON, and
// says the same whatever slices it is run in; the count of values is the same run whole or sliced.
import t from 'tap'
import { jsonSyntaxProblem } from '../sources/json-syntax.js'
import { JsonCount, JsonScan, JsonText, largeBody, parseJsonText, scanJson, whereJsonStops } from '../service/json-text.js'

/** A seeded generator of numbers in [0, 1) (mulberry32). */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const BASE = JSON.stringify({ mapping: 'echo', input: [{ a: 1, b: [true, null, 'x\n\u1234 "q" \\'], c: -1.5e10, d: 0.25 }, {}, [], ''], explain: false }, null, 1)
const ALPHABET = '{}[],:"\\ \n0123456789-+.eEtruefalsnu\u0001'

function mutants(count: number): string[] {
  const next = seeded(30)
  const texts: string[] = []
  for (let n = 0; n < count; n++) {
    const chars = [...BASE]
    for (let k = 1 + Math.floor(next() * 3); k > 0; k--) {
      const at = Math.floor(next() * chars.length)
      const char = ALPHABET[Math.floor(next() * ALPHABET.length)]!
      const op = next()
      if (op < 0.33) chars.splice(at, 1)
      else if (op < 0.66) chars.splice(at, 0, char)
      else chars[at] = char
    }
    texts.push(chars.join(''))
  }
  return texts
}

t.test('the strict scan accepts what JSON.parse accepts, and refuses where jsonSyntaxProblem says', async (t) => {
  let accepted = 0
  let checked = 0
  for (const text of mutants(20_000)) {
    let parsed: unknown
    let ok = true
    try {
      parsed = JSON.parse(text)
    } catch {
      ok = false
    }
    const scanned = scanJson(text, 512)
    if ((scanned.kind === 'json') !== ok) {
      t.fail(`${JSON.stringify(text)}: JSON.parse ${ok ? 'accepts' : 'refuses'} it, the scan says ${scanned.kind}`)
      continue
    }
    checked++
    if (scanned.kind === 'invalid') {
      const problem = jsonSyntaxProblem(text)!
      const expected = ` (line ${problem.line}, column ${problem.column}): ${problem.description}`
      if (whereJsonStops(text, scanned.at) !== expected) t.fail(`${JSON.stringify(text)}: ${whereJsonStops(text, scanned.at)} where ${expected}`)
    } else if (scanned.kind === 'json' && scanned.members !== undefined) {
      accepted++
      const rebuilt: Record<string, unknown> = {}
      for (const { name, value } of scanned.members) rebuilt[JSON.parse(name) as string] = JSON.parse(value)
      if (JSON.stringify(rebuilt) !== JSON.stringify(parsed)) t.fail(`${JSON.stringify(text)}: members read otherwise than JSON.parse`)
    }
  }
  t.equal(checked, 20_000, 'every text judged alike')
  t.ok(accepted > 100, `some texts stay JSON objects (${accepted})`)
})

t.test('sliced, the scan and the count say what they say whole', async (t) => {
  const next = seeded(7)
  let differing = 0
  for (const text of mutants(5_000)) {
    const slice = 1 + Math.floor(next() * 9)
    const scan = new JsonScan(text, 512)
    let sliced
    do sliced = scan.run(slice)
    while (sliced === undefined)
    if (JSON.stringify(sliced) !== JSON.stringify(scanJson(text, 512))) differing++
    const count = new JsonCount(text, 512)
    let counted
    do counted = count.run(slice)
    while (counted === undefined)
    if (counted !== new JsonCount(text, 512).run(text.length)) differing++
  }
  t.equal(differing, 0)
})

t.test('long texts: a slice of several stretches, or of a part of one, says what the text says whole', async (t) => {
  // Longer than a stretch (the 1,024 characters a call of the scan's loop reads), with strings and
  // numbers that run across stretches and slices: each text run in slices of 1 to 5,000 characters.
  const next = seeded(11)
  const long = (n: number): string =>
    JSON.stringify({
      mapping: 'echo',
      input: Array.from({ length: n }, (_, i) => (i % 3 === 0 ? { s: 'x'.repeat(i % 2_000), e: '\\"\u0041'.repeat(i % 7) } : i % 3 === 1 ? [i * 1.5e-3, -i, null, true] : `${'"'.repeat(i % 4)}${'[{'.repeat(i % 5)}`)),
      explain: false,
    })
  let checked = 0
  for (const n of [40, 300, 1_200]) {
    const text = long(n)
    for (const broken of [text, text.slice(0, -1), `${text.slice(0, text.length >> 1)}]${text.slice(text.length >> 1)}`]) {
      const whole = scanJson(broken, 512)
      const counted = new JsonCount(broken, 512).run(broken.length)
      for (let round = 0; round < 4; round++) {
        const scan = new JsonScan(broken, 512)
        const count = new JsonCount(broken, 512)
        let sliced
        do sliced = scan.run(1 + Math.floor(next() * 5_000))
        while (sliced === undefined)
        let countedSliced
        do countedSliced = count.run(1 + Math.floor(next() * 5_000))
        while (countedSliced === undefined)
        t.strictSame(sliced, whole, `${broken.length} characters, round ${round}: the scan`)
        t.equal(countedSliced, counted, `${broken.length} characters, round ${round}: the count`)
        checked++
      }
    }
    t.equal(scanJson(text, 512).kind, 'json', `${text.length} characters of JSON are JSON`)
    t.equal(scanJson(text.slice(0, -1), 512).kind, 'invalid', 'and cut short, they are not')
  }
  t.equal(checked, 36)
})

t.test('depth, the count of values and strings that hide brackets', async (t) => {
  t.equal(scanJson(`${'['.repeat(4)}${']'.repeat(4)}`, 3).kind, 'deep')
  t.equal(scanJson(`${'['.repeat(3)}${']'.repeat(3)}`, 3).kind, 'json')
  t.equal(new JsonCount('[[[[]]]]', 3).run(100), -1)
  t.equal(new JsonCount('{"a":"x,y[{","b":"\\\\"}', 3).run(100), 2, 'brackets and commas in strings are not counted')
  t.equal(new JsonCount('{"a":"\\",[["}', 3).run(100), 1, 'an escaped quote does not end a string')
  t.equal(new JsonCount(JSON.stringify(Array.from({ length: 1000 }, () => ({}))), 512).run(1e9), 2000, 'each object and each comma')
})

t.test('a large body: scalars parsed, objects and arrays kept as text, poisoned names refused', async (t) => {
  const scanned = scanJson('{"mapping":"echo","input":[1,{"a":2}],"explain":true,"doc":{"x":1}}', 512)
  if (scanned.kind !== 'json') throw new Error('not JSON')
  const body = largeBody(scanned.members) as Record<string, unknown>
  t.equal(body.mapping, 'echo')
  t.equal(body.explain, true)
  t.ok(body.input instanceof JsonText)
  t.strictSame((body.input as JsonText).parse(), [1, { a: 2 }])
  t.strictSame((body.doc as JsonText).parse(), { x: 1 })
  const poisoned = scanJson('{"__proto__":{"x":1}}', 512)
  t.throws(() => largeBody(poisoned.kind === 'json' ? poisoned.members : undefined), { code: 'BADREQUEST' })
  t.throws(() => parseJsonText('[{"\\u005f_proto__":1}]'), { code: 'BADREQUEST' }, 'hidden behind an escape')
  t.strictSame(largeBody(undefined), [], 'a top-level array: no route takes it')
})
