// A renderer for the part of Helm's template language the chart in deploy/helm uses, so the test
// can check what `helm template` would produce without helm (not packaged for Debian nor npm).
// It is deliberately small and strict; anything outside this subset throws instead of guessing:
//   actions   {{ pipeline }}  {{ if pipeline }} … {{ else }} … {{ end }}
//             {{ range $key, $value := pipeline }} … {{ end }} (maps in sorted key order, lists)
//             {{ $var := pipeline }} (declares, to the end of its block) {{ $var = pipeline }} (assigns)
//             {{/* comment */}}, and the `{{-` / `-}}` whitespace trims
//   operands  .  .a.b  $  $.a.b  $var  $var.a  "string"  numbers  true false
//   functions toYaml toJson quote indent nindent sha256sum not default kindIs dict set deepCopy (Sprig's meanings)
// Stricter than Helm: printing a missing value or a map/list without toYaml/toJson throws (Helm
// prints "" or Go's map syntax). toYaml prints with the `yaml` package, not Go's: same data, and
// every test parses the output as YAML rather than comparing text. No `else if`, `with`, `define`,
// `include`, `tpl` or parentheses.
import { createHash } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { parse, stringify } from 'yaml'

type Node =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'print'; readonly pipeline: string }
  | { readonly kind: 'if'; readonly pipeline: string; readonly then: Node[]; readonly otherwise: Node[] }
  | { readonly kind: 'range'; readonly key: string; readonly value: string; readonly pipeline: string; readonly body: Node[] }
  | { readonly kind: 'assign'; readonly name: string; readonly declare: boolean; readonly pipeline: string }

/** Variables of one block: declared here, or found in the blocks around it (Go's scoping). */
class Vars {
  readonly #own = new Map<string, unknown>()
  constructor(private readonly outer?: Vars) {}
  has(name: string): boolean {
    return this.#own.has(name) || (this.outer?.has(name) ?? false)
  }

  get(name: string): unknown {
    return this.#own.has(name) ? this.#own.get(name) : this.outer?.get(name)
  }

  declare(name: string, value: unknown): void {
    this.#own.set(name, value)
  }

  /** `$x = …`: the variable where it was declared. */
  assign(name: string, value: unknown): void {
    if (this.#own.has(name)) this.#own.set(name, value)
    else if (this.outer !== undefined) this.outer.assign(name, value)
    else throw new Error(`undefined variable ${name}`)
  }
}

interface Scope {
  readonly dot: unknown
  readonly root: unknown
  readonly vars: Vars
}

/** The template as text and actions, the trims applied. */
function lex(template: string): Array<{ text: string } | { action: string }> {
  const parts: Array<{ text: string } | { action: string }> = []
  let rest = template
  let trimNext = false
  for (;;) {
    const open = rest.indexOf('{{')
    let text = open === -1 ? rest : rest.slice(0, open)
    if (trimNext) text = text.replace(/^\s+/, '')
    if (open === -1) {
      parts.push({ text })
      return parts
    }
    const close = rest.indexOf('}}', open)
    if (close === -1) throw new Error('unclosed action')
    let action = rest.slice(open + 2, close)
    if (action.startsWith('- ')) {
      text = text.replace(/\s+$/, '')
      action = action.slice(2)
    }
    trimNext = action.endsWith(' -')
    if (trimNext) action = action.slice(0, -2)
    parts.push({ text }, { action: action.trim() })
    rest = rest.slice(close + 2)
  }
}

function parseNodes(parts: Array<{ text: string } | { action: string }>, at: { i: number }, inside: boolean): { nodes: Node[]; ended: 'end' | 'else' | 'eof' } {
  const nodes: Node[] = []
  while (at.i < parts.length) {
    const part = parts[at.i++]!
    if ('text' in part) {
      if (part.text !== '') nodes.push({ kind: 'text', text: part.text })
      continue
    }
    const action = part.action
    if (action.startsWith('/*')) {
      if (!action.endsWith('*/')) throw new Error(`unclosed comment: ${action}`)
      continue
    }
    if (action === 'end' || action === 'else') {
      if (!inside) throw new Error(`unexpected {{ ${action} }}`)
      return { nodes, ended: action }
    }
    const [word] = action.split(/\s+/, 1)
    if (word === 'if') {
      const then = parseNodes(parts, at, true)
      const otherwise = then.ended === 'else' ? parseNodes(parts, at, true) : { nodes: [], ended: 'end' as const }
      if (then.ended === 'eof' || otherwise.ended !== 'end') throw new Error(`{{ ${action} }} without its {{ end }}`)
      nodes.push({ kind: 'if', pipeline: action.slice(2).trim(), then: then.nodes, otherwise: otherwise.nodes })
    } else if (word === 'range') {
      const header = /^range\s+(\$\w+)\s*,\s*(\$\w+)\s*:=\s*(.+)$/.exec(action)
      if (header === null) throw new Error(`unsupported range form: ${action}`)
      const body = parseNodes(parts, at, true)
      if (body.ended !== 'end') throw new Error(`{{ ${action} }} without its {{ end }}`)
      nodes.push({ kind: 'range', key: header[1]!, value: header[2]!, pipeline: header[3]!, body: body.nodes })
    } else if (/^\$\w+\s*:?=/.test(action)) {
      const assignment = /^(\$\w+)\s*(:?=)\s*(.+)$/.exec(action)
      if (assignment === null || action.includes('(')) throw new Error(`unsupported assignment: ${action}`)
      nodes.push({ kind: 'assign', name: assignment[1]!, declare: assignment[2] === ':=', pipeline: assignment[3]! })
    } else if (['else', 'with', 'define', 'include', 'template', 'block', 'tpl'].includes(word!) || action.includes('(') || /\$\w+\s*:?=/.test(action)) {
      throw new Error(`outside the supported subset: {{ ${action} }}`)
    } else {
      nodes.push({ kind: 'print', pipeline: action })
    }
  }
  if (inside) return { nodes, ended: 'eof' }
  return { nodes, ended: 'eof' }
}

/** Whitespace-separated words, a quoted string being one word. */
function words(command: string): string[] {
  return command.match(/"(?:[^"\\]|\\.)*"|[^\s"]+/g) ?? []
}

