// Small DOM helpers the panels share.

/** An element with a class (none for '') and, when given, its text. */
export function make(tag, className = '', text = undefined) {
  const node = document.createElement(tag)
  if (className !== '') node.className = className
  if (text !== undefined) node.textContent = text
  return node
}

/** A button of the page (type="button", so it submits nothing). */
export function button(className, text, label, onClick) {
  const node = make('button', className, text)
  node.type = 'button'
  if (label !== undefined) node.setAttribute('aria-label', label)
  node.addEventListener('click', onClick)
  return node
}

/** A status line's text; `failure` shows it as one. */
export function setStatus(target, text, failure = false) {
  target.textContent = text
  target.classList.toggle('failure', failure)
}

/** `1 error`, `2 warnings`. */
export const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`
