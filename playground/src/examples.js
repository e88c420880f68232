// The examples panel: a mapping's `examples` run through POST /map and judged as
// `mapper-service test` judges them (engine/examples.ts, whose `differences` is bundled here): the
// envelope without `valid` and `errors` must deep-equal `output`, `valid` be as stated (default
// true) and `errors`, when stated, deep-equal the envelope's. The expected and actual envelopes
// are shown side by side, the lines where they differ marked.
import { differences } from '../../engine/examples.ts'
import { idOf } from '../../engine/document-id.ts'
import { jsonLines, within } from './json-lines.js'

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)
const escapeToken = (token) => String(token).replace(/~/g, '~0').replace(/\//g, '~1')

/**
 * The examples of a document, each with what POST /map evaluates for it (engine/examples.ts
 * `exampleSets`): a registered mapping runs by its id; a document being edited runs whole, a
 * compound member as the entry of its document (the last member), a document with a `$id`
 * flattened as registration would.
 * @returns {Array<{ pointer: string, index: number, example: any, target: unknown, mapping?: string }>}
 */
export function examplesOf(document, registeredId) {
  if (!isObject(document)) return []
  const found = []
  const add = (pointer, mapping, siblings, key) => {
    if (!Array.isArray(mapping.examples)) return
    const id = idOf(mapping)
    let target
    if (registeredId !== undefined) {
      target = registeredId
    } else {
      const others = {}
      for (const [name, member] of Object.entries(siblings)) if (name !== key) others[name] = member
      target = id !== undefined || Object.keys(others).length > 0 ? { mappings: { ...others, [key]: mapping } } : mapping
    }
    mapping.examples.forEach((example, index) => found.push({ pointer: `${pointer}/examples/${index}`, index, example, target, mapping: id }))
  }
  if (document.mappings) {
    if (isObject(document.mappings)) {
      for (const [key, member] of Object.entries(document.mappings)) if (isObject(member)) add(`/mappings/${escapeToken(key)}`, member, document.mappings, key)
    }
  } else {
    add('', document, {}, 'entry')
  }
  return found
}

/** What an example expects: `{ ...output, valid }`, with `errors` when it states them. */
export function expectedOf(example) {
  const expected = { ...(isObject(example.output) ? example.output : {}), valid: example.valid ?? true }
  if (example.errors !== undefined) expected.errors = example.errors
  return expected
}

/** The envelope as compared: without `errors` unless the example states them, as JSON prints it. */
export function actualOf(example, envelope) {
  const compared = { ...envelope }
  delete compared.explain
  if (example.errors === undefined) delete compared.errors
  return JSON.parse(JSON.stringify(compared))
}

/** The result of one example: `{ pass, expected, actual?, differences, error? }`. */
export function judge(example, envelope) {
  const expected = JSON.parse(JSON.stringify(expectedOf(example)))
  const actual = actualOf(example, envelope)
  const found = differences(expected, actual)
  return { pass: found.length === 0, expected, actual, differences: found }
}

const valueText = (value) => {
  const text = JSON.stringify(value)
  return text.length > 80 ? `${text.slice(0, 79)}…` : text
}

/** One line for a difference, as `mapper-service test` prints it: `/a: expected 1, got "1"`. */
export function describeDifference(difference) {
  const where = difference.pointer === '' ? '(envelope)' : difference.pointer
  if (!('actual' in difference)) return `${where}: expected ${valueText(difference.expected)}, but it is absent`
  if (!('expected' in difference)) return `${where}: not expected, got ${valueText(difference.actual)}`
  return `${where}: expected ${valueText(difference.expected)}, got ${valueText(difference.actual)}`
}

/**
 * A value printed as JSON, one line per element, the lines inside `marked` pointers marked (a
 * class, and a `≠` in the margin so the mark does not rest on colour alone).
 */
export function renderJson(value, marked, label) {
  const pre = document.createElement('pre')
  pre.className = 'json-lines'
  pre.tabIndex = 0
  pre.setAttribute('aria-label', label)
  for (const line of jsonLines(value)) {
    const row = document.createElement('span')
    const hit = marked.some((pointer) => within(line.pointer, pointer))
    row.className = hit ? 'json-line differs' : 'json-line'
    const margin = document.createElement('span')
    margin.className = 'diff-margin'
    margin.textContent = hit ? '≠' : ' '
    margin.setAttribute('aria-hidden', 'true')
    row.append(margin, line.text)
    if (hit) row.title = 'differs'
    row.dataset.pointer = line.pointer
    pre.append(row, '\n')
  }
  return pre
}
