// The playground page: a mapping document (JSON or YAML) and an input are edited here; the server's
// own POST /validate gives the report as you type, its POST /map the envelope. YAML is read in the
// page (the API takes JSON bodies) with the `yaml` package's browser build, which the server serves
// beside this file; the same parser locates a report's pointer in the text, JSON included (JSON is
// YAML's flow syntax). Paths are relative to the page, so it works under any prefix.
import { isMap, isScalar, isSeq, parseDocument } from './yaml/index.js'

const DEBOUNCE_MS = 300

const element = (id) => document.getElementById(id)
const ui = {
  notice: element('notice'),
  tokenRow: element('token-row'),
  token: element('token'),
  format: element('format'),
  detected: element('detected'),
  mapping: element('mapping'),
  gutter: element('mapping-gutter'),
  backdrop: element('mapping-backdrop'),
  input: element('input'),
  run: element('run'),
  auto: element('auto'),
  output: element('output'),
  outputStatus: element('output-status'),
  report: element('report'),
  reportStatus: element('report-status'),
}

/** What the server told the page about itself (GET playground/config.json). */
let config = { auth: false, explicit: false }
/** Bumped by every edit: an answer that arrives for an older generation describes stale text. */
let generation = 0
let inFlight = null
let timer
/** The report entries on show, each with the text range its pointer was located at. */
let entries = []

// ---- reading the editors ---------------------------------------------------------------------

function formatOf(text) {
  if (ui.format.value !== 'auto') return ui.format.value
  return /^\s*[[{]/.test(text) ? 'json' : 'yaml'
}

/** The position a JSON.parse message names, when it names one. */
function jsonErrorRange(message, text) {
  const match = /position (\d+)/.exec(message)
  if (match === null) return null
  const start = Math.min(Number(match[1]), Math.max(text.length - 1, 0))
  return { start, end: Math.min(start + 1, text.length), exact: true }
}

/** The mapping text as a document, or the problem that keeps it from being one. */
function readMapping() {
  const text = ui.mapping.value
  const format = formatOf(text)
  ui.detected.textContent = ui.format.value === 'auto' ? `read as ${format.toUpperCase()}` : ''
  if (text.trim() === '') return { problem: { rule: 'empty', message: 'Type a mapping document.', range: null } }
  let document
  if (format === 'json') {
    try {
      document = JSON.parse(text)
    } catch (error) {
      return { problem: { rule: 'JSON syntax', message: error.message, range: jsonErrorRange(error.message, text) } }
    }
  } else {
    const parsed = parseDocument(text)
    if (parsed.errors.length > 0) {
      const [first] = parsed.errors
      const range = first.pos === undefined ? null : { start: first.pos[0], end: Math.max(first.pos[1], first.pos[0] + 1), exact: true }
      return { problem: { rule: 'YAML syntax', message: first.message, range } }
    }
    document = parsed.toJS()
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    return { problem: { rule: 'not a document', message: 'A mapping document is an object, for example {"mapping": {"/out": "/in"}}.', range: null } }
  }
  return { document }
}

/** The input editor's JSON; an empty editor sends no input. */
function readInput() {
  const text = ui.input.value
  if (text.trim() === '') return { input: undefined }
  try {
    return { input: JSON.parse(text) }
  } catch (error) {
    return { problem: `The input is not JSON: ${error.message}` }
  }
}

// ---- locating a pointer in the text ----------------------------------------------------------

const unescapeToken = (token) => token.replace(/~1/g, '/').replace(/~0/g, '~')

/**
 * The text range of the member a JSON Pointer names: its key through the end of its value. When
 * the path leaves the text (a member the server derived), the deepest member found, not exact.
 */
function locate(tree, pointer) {
  if (typeof pointer !== 'string' || tree.errors.length > 0 || tree.contents === null) return null
  if (pointer === '') return { start: tree.contents.range[0], end: tree.contents.range[1], exact: true }
  if (!pointer.startsWith('/')) return null
  let node = tree.contents
  let found = null
  for (const token of pointer.slice(1).split('/').map(unescapeToken)) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === token)
      if (pair === undefined) return found && { ...found, exact: false }
      const end = pair.value?.range?.[1] ?? pair.key.range[1]
      found = { start: pair.key.range[0], end: Math.max(end, pair.key.range[1]) }
      node = pair.value
    } else if (isSeq(node) && /^(0|[1-9][0-9]*)$/.test(token) && node.items[Number(token)]?.range !== undefined) {
      node = node.items[Number(token)]
      found = { start: node.range[0], end: node.range[1] }
    } else {
      return found && { ...found, exact: false }
    }
  }
  return found && { ...found, exact: true }
}

// ---- the editor: gutter, highlight, scrolling ------------------------------------------------

let gutterLines = 0

