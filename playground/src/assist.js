// Completion and hover docs for the mapping editor, from the language's own schema
// (GET schema/mapping.json, schema.js) and this deployment's names: the keywords valid at the
// cursor with their one-line description, the transformer, initializer and plugin names of
// GET extensions, the registered mapping names of GET mappings where a mapping name is expected,
// and the values an enum allows (`as: string|number|boolean|json`).
import { hoverTooltip } from '@codemirror/view'
import { keyAt, placeAt } from './context.js'
import { parseLoosely } from './places.js'
import { firstSentence } from './schema.js'

/** Members whose value names something registered on this deployment. */
const NAMED = { init: 'initializers', transform: 'transformers', $ref: 'mappings', $extend: 'mappings', mapping: 'mappings', each: 'mappings' }

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)

/** The value at a path of a loosely parsed document. */
function valueAt(document, path) {
  let value = document
  for (const key of path) value = value !== null && typeof value === 'object' ? value[key] : undefined
  return value
}

/** The member a value at `path` belongs to, looking through one list: `transform` for `transform/1`. */
function memberOf(path) {
  const last = path[path.length - 1]
  if (typeof last === 'string') return last
  const before = path[path.length - 2]
  return typeof last === 'number' && typeof before === 'string' ? before : undefined
}

/**
 * @param {object} sources
 * @param {() => import('./schema.js').LanguageSchema | undefined} sources.schema
 * @param {() => { initializers: string[], transformers: string[], plugins: string[] }} sources.extensions
 * @param {() => string[]} sources.mappings registered mapping ids
 * @param {() => 'json' | 'yaml'} sources.format
 */
export function assistance(sources) {
  const complete = (context) => {
    const schema = sources.schema()
    if (schema === undefined) return null
    const word = context.matchBefore(/[\w$.-]*/)
    if (word === null || (word.from === word.to && !context.explicit)) return null
    const format = sources.format()
    const { state } = context
    const place = placeAt(state, context.pos, format)
    const written = parseLoosely(state.doc.toString())
    const before = state.sliceDoc(word.from - 1, word.from)
    const inString = before === '"' || before === "'"
    const after = state.sliceDoc(context.pos, context.pos + 2)
    const options = []
    const seen = new Set()
    const push = (option) => {
      if (seen.has(option.label)) return
      seen.add(option.label)
      options.push(option)
    }

    if (place.role !== 'value') {
      const holder = valueAt(written, place.path)
      const typed = state.sliceDoc(word.from, word.to)
      const present = isObject(holder) ? Object.keys(holder).filter((key) => key !== typed) : []
      const asKey = (name) => {
        if (format === 'yaml') return /^\s*:/.test(after) ? name : `${name}: `
        return inString ? name : `"${name}": `
      }
      for (const { name, description } of schema.keys(place.path, written)) {
        if (present.includes(name)) continue
        push({ label: name, type: 'property', detail: firstSentence(description), info: description || undefined, apply: asKey(name), boost: name.startsWith('$') ? -1 : 0 })
      }
      if (schema.isKeywordObject(place.path, written)) {
        for (const name of sources.extensions().plugins) {
          if (!present.includes(name)) push({ label: name, type: 'function', detail: 'plugin: its options', info: `The registered plugin ${name}: the value is its options.`, apply: asKey(name) })
        }
      }
    }

    if (place.role !== 'key') {
      for (const option of schema.values(place.path, written)) {
        if (typeof option !== 'string' && inString) continue
        const label = typeof option === 'string' ? option : JSON.stringify(option)
        push({ label, type: 'enum', detail: 'allowed value', apply: typeof option === 'string' && format === 'json' && !inString ? JSON.stringify(option) : label })
      }
      const member = memberOf(place.path)
      let names = member !== undefined && Object.hasOwn(NAMED, member) ? NAMED[member] : undefined
      if (names === undefined && schema.takesMappingName(place.path, written)) names = 'mappings'
      if (names !== undefined) {
        const list = names === 'mappings' ? sources.mappings() : sources.extensions()[names]
        const kind = { mappings: 'registered mapping', transformers: 'transformer', initializers: 'initializer' }[names]
        for (const name of list) push({ label: name, type: names === 'mappings' ? 'variable' : 'function', detail: kind, apply: format === 'json' && !inString ? JSON.stringify(name) : name })
      }
    }
    if (options.length === 0) return null
    return { from: word.from, options, validFor: /^[\w$.-]*$/ }
  }

  const hover = hoverTooltip((view, pos) => {
    const schema = sources.schema()
    if (schema === undefined) return null
    const format = sources.format()
    const found = keyAt(view.state, pos, format)
    if (found === null || pos < found.node.from || pos > found.node.to) return null
    const written = parseLoosely(view.state.doc.toString())
    let description = schema.describeKey(found.path, found.key, written)
    if (description === '' && schema.isKeywordObject(found.path, written) && sources.extensions().plugins.includes(found.key)) {
      description = `The registered plugin ${found.key}: the value is its options.`
    }
    if (description === '') return null
    const values = schema.values([...found.path, found.key], written).filter((value) => typeof value === 'string')
    return {
      pos: found.node.from,
      end: found.node.to,
      above: true,
      create() {
        const dom = document.createElement('div')
        dom.className = 'cm-keyword-doc'
        const name = document.createElement('code')
        name.textContent = found.key
        const text = document.createElement('p')
        text.textContent = description
        dom.append(name, text)
        if (values.length > 0) {
          const allowed = document.createElement('p')
          allowed.textContent = `One of: ${values.join(', ')}`
          dom.append(allowed)
        }
        return { dom }
      },
    }
  })

  return { complete, hover }
}
