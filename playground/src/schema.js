// What the mapping language's own JSON Schema (GET schema/mapping.json) says is valid at a place in
// a document: the keys an object there may have, with their descriptions, and the values a member
// may take (enums, booleans). The schema's conditionals (if/then/else: a compound document, a
// keyword object, a bare pairing map…) are decided on the value the document holds there when the
// condition can be judged, and both branches are kept when it cannot.

/** @typedef {Record<string, any> | boolean} Schema */
/** @typedef {Array<string | number>} Path */

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * Members whose schema says only "an object or a string" but which hold what another definition
 * describes: `each` is "like mapping" (its value is a pairing map, a mapping document or an id).
 */
const SUPPLEMENTS = { each: '#/$defs/pairingValue' }

function typeMatches(type, value) {
  const types = Array.isArray(type) ? type : [type]
  return types.some((name) => {
    switch (name) {
      case 'object': return isObject(value)
      case 'array': return Array.isArray(value)
      case 'string': return typeof value === 'string'
      case 'boolean': return typeof value === 'boolean'
      case 'null': return value === null
      case 'number': return typeof value === 'number'
      case 'integer': return Number.isInteger(value)
      default: return true
    }
  })
}

/**
 * Whether a value meets a condition of the schema (the keywords its conditions use: type, required,
 * properties, not, enum, anyOf, pattern); a keyword outside those does not count against it.
 */
function meets(condition, value) {
  if (condition === true || condition === undefined) return true
  if (condition === false) return false
  if (condition.type !== undefined && !typeMatches(condition.type, value)) return false
  if (Array.isArray(condition.required) && !(isObject(value) && condition.required.every((key) => Object.hasOwn(value, key)))) return false
  if (isObject(condition.properties) && isObject(value)) {
    for (const [key, sub] of Object.entries(condition.properties)) {
      if (Object.hasOwn(value, key) && !meets(sub, value[key])) return false
    }
  }
  if (condition.not !== undefined && meets(condition.not, value)) return false
  if (Array.isArray(condition.enum) && !condition.enum.some((option) => option === value)) return false
  if (Array.isArray(condition.anyOf) && !condition.anyOf.some((sub) => meets(sub, value))) return false
  if (typeof condition.pattern === 'string' && typeof value === 'string') {
    try {
      if (!new RegExp(condition.pattern, 'u').test(value)) return false
    } catch {
      // A pattern this browser cannot compile decides nothing.
    }
  }
  return true
}

export class LanguageSchema {
  /** @param {Record<string, any>} root the authoring schema */
  constructor(root) {
    this.root = root
  }