function paintEditor(range) {
  const text = ui.mapping.value
  const lines = text.split('\n').length
  if (lines !== gutterLines) {
    gutterLines = lines
    ui.gutter.textContent = Array.from({ length: lines }, (_, i) => i + 1).join('\n') + '\n\n'
  }
  // The trailing lines let the backdrop scroll as far as the textarea, scrollbar included.
  if (range === null || range === undefined) {
    ui.backdrop.replaceChildren(text + '\n\n')
  } else {
    const mark = document.createElement('mark')
    mark.textContent = text.slice(range.start, range.end)
    ui.backdrop.replaceChildren(text.slice(0, range.start), mark, text.slice(range.end) + '\n\n')
  }
  syncScroll()
}

function syncScroll() {
  ui.backdrop.scrollTop = ui.mapping.scrollTop
  ui.backdrop.scrollLeft = ui.mapping.scrollLeft
  ui.gutter.scrollTop = ui.mapping.scrollTop
}

/** Selects the range in the textarea and scrolls it into view, a few lines below the top. */
function selectInEditor(range) {
  ui.mapping.focus()
  ui.mapping.setSelectionRange(range.start, range.end)
  const line = ui.mapping.value.slice(0, range.start).split('\n').length - 1
  const lineHeight = parseFloat(window.getComputedStyle(ui.mapping).lineHeight) || 20
  ui.mapping.scrollTop = Math.max(0, (line - 3) * lineHeight)
  syncScroll()
}

// ---- the report pane -------------------------------------------------------------------------

