// "Did you mean": the valid name nearest to a misspelt one, for the messages that refuse a name
// (KW-2's unknown keyword, config's unknown option, the CLI's unknown flag or command). In the
// engine, the lowest layer, so that every layer above may use the one rule.

/**
 * The optimal-string-alignment (restricted Damerau-Levenshtein) distance between `a` and `b`: the
 * fewest insertions, deletions, substitutions and transpositions of two adjacent characters that
 * turn one into the other. Past `limit` the exact value does not matter: `limit + 1` is returned as
 * soon as no alignment can stay within it, so a far-off name costs little.
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1
  // Three rows: the one before the previous (for transpositions), the previous, the current.
  let before = new Array<number>(b.length + 1).fill(0)
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  let current = new Array<number>(b.length + 1).fill(0)
  for (let i = 1; i <= a.length; i++) {
    current[0] = i
    let smallest = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1)
      current[j] = d
      if (d < smallest) smallest = d
    }
    if (smallest > limit) return limit + 1
    ;[before, previous, current] = [previous, current, before]
  }
  return Math.min(previous[b.length]!, limit + 1)
}

/**
 * How far a name may be from a valid one and still be taken for a misspelling of it: one edit, two
 * for a name of eight characters or more (a short name two edits away is as likely another word).
 */
export function allowedDistance(name: string): number {
  return name.length >= 8 ? 2 : 1
}

/**
 * The candidates nearest to `name` within `allowedDistance`, in the order given (every one at the
 * smallest distance found; none when all are farther). A candidate that differs only in case is
 * nearest of all. `name` itself is never suggested.
 */
export function closestNames(name: string, candidates: Iterable<string>): string[] {
  const limit = allowedDistance(name)
  const lower = name.toLowerCase()
  let best = limit + 1
  let found: string[] = []
  for (const candidate of candidates) {
    if (candidate === name || found.includes(candidate)) continue
    const distance = candidate.toLowerCase() === lower ? 0 : editDistance(name, candidate, Math.min(limit, best))
    if (distance > limit || distance > best) continue
    if (distance < best) {
      best = distance
      found = []
    }
    found.push(candidate)
  }
  return found
}

/**
 * ` (did you mean source?)`, ` (did you mean maximum or minimum?)`, or '' when no candidate is
 * near: the tail for a message that refuses `name`. `spell` writes a candidate as the message
 * names things (`--include`, `options.playground`).
 */
export function didYouMean(name: string, candidates: Iterable<string>, spell: (candidate: string) => string = (candidate) => candidate): string {
  const found = closestNames(name, candidates)
  if (found.length === 0) return ''
  const names = found.map(spell)
  const listed = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} or ${names.at(-1)!}`
  return ` (did you mean ${listed}?)`
}