  resolve(ref) {
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return undefined
    let node = this.root
    for (const token of ref.slice(2).split('/')) node = isObject(node) ? node[token.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined
    return node
  }

  /**
   * The schema objects that apply to a value: the schema itself, what it refers to, the branches
   * of its conditionals that the value takes (both when `value` is unknown), its anyOf/oneOf/allOf.
   */
  expand(schema, value, known = value !== undefined, into = [], depth = 0) {
    if (!isObject(schema) || depth > 32 || into.includes(schema)) return into
    into.push(schema)
    if (typeof schema.$ref === 'string') this.expand(this.resolve(schema.$ref), value, known, into, depth + 1)
    if (schema.if !== undefined) {
      const verdict = known ? meets(schema.if, value) : undefined
      if (verdict !== false && schema.then !== undefined) this.expand(schema.then, value, known, into, depth + 1)
      if (verdict !== true && schema.else !== undefined) this.expand(schema.else, value, known, into, depth + 1)
    }
    for (const list of [schema.anyOf, schema.oneOf, schema.allOf]) {
      if (Array.isArray(list)) for (const sub of list) this.expand(sub, value, known, into, depth + 1)
    }
    return into
  }

  /** The schemas of a member (or an element) of a value the given schemas apply to. */
  child(schemas, key, value) {
    const next = []
    for (const schema of schemas) {
      let sub
      if (typeof key === 'number') {
        sub = Array.isArray(schema.prefixItems) && key < schema.prefixItems.length ? schema.prefixItems[key] : schema.items
      } else if (isObject(schema.properties) && Object.hasOwn(schema.properties, key)) {
        sub = schema.properties[key]
        if (Object.hasOwn(SUPPLEMENTS, key)) this.expand(this.resolve(SUPPLEMENTS[key]), value, value !== undefined, next)
      } else if (isObject(schema.additionalProperties)) {
        sub = schema.additionalProperties
      }
      if (sub !== undefined) this.expand(sub, value, value !== undefined, next)
    }
    return next
  }

  /**
   * The schemas that apply at a path of a document. `document` is the document as far as it parses
   * (what decides the conditionals); `asObject` judges the value at the end of the path as an
   * object being written (a plain word typed where keys go reads as a string until its colon).
   */
  at(path, document, asObject = false) {
    let value = document
    const last = (v) => (asObject && !isObject(v) ? {} : v)
    let schemas = this.expand(this.root, path.length === 0 ? last(value) : value)
    for (let i = 0; i < path.length; i++) {
      const key = path[i]
      value = value !== null && typeof value === 'object' ? value[key] : undefined
      schemas = this.child(schemas, key, i === path.length - 1 ? last(value) : value)
    }
    return schemas
  }

  /** The keys an object at `path` may have: `{ name, description }`, in the schema's order. */
  keys(path, document) {
    const found = new Map()
    for (const schema of this.at(path, document, true)) {
      if (!isObject(schema.properties)) continue
      for (const [name, sub] of Object.entries(schema.properties)) {
        const description = describe(sub, this)
        const known = found.get(name)
        if (known === undefined || (known.description === '' && description !== '')) found.set(name, { name, description })
      }
    }
    return [...found.values()]
  }

  /** Whether the object at `path` is a keyword object (its keys outside the catalogue are plugins' options). */
  isKeywordObject(path, document) {
    return this.at(path, document, true).some((schema) => isObject(schema.properties) && Object.hasOwn(schema.properties, 'source') && Object.hasOwn(schema.properties, 'as'))
  }

  /** The fixed values a member at `path` may take: enums, then true and false for a boolean. */
  values(path, document) {
    const found = []
    let boolean = false
    for (const schema of this.at(path, document)) {
      if (Array.isArray(schema.enum)) for (const option of schema.enum) if (!found.includes(option)) found.push(option)
      if (schema.type === 'boolean' || (Array.isArray(schema.type) && schema.type.includes('boolean'))) boolean = true
    }
    if (boolean) for (const option of [true, false]) if (!found.includes(option)) found.push(option)
    return found
  }

  /** Whether a string at `path` may name a registered mapping (a string descriptor, a pairing value). */
  takesMappingName(path, document) {
    const names = [this.resolve('#/$defs/stringDescriptor'), this.resolve('#/$defs/pairingValue')]
    return this.at(path, document).some((schema) => names.includes(schema))
  }

  /** The description of the member `key` of an object at `path`, or ''. */
  describeKey(path, key, document) {
    for (const schema of this.at(path, document, true)) {
      if (isObject(schema.properties) && Object.hasOwn(schema.properties, key)) {
        const description = describe(schema.properties[key], this)
        if (description !== '') return description
      }
    }
    return ''
  }
}

/** A schema's description, or that of what it refers to. */
function describe(schema, language) {
  if (!isObject(schema)) return ''
  if (typeof schema.description === 'string') return schema.description
  if (typeof schema.$ref === 'string') return describe(language.resolve(schema.$ref), language)
  return ''
}

/** The first sentence of a description, for a completion's one-line detail. */
export function firstSentence(text) {
  const end = text.search(/[.:;](\s|$)/)
  const sentence = end === -1 ? text : text.slice(0, end)
  return sentence.length > 72 ? `${sentence.slice(0, 71)}…` : sentence
}