function splitPipeline(pipeline: string): string[] {
  return (pipeline.match(/(?:"(?:[^"\\]|\\.)*"|[^|"])+/g) ?? []).map((command) => command.trim())
}

function field(value: unknown, path: string[], where: string): unknown {
  let current = value
  for (const name of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) throw new Error(`${where}: cannot read .${name} of a non-map`)
    current = Object.hasOwn(current, name) ? (current as Record<string, unknown>)[name] : undefined
  }
  return current
}

function operand(word: string, scope: Scope): unknown {
  if (word.startsWith('"')) return JSON.parse(word) as string
  if (/^-?\d+(\.\d+)?$/.test(word)) return Number(word)
  if (word === 'true' || word === 'false') return word === 'true'
  if (word === '.') return scope.dot
  if (word.startsWith('.')) return field(scope.dot, word.slice(1).split('.'), word)
  if (word.startsWith('$')) {
    const [name, ...path] = word.split('.')
    const base = name === '$' ? scope.root : scope.vars.get(name!)
    if (name !== '$' && !scope.vars.has(name!)) throw new Error(`undefined variable ${name}`)
    return field(base, path, word)
  }
  throw new Error(`unsupported operand ${word}`)
}

const truthy = (value: unknown): boolean =>
  !(value === undefined || value === null || value === false || value === 0 || value === '' || (Array.isArray(value) && value.length === 0) || (typeof value === 'object' && value !== null && Object.keys(value).length === 0))

function text(value: unknown, what: string): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  throw new Error(`${what} is ${value === undefined ? 'missing' : 'not a scalar'}: print it with toYaml or toJson`)
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]))
}

/** Sprig's kind names for the values YAML can hold. */
function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'slice'
  if (value === null || value === undefined) return 'invalid'
  if (typeof value === 'object') return 'map'
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float64'
  return typeof value === 'boolean' ? 'bool' : 'string'
}

const FUNCTIONS: Record<string, (...args: unknown[]) => unknown> = {
  toYaml: (value) => stringify(value).replace(/\n$/, ''),
  // Go's encoding/json writes map keys sorted.
  toJson: (value) => JSON.stringify(sortedKeys(value)),
  kindIs: (kind, value) => kind === kindOf(value),
  quote: (value) => JSON.stringify(text(value, 'quote')),
  indent: (n, value) => `${' '.repeat(Number(n))}${text(value, 'indent').replaceAll('\n', `\n${' '.repeat(Number(n))}`)}`,
  nindent: (n, value) => `\n${' '.repeat(Number(n))}${text(value, 'nindent').replaceAll('\n', `\n${' '.repeat(Number(n))}`)}`,
  sha256sum: (value) => createHash('sha256').update(text(value, 'sha256sum')).digest('hex'),
  not: (value) => !truthy(value),
  default: (fallback, value) => (truthy(value) ? value : fallback),
  dict: (...pairs) => {
    if (pairs.length % 2 !== 0) throw new Error('dict takes key and value pairs')
    const map: Record<string, unknown> = {}
    for (let i = 0; i < pairs.length; i += 2) map[text(pairs[i], 'a dict key')] = pairs[i + 1]
    return map
  },
  // set mutates the map and returns it, as Sprig's does.
  set: (map, key, value) => {
    if (kindOf(map) !== 'map') throw new Error('set needs a map')
    ;(map as Record<string, unknown>)[text(key, 'a set key')] = value
    return map
  },
  deepCopy: (value) => structuredClone(value),
}

