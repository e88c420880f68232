// The playground page: a mapping document (JSON or YAML) and an input are edited here; the
// service's own POST /validate gives the diagnostics as you type, its POST /map the envelope and,
// where the deployment allows it, the explain trace. A registered mapping can be opened read-only
// and its examples run; the state lives in the URL's fragment and in localStorage. Every path is
// relative to the page, so it works under any prefix. Bundled by scripts/build-playground.mjs.
import { Api, curlCommand } from './api.js'
import { assistance } from './assist.js'
import { DiagnosticsPanel, reportEntries, syntaxEntry } from './diagnostics.js'
import { plural, setStatus } from './dom.js'
import { createEditor } from './editor.js'
import { ExamplesPanel } from './examples-panel.js'
import { renderExplain } from './explain.js'
import { convert, detectFormat, holds, memberRange, parseText, textOf } from './places.js'
import { LanguageSchema } from './schema.js'
import { MAX_FRAGMENT_CHARS, decodeState, encodeState, linkFor, loadSession, saveSession, stateInFragment } from './share.js'

const DEBOUNCE_MS = 300
const PERSIST_MS = 400
const SAMPLE = {
  v: 1,
  mapping: 'mapping:\n  /person/name: /name\n  /person/born:\n    source: /born\n    as: number\n',
  format: 'auto',
  input: '{ "name": "Ada", "born": "1815" }\n',
  inputFormat: 'auto',
  source: '',
}

const element = (id) => document.getElementById(id)
const ui = {
  notice: element('notice'),
  tokenRow: element('token-row'),
  token: element('token'),
  share: element('share'),
  curl: element('curl'),
  copyBox: element('copy-box'),
  copyLabel: element('copy-label'),
  copyText: element('copy-text'),
  copyClose: element('copy-close'),
  source: element('source'),
  format: element('format'),
  detected: element('detected'),
  convert: element('convert'),
  registeredRow: element('registered-row'),
  registeredName: element('registered-name'),
  copyToEdit: element('copy-to-edit'),
  inputFormat: element('input-format'),
  inputStatus: element('input-status'),
  run: element('run'),
  auto: element('auto'),
  outputStatus: element('output-status'),
  outputBox: element('output'),
  report: element('report'),
  reportStatus: element('report-status'),
  explainOn: element('explain-on'),
  explainStatus: element('explain-status'),
  explain: element('explain'),
  runExamples: element('run-examples'),
  examplesStatus: element('examples-status'),
  examples: element('examples'),
  exampleDetail: element('example-detail'),
}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)

const page = {
  /** What the service told the page about itself (playground/config.json). */
  config: { auth: false, explicit: false, explain: false },
  /** @type {LanguageSchema | undefined} */
  schema: undefined,
  extensions: { initializers: [], transformers: [], plugins: [] },
  /** The registered mappings, by id (GET mappings), once the page may read them. */
  registered: {},
  /** '' while your document is on show, else the registered mapping's id. */
  source: '',
  /** A registered id named by a restored state, shown once the list arrives. */
  pendingSource: '',
  /** Your document's editor state while a registered mapping is on show. */
  mine: null,
  /** Explain traces are asked for until the service refuses them. */
  explainAllowed: true,
  /** Bumped by every edit: an answer for an older generation describes stale text. */
  generation: 0,
  inFlight: null,
  timer: undefined,
  persistTimer: undefined,
  /** The envelope on show in the output (without its trace). */
  output: undefined,
}

const api = new Api(() => ui.token.value)

// ---- editors ---------------------------------------------------------------------------------

const effectiveFormat = (select, text) => (select.value === 'auto' ? detectFormat(text) : select.value)

const assist = assistance({
  schema: () => page.schema,
  extensions: () => page.extensions,
  mappings: () => Object.keys(page.registered),
  format: () => mappingEditor.format,
})

const mappingEditor = createEditor({
  parent: element('mapping'),
  doc: '',
  format: 'yaml',
  label: 'Mapping document (JSON or YAML)',
  onChange: () => edited(true),
  onRun: () => mapNow(),
  complete: assist.complete,
  hover: assist.hover,
})

