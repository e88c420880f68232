// The page's editors: CodeMirror 6 with JSON or YAML highlighting (token classes `tok-*`), line
// numbers, folding, bracket matching and closing, search (Ctrl+F), undo (Ctrl+Z), completion,
// diagnostics (@codemirror/lint: squiggles, hover, gutter markers) and one mark the page sets (the
// pairing chosen in the explain panel, the value it wrote).
//
// Each editor lives in a shadow root of its element. CodeMirror styles itself at run time; in a
// shadow root its style sheets are constructed and adopted (adoptedStyleSheets), which the page's
// Content-Security-Policy (style-src 'self', no inline style) allows, where on the document itself
// it would add a <style> element, which that policy refuses. The editors' own look is the theme
// below, for the same reason (playground.css does not reach into a shadow root).
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from '@codemirror/autocomplete'
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands'
import { json } from '@codemirror/lang-json'
import { yaml } from '@codemirror/lang-yaml'
import { bracketMatching, foldGutter, foldKeymap, indentOnInput, syntaxHighlighting } from '@codemirror/language'
import { lintGutter, lintKeymap, setDiagnostics } from '@codemirror/lint'
import { highlightSelectionMatches, searchKeymap } from '@codemirror/search'
import { Compartment, EditorState, Prec, StateEffect, StateField } from '@codemirror/state'
import { Decoration, EditorView, drawSelection, highlightActiveLine, highlightActiveLineGutter, highlightSpecialChars, keymap, lineNumbers } from '@codemirror/view'
import { classHighlighter } from '@lezer/highlight'

const setMark = StateEffect.define()
const markDecoration = Decoration.mark({ class: 'cm-chosen' })

/** The page's one mark in an editor (null: none); an edit of the text clears it. */
const markField = StateField.define({
  create: () => Decoration.none,
  update(marks, transaction) {
    let next = transaction.docChanged ? Decoration.none : marks
    for (const effect of transaction.effects) {
      if (effect.is(setMark)) next = effect.value === null || effect.value.to <= effect.value.from ? Decoration.none : Decoration.set([markDecoration.range(effect.value.from, effect.value.to)])
    }
    return next
  },
  provide: (field) => EditorView.decorations.from(field),
})

const languageOf = (format) => (format === 'json' ? json() : yaml())

const CODE_FONT = 'ui-monospace, "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace'

/** The editors' look; every text colour 4.5:1 or more on its background. */
const theme = EditorView.theme({
  '&': { height: '100%', width: '100%', fontSize: '13px', color: '#1d2129', backgroundColor: '#ffffff' },
  '&.cm-focused': { outline: 'none' },
  '.cm-scroller': { fontFamily: CODE_FONT, lineHeight: '1.5' },
  '.cm-gutters': { backgroundColor: '#f0f2f5', color: '#4f5663', borderRight: '1px solid #b8bec7' },
  '.cm-activeLine': { backgroundColor: '#f2f6fb' },
  '.cm-activeLineGutter': { backgroundColor: '#e3e8ef' },
  '.cm-chosen': { backgroundColor: '#ffe08a', outline: '1px solid #c99700', borderRadius: '2px' },
  '.cm-tooltip': { fontFamily: 'system-ui, sans-serif', fontSize: '13px' },
  '.cm-keyword-doc': { maxWidth: '420px', padding: '4px 8px' },
  '.cm-keyword-doc p': { margin: '2px 0' },
  '.cm-keyword-doc code': { fontFamily: CODE_FONT, fontWeight: '700' },
  '.cm-completionDetail': { color: '#4f5663', fontStyle: 'normal', marginLeft: '1em' },
  '.cm-tooltip-autocomplete ul li[aria-selected] .cm-completionDetail': { color: 'inherit' },
  '.cm-diagnosticSource': { color: '#4f5663', opacity: '1' },
  // Lint's own squiggles and gutter markers are data: images, which img-src 'self' refuses: drawn
  // with CSS instead (a wavy underline, a dot).
  '.cm-lintRange': { backgroundImage: 'none', paddingBottom: '0', textDecorationLine: 'underline', textDecorationStyle: 'wavy', textDecorationSkipInk: 'none', textUnderlineOffset: '3px' },
  '.cm-lintRange-error': { backgroundImage: 'none', textDecorationColor: '#c62828' },
  '.cm-lintRange-warning': { backgroundImage: 'none', textDecorationColor: '#b26a00' },
  '.cm-lintRange-info, .cm-lintRange-hint': { backgroundImage: 'none', textDecorationColor: '#4f5663' },
  '.cm-lint-marker': { content: 'normal', width: '0.6em', height: '0.6em', margin: '0.3em 0.2em', borderRadius: '50%' },
  '.cm-lint-marker-error': { content: 'normal', backgroundColor: '#c62828' },
  '.cm-lint-marker-warning': { content: 'normal', backgroundColor: '#b26a00' },
  '.cm-lint-marker-info': { content: 'normal', backgroundColor: '#4f5663' },
  '.tok-propertyName, .tok-definition': { color: '#0b5394' },
  '.tok-string': { color: '#1b6b2f' },
  '.tok-number': { color: '#8a3b00' },
  '.tok-bool, .tok-null, .tok-atom, .tok-keyword': { color: '#7a1fa2' },
  '.tok-comment': { color: '#5b6270', fontStyle: 'italic' },
  '.tok-meta, .tok-punctuation': { color: '#4f5663' },
  '.tok-invalid': { color: '#b3261e' },
})

