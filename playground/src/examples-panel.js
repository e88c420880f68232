// The examples panel: the examples of the mapping on show (your document's, or a registered
// mapping's), each a button that runs it and shows the expected envelope beside the actual one,
// the lines where they differ marked; "Run all" runs them in order, as `mapper-service test` does.
// Once run, they run again after each edit of the mapping that maps (examples.js judges them).
import { button, make, plural, setStatus } from './dom.js'
import { describeDifference, examplesOf, judge, renderJson } from './examples.js'

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)

export class ExamplesPanel {
  /**
   * @param {object} options
   * @param {{ list: HTMLElement, status: HTMLElement, detail: HTMLElement, run: HTMLButtonElement }} options.elements
   * @param {import('./api.js').Api} options.api
   * @param {() => boolean} options.canMap whether the page can map what is on show
   * @param {(input: unknown) => void} options.useInput puts an example's input in the input editor
   */
  constructor({ elements, api, canMap, useInput }) {
    this.elements = elements
    this.api = api
    this.canMap = canMap
    this.useInput = useInput
    this.examples = []
    this.signature = undefined
    this.owner = 'your document'
    /** Results by the example's pointer. */
    this.results = new Map()
    /** The example whose comparison is on show. */
    this.chosen = undefined
    /** Once run, the examples run again after each edit that maps. */
    this.live = false
    /** Bumped when the mapping changes: a run for an older one is dropped. */
    this.epoch = 0
    elements.run.addEventListener('click', () => {
      void this.run()
    })
  }

  /** The examples of a document (`registeredId`: a registered mapping's), listed when they changed. */
  show(document, registeredId) {
    const found = examplesOf(document, registeredId)
    this.owner = registeredId === undefined ? 'your document' : `the registered mapping ${registeredId}`
    const signature = JSON.stringify([registeredId, found.map((item) => [item.pointer, item.example])])
    if (signature === this.signature) return
    this.signature = signature
    this.examples = found
    this.render()
  }

  /** The mapping changed: the results describe the one before. */
  outdated() {
    this.epoch++
    if (this.results.size === 0) return
    this.results.clear()
    this.render()
  }

  /** Another mapping on show: nothing of the last one's examples is kept. */
  reset() {
    this.outdated()
    this.live = false
    this.chosen = undefined
  }

  render() {
    const { list, status, detail, run } = this.elements
    list.replaceChildren()
    if (this.examples.length === 0) {
      setStatus(status, `No examples in ${this.owner}. A document states them under "examples": [{ input, output }].`)
      run.disabled = true
      detail.replaceChildren()
      return
    }
    run.disabled = !this.canMap()
    for (const item of this.examples) list.append(this.row(item))
    const results = this.examples.map((item) => this.results.get(item.pointer)).filter((result) => result !== undefined)
    const failing = results.filter((result) => !result.pass).length
    setStatus(status, results.length === 0
      ? `${plural(this.examples.length, 'example')} in ${this.owner}.${this.canMap() ? '' : ' Running them needs options.map.explicit.'}`
      : `${results.length} of ${plural(this.examples.length, 'example')} run: ${results.length - failing} passed, ${failing} failed.`, failing > 0)
    this.renderDetail()
  }

  row(item) {
    const result = this.results.get(item.pointer)
    const row = make('li', 'example')
    row.dataset.pointer = item.pointer
    if (this.chosen === item.pointer) row.setAttribute('aria-current', 'true')
    const name = `${item.pointer}${item.example.description === undefined ? '' : ` ${item.example.description}`}`
    const [verdict, kind] = result === undefined ? ['not run', 'unrun'] : result.error !== undefined ? ['error', 'fail'] : result.pass ? ['pass', 'pass'] : [`fails: ${plural(result.differences.length, 'difference')}`, 'fail']
    row.append(
      button('example-name', name, `Run example ${item.pointer} and compare`, () => {
        this.chosen = item.pointer
        void this.run([item])
      }),
      make('span', `verdict ${kind}`, verdict),
      button('use-input', 'Use input', `Put the input of example ${item.pointer} in the input editor`, () => this.useInput(item.example.input ?? null))
    )
    return row
  }

  /** The chosen example: the expected envelope beside the actual one, the lines that differ marked. */
  renderDetail() {
    const { detail } = this.elements
    const item = this.examples.find((candidate) => candidate.pointer === this.chosen)
    const result = item === undefined ? undefined : this.results.get(item.pointer)
    detail.replaceChildren()
    if (result === undefined) return
    detail.append(make('h3', '', `${item.pointer}: ${result.error !== undefined ? 'error' : result.pass ? 'passes' : 'fails'}`))
    if (result.error !== undefined) {
      detail.append(make('p', 'failure', result.error))
      return
    }
    if (result.differences.length > 0) {
      const list = make('ul', 'differences')
      for (const difference of result.differences) list.append(make('li', '', describeDifference(difference)))
      detail.append(list)
    }
    const side = (title, value, marked) => {
      const figure = make('figure')
      figure.append(make('figcaption', '', title), renderJson(value, marked, `${title} envelope of ${item.pointer}`))
      return figure
    }
    const marks = (side) => result.differences.filter((difference) => side in difference).map((difference) => difference.pointer)
    const sides = make('div', 'sides')
    sides.append(side('Expected', result.expected, marks('expected')), side('Actual', result.actual, marks('actual')))
    detail.append(sides)
  }

  /** Runs examples (all on show by default) through POST /map, one at a time, in order. */
  async run(list = this.examples) {
    if (!this.canMap() || list.length === 0) return
    this.live = true
    const epoch = this.epoch
    setStatus(this.elements.status, `Running ${plural(list.length, 'example')}…`)
    for (const item of list) {
      let result
      try {
        const answer = await this.api.post('map', { mapping: item.target, input: item.example.input })
        if (answer.status === 200 && isObject(answer.payload)) result = judge(item.example, answer.payload)
        else result = { pass: false, differences: [], error: this.api.describe(answer) }
      } catch (error) {
        result = { pass: false, differences: [], error: `The server could not be reached: ${error.message}` }
      }
      if (epoch !== this.epoch) return
      this.results.set(item.pointer, result)
    }
    if (this.chosen === undefined) this.chosen = (list.find((item) => !this.results.get(item.pointer)?.pass) ?? list[0]).pointer
    this.render()
  }
}