const inputEditor = createEditor({
  parent: element('input'),
  doc: '',
  format: 'json',
  label: 'Input (JSON or YAML)',
  onChange: () => edited(false),
  onRun: () => mapNow(),
})

const outputEditor = createEditor({
  parent: ui.outputBox,
  doc: '',
  format: 'json',
  label: 'Output envelope (read-only)',
  readOnly: true,
  onRun: () => mapNow(),
})

const diagnostics = new DiagnosticsPanel(ui.report, ui.reportStatus, { mapping: mappingEditor, input: inputEditor })

const examples = new ExamplesPanel({
  elements: { list: ui.examples, status: ui.examplesStatus, detail: ui.exampleDetail, run: ui.runExamples },
  api,
  canMap: () => canMap(),
  useInput: (input) => inputEditor.replace(`${JSON.stringify(input, null, 2)}\n`),
})

/** Highlights each editor as the format it holds (chosen, or detected from its first character). */
function syncFormats() {
  const mapping = page.source === '' ? effectiveFormat(ui.format, mappingEditor.text) : mappingEditor.format
  mappingEditor.setFormat(mapping)
  ui.detected.textContent = ui.format.value === 'auto' && page.source === '' ? `read as ${mapping.toUpperCase()}` : ''
  ui.convert.textContent = mapping === 'json' ? 'To YAML' : 'To JSON'
  ui.convert.setAttribute('aria-label', `Convert the mapping to ${mapping === 'json' ? 'YAML' : 'JSON'}`)
  inputEditor.setFormat(effectiveFormat(ui.inputFormat, inputEditor.text))
}

// ---- status lines ----------------------------------------------------------------------------

function notice(text, failure = false) {
  ui.notice.textContent = text
  ui.notice.classList.toggle('failure', failure)
  ui.notice.hidden = text === ''
}

/** The output (and its trace) no longer match the editors. */
function staleOutput() {
  ui.outputBox.classList.add('stale')
  if (ui.explain.childElementCount > 0 && !ui.explain.classList.contains('stale')) {
    ui.explain.classList.add('stale')
    setStatus(ui.explainStatus, 'The trace of the last mapping that ran (the current one did not).')
  }
}

// ---- reading the editors ---------------------------------------------------------------------

/** The mapping to send: a registered id, or your document; or the entry that says why there is none. */
function readMapping() {
  if (page.source !== '') return { mapping: page.source, document: page.registered[page.source] }
  const text = mappingEditor.text
  if (text.trim() === '') return { problem: { severity: 'error', rule: 'empty', message: 'Type a mapping document.', where: 'mapping' } }
  const parsed = parseText(text, mappingEditor.format)
  if (parsed.problem !== undefined) return { problem: syntaxEntry(parsed.problem, 'mapping', mappingEditor) }
  if (!isObject(parsed.value)) {
    return { problem: { severity: 'error', rule: 'not a document', message: 'A mapping document is an object, for example {"mapping": {"/out": "/in"}}.', where: 'mapping', range: { from: 0, to: mappingEditor.view.state.doc.lineAt(0).to }, line: 1, column: 1, exact: true } }
  }
  return { mapping: parsed.value, document: parsed.value }
}

/** The input to send (undefined for an empty editor), or the entry that says why there is none. */
function readInput() {
  const text = inputEditor.text
  if (text.trim() === '') return { input: undefined }
  const parsed = parseText(text, inputEditor.format)
  if (parsed.problem !== undefined) return { problem: syntaxEntry(parsed.problem, 'input', inputEditor) }
  return { input: parsed.value }
}

// ---- running ---------------------------------------------------------------------------------

