// engine/suggest.ts, the one "did you mean" rule of KW-2, option errors and the CLI: the
// optimal-string-alignment distance (insertion, deletion, substitution, adjacent transposition),
// the distance allowed (one edit, two from eight characters), and only the nearest candidates.
import t from 'tap'
import { allowedDistance, closestNames, didYouMean, editDistance } from '../engine/suggest.js'

t.test('editDistance counts each kind of edit once, and stops past its limit', async (t) => {
  const cases: Array<[string, string, number]> = [
    ['source', 'source', 0],
    ['sourc', 'source', 1], // deletion
    ['sourcee', 'source', 1], // insertion
    ['sourse', 'source', 1], // substitution
    ['soruce', 'source', 1], // transposition of adjacent letters
    ['eahc', 'each', 1],
    ['', 'abc', 3],
    ['ca', 'abc', 3], // optimal string alignment: no edit of a transposed pair
    ['kitten', 'sitting', 3],
  ]
  for (const [a, b, d] of cases) {
    t.equal(editDistance(a, b), d, `${a} → ${b}`)
    t.equal(editDistance(b, a), d, `${b} → ${a}`)
  }
  t.equal(editDistance('kitten', 'sitting', 1), 2, 'past the limit: limit + 1')
  t.equal(editDistance('a', 'a'.repeat(10_000), 2), 3, 'a length difference past the limit costs nothing')
})

t.test('allowedDistance: one edit, two for a name of eight characters or more', async (t) => {
  t.equal(allowedDistance('source'), 1)
  t.equal(allowedDistance('maxLengt'), 2)
})

t.test('closestNames and didYouMean: the nearest only, in the order given; none when far', async (t) => {
  const names = ['source', 'target', 'maximum', 'minimum', 'input', 'output']
  t.same(closestNames('sourc', names), ['source'])
  t.same(closestNames('SOURCE', names), ['source'], 'case alone is nearest of all')
  t.same(closestNames('source', names), [], 'a valid name suggests nothing')
  t.same(closestNames('imput', names), ['input'])
  t.same(closestNames('maximun', names), ['maximum'], 'minimum is three edits away')
  t.same(closestNames('mixamum', ['maximum', 'minimum']), [], 'two edits from either in a seven-letter name: too far')
  t.same(closestNames('maxLenghtt', ['maxLength', 'minLength']), ['maxLength'], 'two edits in a ten-letter name: near enough')
  t.same(closestNames('wibble', names), [])
  t.same(closestNames('ab', ['abc', 'abd', 'xyz']), ['abc', 'abd'], 'two at the same distance: both')
  t.equal(didYouMean('sourc', names), ' (did you mean source?)')
  t.equal(didYouMean('ab', ['abc', 'abd', 'abe']), ' (did you mean abc, abd or abe?)')
  t.equal(didYouMean('inclde', ['include', 'exclude'], (name) => `--${name}`), ' (did you mean --include?)')
  t.equal(didYouMean('wibble', names), '')
})
