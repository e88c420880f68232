// The README's code as the tests run it: a section found by its heading, and the fenced blocks in
// it, verbatim (the text between the fences, nothing added or taken away). A test that runs a
// README snippet reads it from here at test time, so a README that stops working fails a test.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './startup-support.js'

export interface FencedBlock {
  /** The info string's first word (`ts`, `sh`, `jsonc`), '' when there is none. */
  readonly lang: string
  /** The lines between the fences, each ending in a newline. */
  readonly code: string
  /** The line of the opening fence in the text it was found in, from 1. */
  readonly line: number
}

/** README.md as it is now. */
export const readme = (): string => readFileSync(join(ROOT, 'README.md'), 'utf8')

/**
 * The section under the heading whose text is `title` (any level), up to the next heading of the
 * same or a higher level; headings inside fenced blocks (a shell comment) do not count. Throws
 * naming the title when the README has no such heading, so a renamed section fails loudly.
 */
export function readmeSection(title: string, text = readme()): string {
  const lines = text.split('\n')
  let fenced = false
  let start = -1
  let level = 0
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
    if (fenced) continue
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading === null) continue
    if (start === -1) {
      if (heading[2] === title) {
        start = i
        level = heading[1]!.length
      }
    } else if (heading[1]!.length <= level) {
      return lines.slice(start, i).join('\n')
    }
  }
  if (start === -1) throw new Error(`README.md has no heading "${title}"`)
  return lines.slice(start).join('\n')
}

/** The fenced code blocks of `text`, in order; `lang` keeps only those whose info string starts with it. */
export function fencedBlocks(text: string, lang?: string): FencedBlock[] {
  const blocks: FencedBlock[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!)
    if (open === null) continue
    const fence = open[2]!
    const body: string[] = []
    let j = i + 1
    while (j < lines.length && !lines[j]!.trimStart().startsWith(fence)) body.push(lines[j++]!)
    if (j === lines.length) throw new Error(`the code block opened at line ${i + 1} is never closed`)
    if (lang === undefined || open[3] === lang) blocks.push({ lang: open[3]!, code: body.map((line) => `${line}\n`).join(''), line: i + 1 })
    i = j
  }
  return blocks
}

/** A fenced block of the README with the heading it stands under. */
export interface PlacedBlock extends FencedBlock {
  /** The text of the nearest heading above the block ('' before the first). */
  readonly section: string
  /** The block's first line, trimmed (what tells two blocks of one section apart). */
  readonly first: string
}

/** Every fenced block of `text` (the README by default), each with the heading it stands under. */
export function placedBlocks(text = readme()): PlacedBlock[] {
  const headings: Array<{ line: number; title: string }> = []
  const lines = text.split('\n')
  let fenced = false
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*(```|~~~)/.test(lines[i]!)) fenced = !fenced
    const heading = fenced ? null : /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(lines[i]!)
    if (heading !== null) headings.push({ line: i + 1, title: heading[2]! })
  }
  return fencedBlocks(text).map((block) => ({
    ...block,
    section: headings.filter((heading) => heading.line < block.line).at(-1)?.title ?? '',
    first: block.code.split('\n')[0]!.trim(),
  }))
}