/** Validates the mapping and, when `map` is set and the service allows it, maps the input. */
async function run(map) {
  const mine = page.generation
  const current = () => mine === page.generation
  const controller = new AbortController()
  page.inFlight = controller
  const signal = controller.signal
  const read = readMapping()
  const input = readInput()
  const inputEntries = input.problem === undefined ? [] : [input.problem]
  setStatus(ui.inputStatus, input.problem === undefined ? '' : `The input does not parse: ${input.problem.message}`, input.problem !== undefined)
  if (read.problem !== undefined) {
    diagnostics.show([read.problem, ...inputEntries], read.problem.rule === 'empty' ? 'No document.' : 'The mapping text does not parse.', true)
    staleOutput()
    return
  }
  if (page.source === '') examples.show(read.document)
  else examples.show(page.registered[page.source], page.source)
  setStatus(ui.reportStatus, 'Validating…')
  let answer
  try {
    answer = await api.post('validate', { mapping: read.mapping }, signal)
  } catch (error) {
    if (current()) setStatus(ui.reportStatus, `The server could not be reached: ${error.message}`, true)
    return
  }
  if (!current()) return
  if (answer.status !== 200 || answer.payload === null) {
    diagnostics.show(inputEntries, api.describe(answer), true)
    staleOutput()
    return
  }
  const report = answer.payload
  const list = reportEntries(report, mappingEditor, read.document)
  const warnings = report.warnings?.length ?? 0
  const summary = report.valid
    ? warnings === 0 ? 'Valid.' : `Valid, with ${plural(warnings, 'warning')}.`
    : `Invalid: ${plural(report.errors.length, 'error')}${warnings === 0 ? '' : `, ${plural(warnings, 'warning')}`}.`
  diagnostics.show([...list, ...inputEntries], report.truncated === true ? `${summary} (the report was cut at its bounds)` : summary, !report.valid)
  if (!map || !canMap()) return
  // Failing examples (EXAMPLE-1) make a report invalid, not the mapping: it is mapped all the same.
  const mappable = report.valid === true || (Array.isArray(report.errors) && report.errors.every((error) => /^EXAMPLE-/.test(error.rule)))
  if (!mappable) {
    setStatus(ui.outputStatus, 'Not mapped: the mapping is invalid (see the diagnostics).', true)
    staleOutput()
    return
  }
  if (input.problem !== undefined) {
    setStatus(ui.outputStatus, 'Not mapped: the input does not parse.', true)
    staleOutput()
    return
  }
  const body = input.input === undefined ? { mapping: read.mapping } : { mapping: read.mapping, input: input.input }
  const explain = ui.explainOn.checked && page.explainAllowed
  setStatus(ui.outputStatus, 'Mapping…')
  try {
    answer = await api.post('map', explain ? { ...body, explain: true } : body, signal)
    if (explain && answer.status === 403 && /explain/i.test(answer.payload?.message ?? '')) {
      // This deployment (or this caller) has no explain traces: say so, and map without.
      if (!current()) return
      page.explainAllowed = false
      ui.explainOn.checked = false
      ui.explainOn.disabled = true
      setStatus(ui.explainStatus, `No traces here: ${answer.payload.message} (options.map.explain).`)
      answer = await api.post('map', body, signal)
    }
  } catch (error) {
    if (current()) setStatus(ui.outputStatus, `The server could not be reached: ${error.message}`, true)
    return
  }
  if (!current()) return
  if (answer.status === 200 && answer.payload !== null) {
    const { explain: trace, ...envelope } = answer.payload
    showOutput(envelope)
    const errors = Array.isArray(envelope.errors) ? envelope.errors.length : 0
    setStatus(ui.outputStatus, envelope.valid === false ? `Mapped; valid: false with ${plural(errors, 'error')}.` : 'Mapped.', envelope.valid === false)
    showTrace(explain ? trace : undefined)
    if (examples.live) void examples.run()
    return
  }
  if (isObject(answer.payload?.report)) diagnostics.show([...reportEntries(answer.payload.report, mappingEditor, read.document), ...inputEntries], 'Invalid.', true)
  setStatus(ui.outputStatus, api.describe(answer), true)
  staleOutput()
}

/** Whether the page can map what is on show: a registered mapping always, your document with map.explicit. */
const canMap = () => page.source !== '' || page.config.explicit

function showOutput(envelope) {
  if (page.output === undefined) performance.mark('playground-first-output')
  page.output = envelope
  outputEditor.reset(`${JSON.stringify(envelope, null, 2)}\n`, 'json', true)
  ui.outputBox.classList.remove('stale')
}

