// A JSON value printed as JSON.stringify(value, null, 2) prints it, one element per line, each
// line knowing the JSON Pointer of the value it holds, so that the lines at a difference can be
// marked (examples.js).

const escapeToken = (token) => String(token).replace(/~/g, '~0').replace(/\//g, '~1')

/** `[{ text, pointer }]`: the printed lines of a value; a closing bracket has its container's pointer. */
export function jsonLines(value) {
  const lines = []
  const walk = (node, pointer, indent, prefix, suffix) => {
    if (Array.isArray(node) && node.length > 0) {
      lines.push({ text: `${indent}${prefix}[`, pointer })
      node.forEach((item, i) => walk(item, `${pointer}/${i}`, `${indent}  `, '', i < node.length - 1 ? ',' : ''))
      lines.push({ text: `${indent}]${suffix}`, pointer })
      return
    }
    if (node !== null && typeof node === 'object' && !Array.isArray(node) && Object.keys(node).length > 0) {
      lines.push({ text: `${indent}${prefix}{`, pointer })
      const keys = Object.keys(node).filter((key) => node[key] !== undefined)
      keys.forEach((key, i) => walk(node[key], `${pointer}/${escapeToken(key)}`, `${indent}  `, `${JSON.stringify(key)}: `, i < keys.length - 1 ? ',' : ''))
      lines.push({ text: `${indent}}${suffix}`, pointer })
      return
    }
    const text = JSON.stringify(node)
    lines.push({ text: `${indent}${prefix}${text === undefined ? 'null' : text}${suffix}`, pointer })
  }
  walk(value, '', '', '', '')
  return lines
}

/** Whether `pointer` is `at` or inside it. */
export const within = (pointer, at) => pointer === at || pointer.startsWith(`${at}/`) || at === ''
