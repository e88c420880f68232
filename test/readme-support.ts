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
