// jsonMemberText (engine/values.ts): the text of one member of a JSON object as it was written,
// which keys the explicit-document cache by what the caller sent. Checked against JSON.parse on
// generated texts: any JSON values, any whitespace between tokens, names repeated or escaped.
import fc from 'fast-check'
import t from 'tap'
import { jsonMemberText } from '../engine/values.js'

/** JSON text of `value` with arbitrary whitespace between tokens (never inside strings). */
function spaced(value: unknown, space: () => string): string {
  if (Array.isArray(value)) return `[${space()}${value.map((item) => spaced(item, space)).join(`${space()},${space()}`)}${space()}]`
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).map(([key, member]) => `${JSON.stringify(key)}${space()}:${space()}${spaced(member, space)}`)
    return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`
  }
  return JSON.stringify(value)
}

/** A member name as JSON text, plain or with every character escaped as \uXXXX. */
const nameText = (name: string, escaped: boolean): string =>
  escaped ? `"${[...name].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"` : JSON.stringify(name)

const tricky = fc.constantFrom('mapping', 'input', '"mapping"', 'map\\ping', 'a}b', 'c]d', 'e,f', 'g:h', '{', '"', '\\')
const json = fc.jsonValue({ maxDepth: 4 }).map((value) => value as unknown)
const anyValue = fc.oneof(json, fc.dictionary(tricky, json, { maxKeys: 4 }), fc.array(tricky))

t.test('the member as written parses to the member JSON.parse gives, for any members and spacing', async (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.oneof(tricky, fc.string()), anyValue, fc.boolean()), { maxLength: 6 }),
      fc.array(fc.constantFrom('', ' ', '\n', '\t', '\r\n  '), { minLength: 1, maxLength: 8 }),
      fc.nat(),
      (members, spaces, seed) => {
        let turn = seed
        const space = (): string => spaces[turn++ % spaces.length]!
        const text = `${space()}{${space()}${members.map(([name, value, escaped]) => `${nameText(name, escaped)}${space()}:${space()}${spaced(value, space)}`).join(`${space()},${space()}`)}${space()}}${space()}`
        const parsed = JSON.parse(text) as Record<string, unknown>
        for (const name of ['mapping', 'input', 'a}b', '"mapping"']) {
          const member = jsonMemberText(text, name)
          if (!Object.hasOwn(parsed, name)) {
            if (member !== undefined) throw new Error(`${name}: found ${member} in ${text}`)
            continue
          }
          if (member === undefined) throw new Error(`${name}: not found in ${text}`)
          t.strictSame(JSON.parse(member), parsed[name])
          if (member !== member.trim()) throw new Error(`${name}: ${JSON.stringify(member)} is not trimmed`)
        }
      }
    ),
    { numRuns: 1000 }
  )
})

t.test('the text as written, not a normalised copy: spacing inside the member is kept', async (t) => {
  const text = '{ "input" : {"mapping": 1},\n  "mapping" :  { "mapping" : { "/a" : "/b" } }  }'
  t.equal(jsonMemberText(text, 'mapping'), '{ "mapping" : { "/a" : "/b" } }')
  t.equal(jsonMemberText(text, 'input'), '{"mapping": 1}')
  t.equal(jsonMemberText('{"mapping":1,"mapping":-0}', 'mapping'), '-0', 'the last of a repeated name, as JSON.parse keeps it')
  t.equal(jsonMemberText('{"\\u006dapping":"x"}', 'mapping'), '"x"', 'an escaped name')
})

t.test('no member: not an object, or no such name at the top level', async (t) => {
  t.equal(jsonMemberText('[{"mapping":1}]', 'mapping'), undefined)
  t.equal(jsonMemberText('"mapping"', 'mapping'), undefined)
  t.equal(jsonMemberText('{}', 'mapping'), undefined)
  t.equal(jsonMemberText('{"input":{"mapping":1}}', 'mapping'), undefined, 'a nested member is not the top-level one')
  t.equal(jsonMemberText('{"input":"\\"mapping\\":1"}', 'mapping'), undefined, 'nor is text inside a string')
})