function evaluate(pipeline: string, scope: Scope): unknown {
  let result: unknown
  splitPipeline(pipeline).forEach((command, index) => {
    const [head, ...rest] = words(command)
    if (head === undefined) throw new Error(`empty command in ${pipeline}`)
    const args = rest.map((word) => operand(word, scope))
    if (index > 0) args.push(result)
    if (Object.hasOwn(FUNCTIONS, head)) result = FUNCTIONS[head]!(...args)
    else if (/^[A-Za-z]/.test(head)) throw new Error(`unsupported function ${head}`)
    else if (args.length === 0) result = operand(head, scope)
    else throw new Error(`${head} is not a function: ${command}`)
  })
  return result
}

function renderNodes(nodes: readonly Node[], scope: Scope): string {
  let out = ''
  for (const node of nodes) {
    if (node.kind === 'text') out += node.text
    else if (node.kind === 'print') out += text(evaluate(node.pipeline, scope), `{{ ${node.pipeline} }}`)
    else if (node.kind === 'assign') {
      const value = evaluate(node.pipeline, scope)
      if (node.declare) scope.vars.declare(node.name, value)
      else scope.vars.assign(node.name, value)
    } else if (node.kind === 'if') out += renderNodes(truthy(evaluate(node.pipeline, scope)) ? node.then : node.otherwise, { ...scope, vars: new Vars(scope.vars) })
    else {
      const over = evaluate(node.pipeline, scope)
      const pairs: Array<[unknown, unknown]> = Array.isArray(over)
        ? over.map((value, i) => [i, value])
        : over !== null && typeof over === 'object'
          ? Object.keys(over).sort().map((key) => [key, (over as Record<string, unknown>)[key]])
          : []
      for (const [key, value] of pairs) {
        const vars = new Vars(scope.vars)
        vars.declare(node.key, key)
        vars.declare(node.value, value)
        out += renderNodes(node.body, { dot: value, root: scope.root, vars })
      }
    }
  }
  return out
}

/** One template rendered against the chart's context (`.Values`, `.Release`, `.Chart`). */
export function renderTemplate(template: string, context: Record<string, unknown>): string {
  const { nodes } = parseNodes(lex(template), { i: 0 }, false)
  return renderNodes(nodes, { dot: context, root: context, vars: new Vars() })
}

/** Overrides merged into values as `-f` does: maps merge, a null removes its key, anything else replaces. */
export function mergeValues(base: unknown, overrides: unknown): unknown {
  if (base === null || typeof base !== 'object' || Array.isArray(base) || overrides === null || typeof overrides !== 'object' || Array.isArray(overrides)) {
    return overrides === undefined ? base : overrides
  }
  const merged: Record<string, unknown> = { ...(base as Record<string, unknown>) }
  for (const [key, value] of Object.entries(overrides)) {
    if (value === null) delete merged[key]
    else merged[key] = mergeValues(merged[key], value)
  }
  return merged
}

export interface RenderedChart {
  /** Rendered text by template file name. */
  readonly files: Record<string, string>
  /** Every Kubernetes object the chart renders, in file-name order. */
  readonly objects: Array<Record<string, any>>
}

/** `helm template <release> <chart> -f overrides`, for this subset: templates/*.yaml and NOTES.txt. */
export function renderChart(chartDir: string, release: string, overrides: Record<string, unknown> = {}): RenderedChart {
  const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as Record<string, unknown>
  const values = mergeValues(parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')), overrides)
  const context = {
    Values: values,
    Release: { Name: release, Namespace: 'default', Service: 'Helm' },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
  }
  const files: Record<string, string> = {}
  const objects: Array<Record<string, any>> = []
  for (const name of readdirSync(join(chartDir, 'templates')).sort()) {
    if (!name.endsWith('.yaml') && name !== 'NOTES.txt') continue
    const rendered = renderTemplate(readFileSync(join(chartDir, 'templates', name), 'utf8'), context)
    files[name] = rendered
    if (name === 'NOTES.txt') continue
    for (const document of rendered.split(/^---\s*$/m)) {
      const object = parse(document) as Record<string, any> | null
      if (object !== null) objects.push(object)
    }
  }
  return { files, objects }
}