function showTrace(trace) {
  ui.explain.classList.remove('stale')
  if (trace === undefined) {
    ui.explain.replaceChildren()
    if (page.explainAllowed) setStatus(ui.explainStatus, ui.explainOn.checked ? '' : 'Tracing is off.')
    return
  }
  const count = renderExplain(ui.explain, trace, choosePairing)
  setStatus(ui.explainStatus, `${plural(count, 'pairing run')}${trace.truncated ? ' (the trace was cut at its bounds)' : ''}. Choose one to see it in the mapping and the output.`)
}

/** Marks a pairing of the trace in the mapping and the value it wrote in the output. */
function choosePairing(pairing, outputPointer, button) {
  for (const other of ui.explain.querySelectorAll('.pairing[aria-current]')) other.removeAttribute('aria-current')
  button.setAttribute('aria-current', 'true')
  const inView = pairing.mapping === undefined ? page.source === '' : pairing.mapping === page.source
  const notes = []
  if (typeof pairing.pointer === 'string' && inView) {
    mappingEditor.mark(memberRange(mappingEditor.view.state, pairing.pointer))
  } else {
    mappingEditor.mark(null)
    if (pairing.mapping !== undefined) notes.push(`this pairing is in the registered mapping ${pairing.mapping}`)
  }
  if (page.output !== undefined && holds(page.output, outputPointer)) {
    outputEditor.mark(memberRange(outputEditor.view.state, outputPointer))
  } else {
    outputEditor.mark(null)
    notes.push(`nothing at ${outputPointer} in the output`)
  }
  setStatus(ui.explainStatus, `${outputPointer}${notes.length === 0 ? '' : `: ${notes.join('; ')}`}.`)
}

/** A new edit: whatever is in flight now describes old text. */
function invalidate() {
  page.generation += 1
  page.inFlight?.abort()
  page.inFlight = null
  clearTimeout(page.timer)
}

function scheduleRun() {
  invalidate()
  page.timer = setTimeout(() => run(ui.auto.checked), DEBOUNCE_MS)
}

function mapNow() {
  if (!canMap()) return
  invalidate()
  void run(true)
}

/** After an edit of the mapping (`mapping`) or of the input. */
function edited(mapping) {
  // After the edit's own update: an editor is not reconfigured while it updates.
  queueMicrotask(syncFormats)
  if (mapping) queueMicrotask(() => examples.outdated())
  scheduleRun()
  persistSoon()
}

// ---- registered mappings ---------------------------------------------------------------------

function option(text, value) {
  const node = document.createElement('option')
  node.textContent = text
  node.value = value
  return node
}

/** Reads the names completion offers and the registered mappings (each needs the token when auth is on). */
async function loadNames() {
  const [extensions, mappings] = await Promise.all([api.get('extensions').catch(() => null), api.get('mappings').catch(() => null)])
  if (extensions?.status === 200 && isObject(extensions.payload)) page.extensions = extensions.payload
  if (mappings?.status === 200 && isObject(mappings.payload)) {
    page.registered = mappings.payload
    const chosen = page.source || page.pendingSource
    ui.source.replaceChildren(option('your document', ''))
    const ids = Object.keys(page.registered)
    if (ids.length > 0) {
      const group = document.createElement('optgroup')
      group.label = 'registered mappings (read-only)'
      for (const id of ids) group.append(option(id, id))
      ui.source.append(group)
    }
    ui.source.value = Object.hasOwn(page.registered, chosen) ? chosen : ''
    if (page.pendingSource !== '' && Object.hasOwn(page.registered, page.pendingSource)) {
      const pending = page.pendingSource
      page.pendingSource = ''
      showSource(pending)
    }
  }
}