/**
 * An editor in `parent`.
 * @param {object} options
 * @param {HTMLElement} options.parent
 * @param {string} options.doc
 * @param {'json' | 'yaml'} options.format
 * @param {string} options.label its accessible name
 * @param {boolean} [options.readOnly]
 * @param {() => void} [options.onChange] called after each edit of the text
 * @param {() => void} [options.onRun] Ctrl+Enter (Cmd+Enter)
 * @param {import('@codemirror/autocomplete').CompletionSource} [options.complete]
 * @param {import('@codemirror/state').Extension} [options.hover]
 */
export function createEditor(options) {
  const language = new Compartment()
  const readOnly = new Compartment()
  const extensions = (format, locked) => [
    Prec.highest(keymap.of([{ key: 'Mod-Enter', run: () => { options.onRun?.(); return true } }])),
    lineNumbers(),
    foldGutter(),
    lintGutter(),
    highlightActiveLineGutter(),
    highlightSpecialChars(),
    history(),
    drawSelection(),
    EditorState.allowMultipleSelections.of(true),
    indentOnInput(),
    syntaxHighlighting(classHighlighter),
    bracketMatching(),
    closeBrackets(),
    highlightActiveLine(),
    highlightSelectionMatches(),
    EditorState.tabSize.of(2),
    language.of(languageOf(format)),
    readOnly.of(EditorState.readOnly.of(locked)),
    markField,
    theme,
    options.complete === undefined ? [] : autocompletion({ override: [options.complete], icons: false }),
    options.hover ?? [],
    keymap.of([
      ...closeBracketsKeymap,
      ...defaultKeymap,
      ...searchKeymap,
      ...historyKeymap,
      ...foldKeymap,
      ...completionKeymap,
      ...lintKeymap,
      // Tab indents; Escape then Tab leaves the editor (CodeMirror's own escape for keyboard users).
      indentWithTab,
    ]),
    // A label by id cannot reach across the shadow root: the label's text is given.
    EditorView.contentAttributes.of({
      'aria-label': options.label,
      'aria-multiline': 'true',
      spellcheck: 'false',
      autocapitalize: 'off',
      autocorrect: 'off',
    }),
    // Typing over a selection is applied here rather than by the browser, whose editing would
    // try to keep the replaced text's look with a style attribute (which the CSP refuses).
    EditorView.domEventHandlers({
      beforeinput(event, view) {
        if (event.inputType !== 'insertText' || event.isComposing || typeof event.data !== 'string' || view.state.selection.ranges.every((range) => range.empty)) return false
        if (view.state.readOnly) {
          event.preventDefault()
          return true
        }
        view.dispatch(view.state.replaceSelection(event.data), { scrollIntoView: true, userEvent: 'input.type' })
        event.preventDefault()
        return true
      },
    }),
    EditorView.updateListener.of((update) => {
      if (update.docChanged) options.onChange?.()
    }),
  ]
  const stateFor = (doc, format, locked) => EditorState.create({ doc, extensions: extensions(format, locked) })
  const root = options.parent.attachShadow({ mode: 'open' })
  const view = new EditorView({ root, parent: root, state: stateFor(options.doc, options.format, options.readOnly === true) })
  let format = options.format

  return {
    view,
    get text() {
      return view.state.doc.toString()
    },
    get format() {
      return format
    },
    /** Highlights the text as JSON or YAML. */
    setFormat(next) {
      if (next === format) return
      format = next
      view.dispatch({ effects: language.reconfigure(languageOf(next)) })
    },
    setReadOnly(locked) {
      view.dispatch({ effects: readOnly.reconfigure(EditorState.readOnly.of(locked)) })
    },
    /** Replaces the text as one edit (Ctrl+Z brings the old text back). */
    replace(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } })
    },
    /** A fresh editor state: new text, no undo history (another document on show). */
    reset(text, nextFormat, locked) {
      format = nextFormat
      view.setState(stateFor(text, nextFormat, locked))
    },
    /** Brings back a state `view.state` held (your document, after a registered one was on show). */
    restore(state, nextFormat) {
      format = nextFormat
      view.setState(state)
    },
    /** Sets the page's mark (null: none) and scrolls it into view. */
    mark(range) {
      const effects = [setMark.of(range)]
      if (range !== null) effects.push(EditorView.scrollIntoView(range.from, { y: 'center' }))
      view.dispatch({ effects })
    },
    /** Selects a range, scrolls to it and focuses the editor. */
    select(range) {
      view.dispatch({ selection: { anchor: range.from, head: range.to }, effects: EditorView.scrollIntoView(range.from, { y: 'center' }) })
      view.focus()
    },
    diagnose(diagnostics) {
      view.dispatch(setDiagnostics(view.state, diagnostics))
    },
  }
}