/** `1 error`, `2 warnings`. */
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`

function setStatus(target, text, failure = false) {
  target.textContent = text
  target.classList.toggle('failure', failure)
}

function entryElement(entry, index) {
  const item = document.createElement('li')
  item.className = `entry ${entry.severity}`
  const severity = document.createElement('span')
  severity.className = 'severity'
  severity.textContent = entry.severity
  const rule = document.createElement('code')
  rule.className = 'rule'
  rule.textContent = entry.rule
  item.append(severity, rule)
  if (typeof entry.pointer === 'string') {
    const pointer = document.createElement('button')
    pointer.type = 'button'
    pointer.className = 'pointer'
    pointer.textContent = entry.pointer === '' ? '(the whole document)' : entry.pointer
    pointer.setAttribute('aria-label', `Show ${entry.pointer || 'the whole document'} in the mapping`)
    pointer.addEventListener('click', () => choose(index, true))
    item.append(pointer)
  } else if (entry.range !== null) {
    const where = document.createElement('button')
    where.type = 'button'
    where.className = 'pointer'
    where.textContent = 'show'
    where.setAttribute('aria-label', 'Show the error in the mapping')
    where.addEventListener('click', () => choose(index, true))
    item.append(where)
  } else {
    item.append(document.createElement('span'))
  }
  const message = document.createElement('span')
  message.className = 'message'
  message.textContent = entry.message
  item.append(message)
  if (typeof entry.pointer === 'string' && (entry.range === null || !entry.range.exact)) {
    const note = document.createElement('span')
    note.className = 'unlocated'
    note.textContent = entry.range === null ? 'not found in the text' : 'marked: the nearest enclosing member in the text'
    item.append(note)
  }
  return item
}

/** Makes one entry the active one: its pointer highlighted, its range marked (and selected, on a click). */
function choose(index, select) {
  ui.report.querySelectorAll('.entry').forEach((item, i) => {
    item.classList.toggle('active', i === index)
    if (i === index) item.setAttribute('aria-current', 'true')
    else item.removeAttribute('aria-current')
  })
  const range = entries[index]?.range ?? null
  paintEditor(range)
  if (select && range !== null) selectInEditor(range)
}

function showEntries(list, summary, failure) {
  entries = list
  ui.report.replaceChildren()
  // One element at a time: a spread argument list of every entry would hold them all on the stack.
  for (let i = 0; i < list.length; i++) ui.report.append(entryElement(list[i], i))
  setStatus(ui.reportStatus, summary, failure)
  if (list.length > 0) choose(0, false)
  else paintEditor(null)
}

function showReport(report) {
  const tree = parseDocument(ui.mapping.value)
  const annotate = (severity) => (issue) => ({ ...issue, severity, range: locate(tree, issue.pointer) })
  const list = [...(report.errors ?? []).map(annotate('error')), ...(report.warnings ?? []).map(annotate('warning'))]
  const warnings = report.warnings?.length ?? 0
  const summary = report.valid
    ? warnings === 0 ? 'Valid.' : `Valid, with ${plural(warnings, 'warning')}.`
    : `Invalid: ${plural(report.errors.length, 'error')}${warnings === 0 ? '' : `, ${plural(warnings, 'warning')}`}.`
  showEntries(list, summary, !report.valid)
}

// ---- talking to the server -------------------------------------------------------------------

async function post(path, body, signal) {
  const headers = { 'content-type': 'application/json' }
  const token = ui.token.value.trim()
  if (config.auth && token !== '') headers.authorization = `Bearer ${token}`
  const response = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body), signal, credentials: 'omit', cache: 'no-store' })
  const text = await response.text()
  let payload = null
  try {
    payload = JSON.parse(text)
  } catch {
    // Not the service's JSON (a proxy's page, say): described by its status alone.
  }
  return { status: response.status, payload }
}

function describeFailure({ status, payload }) {
  if (payload !== null && typeof payload.code === 'string') {
    const hint = status === 401 && config.auth ? ' (paste a token above)' : ''
    return `${status} ${payload.code}: ${payload.message}${hint}`
  }
  return `${status}: the server answered without its error body`
}

function unreachable(target, error) {
  setStatus(target, `The server could not be reached: ${error.message}`, true)
}

function staleOutput() {
  ui.output.classList.add('stale')
}

/** Validates the mapping and, when `map` is set and the server allows it, maps the input. */
async function run(map) {
  const mine = generation
  const current = () => mine === generation
  const controller = new AbortController()
  inFlight = controller
  const read = readMapping()
  if (read.problem !== undefined) {
    showEntries([{ ...read.problem, severity: 'error', pointer: null }], 'The mapping text does not parse.', true)
    staleOutput()
    return
  }
  setStatus(ui.reportStatus, 'Validating…')
  let answer
  try {
    answer = await post('validate', { mapping: read.document }, controller.signal)
  } catch (error) {
    if (current()) unreachable(ui.reportStatus, error)
    return
  }
  if (!current()) return
  if (answer.status !== 200 || answer.payload === null) {
    showEntries([], describeFailure(answer), true)
    staleOutput()
    return
  }
  showReport(answer.payload)
  if (!map || !config.explicit) return
  if (answer.payload.valid !== true) {
    setStatus(ui.outputStatus, 'Not mapped: the mapping is invalid (see the report).', true)
    staleOutput()
    return
  }
  const { input, problem } = readInput()
  if (problem !== undefined) {
    setStatus(ui.outputStatus, problem, true)
    staleOutput()
    return
  }
  setStatus(ui.outputStatus, 'Mapping…')
  try {
    answer = await post('map', input === undefined ? { mapping: read.document } : { mapping: read.document, input }, controller.signal)
  } catch (error) {
    if (current()) unreachable(ui.outputStatus, error)
    return
  }
  if (!current()) return
  if (answer.status === 200 && answer.payload !== null) {
    ui.output.textContent = JSON.stringify(answer.payload, null, 2)
    ui.output.classList.remove('stale')
    const errors = Array.isArray(answer.payload.errors) ? answer.payload.errors.length : 0
    setStatus(ui.outputStatus, answer.payload.valid === false ? `Mapped; valid: false with ${plural(errors, 'error')}.` : 'Mapped.', answer.payload.valid === false)
    return
  }
  if (answer.payload !== null && typeof answer.payload.report === 'object' && answer.payload.report !== null) showReport(answer.payload.report)
  setStatus(ui.outputStatus, describeFailure(answer), true)
  staleOutput()
}

/** A new edit: whatever is in flight now describes old text. */
function invalidate() {
  generation += 1
  inFlight?.abort()
  inFlight = null
  clearTimeout(timer)
}

function scheduleRun() {
  invalidate()
  timer = setTimeout(() => run(ui.auto.checked), DEBOUNCE_MS)
}

function mapNow() {
  if (!config.explicit) return
  invalidate()
  run(true)
}

// ---- start -----------------------------------------------------------------------------------

async function loadConfig() {
  try {
    const response = await fetch('playground/config.json', { cache: 'no-store', credentials: 'omit' })
    if (!response.ok) throw new Error(`status ${response.status}`)
    config = await response.json()
  } catch (error) {
    ui.notice.textContent = `The page could not read its configuration (${error.message}); it assumes no auth and validation only.`
    ui.notice.classList.add('failure')
    ui.notice.hidden = false
  }
  ui.tokenRow.hidden = !config.auth
  if (!config.explicit) {
    ui.notice.textContent ||= 'This server does not evaluate submitted documents (options.map.explicit is off): the page validates only.'
    ui.notice.hidden = false
    ui.run.disabled = true
    ui.auto.checked = false
    ui.auto.disabled = true
    setStatus(ui.outputStatus, 'Mapping is off on this server.')
  }
}

ui.mapping.addEventListener('input', () => {
  paintEditor(null)
  scheduleRun()
})
ui.mapping.addEventListener('scroll', syncScroll)
ui.input.addEventListener('input', scheduleRun)
ui.token.addEventListener('input', scheduleRun)
ui.format.addEventListener('change', scheduleRun)
ui.auto.addEventListener('change', () => {
  if (ui.auto.checked) mapNow()
})
ui.run.addEventListener('click', mapNow)
document.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    event.preventDefault()
    mapNow()
  }
})

paintEditor(null)
await loadConfig()
document.body.dataset.ready = 'true'
run(ui.auto.checked)
