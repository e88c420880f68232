// The explain panel: the trace POST /map answers with `"explain": true`, one entry per pairing run
// (nested runs of `mapping`, `each` and references indented under theirs): its target, the input
// pointers it read, the value after each step, the branch it took, and what it wrote. Selecting an
// entry (a button: click, Enter or Space) asks the page to mark the pairing in the mapping and its
// value in the output.
import { make } from './dom.js'

const escapeToken = (token) => String(token).replace(/~/g, '~0').replace(/\//g, '~1')

/** A JSON preview as one short line. */
function preview(stage) {
  if (stage.absent === true) return 'absent'
  const text = JSON.stringify(stage.value)
  const short = text === undefined ? 'undefined' : text.length > 120 ? `${text.slice(0, 119)}…` : text
  return stage.truncated === true ? `${short} (cut)` : short
}

function branchText(branch) {
  if (branch === undefined || branch === null) return undefined
  if ('variant' in branch) return branch.variant === null ? 'no variant had a value' : `variant ${branch.variant}`
  if ('switch' in branch) {
    const key = branch.key === undefined ? '' : ` (key ${JSON.stringify(branch.key)})`
    return branch.switch === null ? `switch: no case${key}` : `switch: case ${JSON.stringify(branch.switch)}${key}`
  }
  return undefined
}

/**
 * Renders a trace into `list` (an `<ol>`); `onSelect(pairing, outputPointer, button)` is called when
 * an entry is chosen. `outputPointer` is where the pairing wrote in the output: its level's place
 * (the parent's, with the `each` element) followed by its target.
 */
export function renderExplain(list, explanation, onSelect) {
  list.replaceChildren()
  let count = 0
  const add = (into, pairings, base) => {
    for (const pairing of pairings) {
      count++
      const at = `${base}${pairing.element === undefined ? '' : `/${escapeToken(pairing.element)}`}${pairing.target ?? ''}`
      const item = make('li', 'pairing-run')
      const button = make('button', 'pairing')
      button.type = 'button'
      button.dataset.target = at
      button.append(make('code', 'target', pairing.target ?? '(input array)'))
      if (pairing.element !== undefined) button.append(make('span', 'element', `element ${pairing.element}`))
      button.append(make('span', pairing.written === true ? 'written' : 'unwritten', pairing.written === true ? `= ${preview(pairing)}` : 'not written'))
      button.setAttribute('aria-label', `Pairing ${pairing.target ?? ''}${pairing.element === undefined ? '' : ` (element ${pairing.element})`}: ${pairing.written === true ? `wrote ${preview(pairing)}` : 'wrote nothing'}. Show it in the mapping and the output.`)
      button.addEventListener('click', () => onSelect(pairing, at, button))
      item.append(button)
      const facts = make('dl', 'facts')
      const fact = (term, detail) => facts.append(make('dt', '', term), make('dd', '', detail))
      if (Array.isArray(pairing.reads) && pairing.reads.length > 0) fact('reads', pairing.reads.join(', '))
      if (pairing.mapping !== undefined) fact('in', `registered mapping ${pairing.mapping}`)
      const branch = branchText(pairing.branch)
      if (branch !== undefined) fact('branch', branch)
      if (Array.isArray(pairing.plugins)) for (const call of pairing.plugins) fact('plugin', `${call.name}: ${call.ms} ms`)
      if (facts.childElementCount > 0) item.append(facts)
      if (Array.isArray(pairing.stages) && pairing.stages.length > 0) {
        const stages = make('ol', 'stages')
        stages.setAttribute('aria-label', 'steps')
        for (const stage of pairing.stages) {
          const step = make('li', 'stage')
          step.append(make('span', 'stage-name', stage.stage), make('code', 'stage-keyword', stage.keyword ?? ''), make('code', 'stage-value', preview(stage)))
          if (Array.isArray(stage.errors) && stage.errors.length > 0) step.append(make('span', 'stage-errors', `${stage.errors.length} error${stage.errors.length === 1 ? '' : 's'}: ${stage.errors.map((error) => error.message ?? JSON.stringify(error)).join('; ')}`))
          stages.append(step)
        }
        item.append(stages)
      }
      if (Array.isArray(pairing.pairings) && pairing.pairings.length > 0) {
        const nested = make('ol', 'pairings nested')
        add(nested, pairing.pairings, at)
        item.append(nested)
      }
      if (typeof pairing.omitted === 'number' && pairing.omitted > 0) item.append(make('p', 'hint', `${pairing.omitted} more runs not traced`))
      into.append(item)
    }
  }
  add(list, explanation?.pairings ?? [], '')
  return count
}