/** Shows your document ('') or a registered mapping, read-only. */
function showSource(id) {
  if (id === page.source) return
  if (page.source === '') page.mine = { state: mappingEditor.view.state, format: mappingEditor.format }
  page.source = id
  ui.source.value = id
  if (id === '') {
    mappingEditor.restore(page.mine.state, page.mine.format)
    page.mine = null
  } else {
    const format = ui.format.value === 'json' ? 'json' : 'yaml'
    mappingEditor.reset(textOf(page.registered[id], format), format, true)
  }
  ui.registeredRow.hidden = id === ''
  ui.registeredName.textContent = id
  ui.run.disabled = !canMap()
  examples.reset()
  syncFormats()
  invalidate()
  void run(ui.auto.checked)
  persistSoon()
}

/** "Copy to edit": the registered mapping's text becomes your document (one edit: Ctrl+Z undoes it). */
function copyToEdit() {
  const text = mappingEditor.text
  const format = mappingEditor.format
  showSource('')
  if (ui.format.value !== 'auto') ui.format.value = format
  mappingEditor.replace(text)
  mappingEditor.view.focus()
}

// ---- share and keep --------------------------------------------------------------------------

/** The page's state: what a link restores. */
function snapshot() {
  const mine = page.source === '' ? mappingEditor.text : page.mine.state.doc.toString()
  return { v: 1, mapping: mine, format: ui.format.value, input: inputEditor.text, inputFormat: ui.inputFormat.value, source: page.source }
}

/** Keeps the state in localStorage and the address bar (without a new history entry). */
async function persist() {
  const state = snapshot()
  saveSession(state)
  const encoded = await encodeState(state)
  if (encoded.length <= MAX_FRAGMENT_CHARS) window.history.replaceState(null, '', linkFor(encoded))
  return encoded
}

function persistSoon() {
  clearTimeout(page.persistTimer)
  page.persistTimer = setTimeout(() => {
    void persist()
  }, PERSIST_MS)
}

function apply(state) {
  ui.format.value = ['auto', 'json', 'yaml'].includes(state.format) ? state.format : 'auto'
  ui.inputFormat.value = ['auto', 'json', 'yaml'].includes(state.inputFormat) ? state.inputFormat : 'auto'
  if (page.source !== '') showSource('')
  examples.reset()
  mappingEditor.reset(String(state.mapping ?? ''), effectiveFormat(ui.format, String(state.mapping ?? '')), false)
  inputEditor.reset(String(state.input ?? ''), effectiveFormat(ui.inputFormat, String(state.input ?? '')), false)
  page.pendingSource = typeof state.source === 'string' ? state.source : ''
  syncFormats()
}

/** Shows text to copy, copied to the clipboard when the browser lets the page. */
async function offerCopy(label, text) {
  ui.copyLabel.textContent = label
  ui.copyText.value = text
  ui.copyBox.hidden = false
  ui.copyText.focus()
  ui.copyText.select()
  try {
    await navigator.clipboard.writeText(text)
    ui.copyLabel.textContent = `${label} (copied)`
  } catch {
    ui.copyLabel.textContent = `${label} (press Ctrl+C to copy)`
  }
}

async function shareLink() {
  const encoded = await persist()
  if (encoded.length > MAX_FRAGMENT_CHARS) {
    notice(`The state is too large for a link (${encoded.length} characters compressed); it is kept in this browser only.`, true)
    return
  }
  await offerCopy('Link to this state', linkFor(encoded))
}

async function copyCurl() {
  const read = readMapping()
  const input = readInput()
  if (read.problem !== undefined || input.problem !== undefined) {
    notice('The mapping or the input does not parse: fix it first to copy the request.', true)
    return
  }
  const body = input.input === undefined ? { mapping: read.mapping } : { mapping: read.mapping, input: input.input }
  if (ui.explainOn.checked && page.explainAllowed && canMap()) body.explain = true
  await offerCopy(canMap() ? 'curl for this POST /map' : 'curl for this POST /validate', curlCommand(canMap() ? 'map' : 'validate', canMap() ? body : { mapping: read.mapping }, page.config.auth))
}

// ---- conversion ------------------------------------------------------------------------------

