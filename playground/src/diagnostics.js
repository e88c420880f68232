// The diagnostics panel: every error and warning of the validation report, and the syntax errors of
// either editor, listed (severity, rule, line:column and pointer, message) and shown in place as
// squiggles (@codemirror/lint: the rule and message on hover). A pointer lands where the CLI places
// it (places.js); choosing an entry (a button) selects its place in its editor.
import { locator } from '../../sources/positions.ts'
import { button, make, setStatus } from './dom.js'
import { holds, place } from './places.js'

/**
 * An entry: `{ severity, rule, message, pointer?, where: 'mapping' | 'input', range?, line?, column?, exact }`;
 * `range` null when the pointer is not in the text, `exact` false when it landed on the nearest
 * enclosing member (the one it names is absent).
 */

/** The entries of a validation report, placed in the mapping editor's text. */
export function reportEntries(report, editor, document) {
  const state = editor.view.state
  const places = locator(state.doc.toString())
  const entry = (severity, issue) => {
    const found = place(state, issue.pointer, places)
    return {
      severity,
      rule: issue.rule,
      message: issue.message,
      pointer: issue.pointer,
      where: 'mapping',
      range: found === null ? null : { from: found.from, to: found.to },
      line: found?.line,
      column: found?.column,
      exact: document === undefined || holds(document, issue.pointer),
    }
  }
  const list = []
  for (const issue of report.errors ?? []) list.push(entry('error', issue))
  for (const issue of report.warnings ?? []) list.push(entry('warning', issue))
  return list
}

/** The entry of a text that does not parse (places.js `parseText`'s problem). */
export function syntaxEntry(problem, where, editor) {
  const line = editor.view.state.doc.lineAt(problem.from)
  return {
    severity: 'error',
    rule: `${problem.message.startsWith('not JSON') ? 'JSON' : 'YAML'} syntax`,
    message: problem.message,
    where,
    range: { from: problem.from, to: Math.max(problem.to, problem.from) },
    line: line.number,
    column: problem.from - line.from + 1,
    exact: true,
  }
}

export class DiagnosticsPanel {
  /**
   * @param {HTMLOListElement} list
   * @param {HTMLElement} status
   * @param {{ mapping: ReturnType<typeof import('./editor.js').createEditor>, input: ReturnType<typeof import('./editor.js').createEditor> }} editors
   */
  constructor(list, status, editors) {
    this.list = list
    this.status = status
    this.editors = editors
    this.entries = []
  }

  /** Shows entries in the list and as squiggles in their editors. */
  show(entries, summary, failure) {
    this.entries = entries
    this.list.replaceChildren()
    // One element at a time: a spread argument list of every entry would hold them all on the stack.
    for (let i = 0; i < entries.length; i++) this.list.append(this.item(entries[i], i))
    setStatus(this.status, summary, failure)
    const squiggles = (where) => entries
      .filter((entry) => entry.where === where && entry.range)
      .map((entry) => ({ from: entry.range.from, to: entry.range.to, severity: entry.severity, message: entry.message, source: entry.rule }))
    this.editors.mapping.diagnose(squiggles('mapping'))
    this.editors.input.diagnose(squiggles('input'))
  }

  /** A status line while the list still describes the last answer. */
  pending(text) {
    setStatus(this.status, text)
  }

  item(entry, index) {
    const item = make('li', `entry ${entry.severity}`)
    item.append(make('span', 'severity', entry.severity), make('code', 'rule', entry.rule))
    if (entry.range) {
      const at = `${entry.where === 'input' ? 'input ' : ''}${entry.line}:${entry.column}`
      const text = typeof entry.pointer === 'string' ? `${at} ${entry.pointer === '' ? '(the document)' : entry.pointer}` : at
      item.append(button('pointer', text, `Show line ${entry.line}, column ${entry.column} in the ${entry.where}`, () => this.choose(index)))
    } else {
      item.append(make('code', 'pointer unplaced', typeof entry.pointer === 'string' ? entry.pointer : ''))
    }
    item.append(make('span', 'message', entry.message))
    if (typeof entry.pointer === 'string' && entry.range !== undefined && !entry.exact) {
      item.append(make('span', 'unlocated', entry.range === null ? 'not found in the text' : 'placed on the nearest enclosing member (the one named is absent)'))
    }
    return item
  }

  /** Makes one entry the active one and selects its place in its editor. */
  choose(index) {
    this.list.querySelectorAll('.entry').forEach((item, i) => {
      item.classList.toggle('active', i === index)
      if (i === index) item.setAttribute('aria-current', 'true')
      else item.removeAttribute('aria-current')
    })
    const entry = this.entries[index]
    if (entry?.range) this.editors[entry.where].select(entry.range)
  }
}
