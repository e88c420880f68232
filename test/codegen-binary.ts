// fast-check's `unit: 'binary'` (any code point but a lone surrogate), built so that its first use
// in a process costs nothing. `fc.string({ unit: 'binary' })` first tokenizes fast-check's list of
// dangerous strings ('__proto__', 'constructor', …) with that unit, whose unmapper builds a reverse
// map of all 1,112,064 code points to do it: 1.5–3.5 s of CPU, once per process. This unit draws
// the same values from the same seed (a natural number below the count of code points, mapped past
// the surrogates, as fast-check's `mapToConstant` of the two ranges does) and shrinks the same
// way, and its unmapper is arithmetic: the dangerous strings are still mixed into the strings drawn.
import fc from 'fast-check'

/** Code points skipped: the surrogates, 0xD800 to 0xDFFF. */
const SURROGATES = 0xe000 - 0xd800

/** One code point, any but a surrogate: `fc.string({ unit: binaryUnit })` draws what `fc.string({ unit: 'binary' })` draws. */
export const binaryUnit: fc.Arbitrary<string> = fc.nat({ max: 0x10ffff - SURROGATES }).map(
  (index) => String.fromCodePoint(index < 0xd800 ? index : index + SURROGATES),
  (value) => {
    const point = typeof value === 'string' ? value.codePointAt(0) : undefined
    if (point === undefined || String.fromCodePoint(point) !== value || (point >= 0xd800 && point < 0xe000)) throw new Error('not one code point of the binary unit')
    return point < 0xd800 ? point : point - SURROGATES
  }
)
