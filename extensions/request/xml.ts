// XML bodies as JSON (request-plugin.md §1: `xml` raw, `json` parsed), with cheerio's XML mode
// (htmlparser2) so no further parser is needed. The shape follows the common fast-xml-parser
// convention: attributes as `@_name`, an element's own text as `#text` when it also has
// attributes or children, a repeated element name as a list. Values stay strings: nothing is
// guessed to be a number. Comments, processing instructions and the doctype are left out;
// entities are decoded and no external entity is ever fetched.
import { cheerio } from './cheerio.js'
import type { AnyNode, Element } from 'domhandler'
import { ownMember, setMember } from './record.js'

function isElement(node: AnyNode): node is Element {
  return node.type === 'tag' || node.type === 'script' || node.type === 'style'
}

/** Add a member, turning a second occurrence of the name into a list. */
function addMember(record: Record<string, unknown>, key: string, value: unknown): void {
  const existing = ownMember(record, key)
  if (existing === undefined) setMember(record, key, value)
  else if (Array.isArray(existing)) existing.push(value)
  else setMember(record, key, [existing, value])
}

function textOf(node: AnyNode): string {
  if (node.type === 'text') return node.data
  if (node.type === 'cdata') return node.children.map(textOf).join('')
  return ''
}

function elementValue(element: Element): unknown {
  const record: Record<string, unknown> = {}
  let structured = false
  for (const [name, value] of Object.entries(element.attribs)) {
    setMember(record, `@_${name}`, value)
    structured = true
  }
  let text = ''
  for (const child of element.children) {
    if (isElement(child)) {
      addMember(record, child.name, elementValue(child))
      structured = true
    } else {
      text += textOf(child)
    }
  }
  text = text.trim()
  if (!structured) return text
  if (text !== '') setMember(record, '#text', text)
  return record
}

/** The document's top-level elements by name (normally the one root element); `url` is where it came from. */
export function xmlToJson(xml: string, url: string): Record<string, unknown> {
  const $ = cheerio(`Parsing the XML response of ${url}`).load(xml, { xml: true })
  const document: Record<string, unknown> = {}
  for (const node of $.root()[0]!.children) {
    if (isElement(node)) addMember(document, node.name, elementValue(node))
  }
  return document
}