function convertMapping() {
  const from = mappingEditor.format
  const to = from === 'json' ? 'yaml' : 'json'
  if (page.source !== '') {
    mappingEditor.reset(textOf(page.registered[page.source], to), to, true)
    if (ui.format.value !== 'auto') ui.format.value = to
    syncFormats()
    return
  }
  const converted = convert(mappingEditor.text, from, to)
  if (converted.problem !== undefined) {
    notice(converted.problem, true)
    return
  }
  notice('')
  if (ui.format.value !== 'auto') ui.format.value = to
  mappingEditor.replace(converted.text)
}

// ---- start -----------------------------------------------------------------------------------

async function loadConfig() {
  try {
    const response = await fetch('playground/config.json', { cache: 'no-store', credentials: 'omit' })
    if (!response.ok) throw new Error(`status ${response.status}`)
    page.config = await response.json()
  } catch (error) {
    notice(`The page could not read its configuration (${error.message}); it assumes no auth and validation only.`, true)
  }
  api.auth = page.config.auth === true
  ui.tokenRow.hidden = !api.auth
  if (!page.config.explicit) {
    notice('This server does not evaluate submitted documents (options.map.explicit is off): the page validates your document, and maps registered mappings only.')
    setStatus(ui.outputStatus, 'Mapping your document is off on this server.')
  }
  if (page.config.explain !== true) {
    // The deployment gives no traces to anyone (options.map.explain is off). Where it gives them
    // to some callers only, the first refusal (403) says so instead.
    page.explainAllowed = false
    ui.explainOn.checked = false
    ui.explainOn.disabled = true
    setStatus(ui.explainStatus, 'No traces on this server (options.map.explain is off).')
  }
  ui.run.disabled = !canMap()
}

async function loadSchema() {
  try {
    const response = await fetch('schema/mapping.json', { credentials: 'omit' })
    if (response.ok) page.schema = new LanguageSchema(await response.json())
  } catch {
    // No completion then; everything else works.
  }
}

async function restore() {
  const encoded = stateInFragment(window.location.hash)
  if (encoded !== undefined) {
    try {
      return await decodeState(encoded)
    } catch {
      notice('The link\'s state could not be read (cut or changed?): the page opened your last session instead.', true)
    }
  }
  return loadSession() ?? SAMPLE
}

ui.format.addEventListener('change', () => {
  syncFormats()
  scheduleRun()
  persistSoon()
})
ui.inputFormat.addEventListener('change', () => {
  syncFormats()
  scheduleRun()
  persistSoon()
})
ui.source.addEventListener('change', () => showSource(ui.source.value))
ui.copyToEdit.addEventListener('click', copyToEdit)
ui.convert.addEventListener('click', convertMapping)
let namesTimer
ui.token.addEventListener('input', () => {
  scheduleRun()
  clearTimeout(namesTimer)
  namesTimer = setTimeout(() => {
    void loadNames()
  }, DEBOUNCE_MS)
})
ui.auto.addEventListener('change', () => {
  if (ui.auto.checked) mapNow()
})
ui.explainOn.addEventListener('change', () => mapNow())
ui.run.addEventListener('click', mapNow)
ui.share.addEventListener('click', () => {
  void shareLink()
})
ui.curl.addEventListener('click', () => {
  void copyCurl()
})
ui.copyClose.addEventListener('click', () => {
  ui.copyBox.hidden = true
})
window.addEventListener('hashchange', async () => {
  const encoded = stateInFragment(window.location.hash)
  if (encoded === undefined) return
  try {
    apply(await decodeState(encoded))
    if (page.pendingSource !== '' && Object.hasOwn(page.registered, page.pendingSource)) {
      const pending = page.pendingSource
      page.pendingSource = ''
      showSource(pending)
    }
    scheduleRun()
  } catch {
    notice('The link\'s state could not be read (cut or changed?).', true)
  }
})
document.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && !event.defaultPrevented) {
    event.preventDefault()
    mapNow()
  }
})

await loadConfig()
apply(await restore())
await Promise.all([loadSchema(), loadNames()])
document.body.dataset.ready = 'true'
// For `npm run playground:size`: the page answers keys from here on.
performance.mark('playground-ready')
void run(ui.auto.checked)
