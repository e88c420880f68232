// Code generation (issue 20): a level's pairings compiled to one JavaScript function, so that a
// level runs as straight-line code — direct property reads for the pointer tokens known when the
// document compiles, the value stored straight into the level's target — instead of one closure
// call per pairing, per read and per write. A pairing the generator does not inline (a structural
// or switching right side, a variant list, a relative reference) calls its compiled `run`, exactly
// as the closure plan does; the closure plan stays the fallback for whole levels too (explain mode,
// levels past MAX_GENERATED, engines created with `codegen: false`).
//
// Caller text never becomes code. The only strings of a document that enter the source are
// property keys and reference tokens, and they enter through `literal` alone, which emits a JSON
// string literal (with U+2028 and U+2029 escaped as well); everything else a level needs (plans,
// writers, the pairings themselves) is passed in as the elements of a constants array, and every
// identifier in the source is the generator's own.
import type { Context, Level, Pairing, Pairings, Print } from './context.js'
import { isInherited, readToken } from './pointer.js'
import { finishAsync, placed } from './procedures.js'

/** Past this many pairings a level keeps the closure plan: one huge function is compiled slowly and seldom optimized. */
export const MAX_GENERATED = 1000

/** A string as a JavaScript string literal: the only way document text enters generated source. */
export function literal(text: string): string {
  return JSON.stringify(text).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')
}

/** What the generated source may call, passed in rather than named from the surrounding scope. */
interface Runtime {
  readonly list: readonly Pairing[]
  readonly pairings: Pairings
  readonly readToken: typeof readToken
  readonly finishAsync: typeof finishAsync
  readonly placed: typeof placed
}

/** Source that reads reference `tokens` from the value in `v`, leaving the result in `v`. */
function readCode(tokens: readonly string[]): string {
  // An empty pointer, or one whose first token is empty, denotes the whole value (pointer.ts).
  if (tokens.length === 0 || tokens[0] === '') return ''
  let code = ''
  for (const token of tokens) {
    code += isInherited(token)
      ? `v = rt.readToken(v, ${literal(token)});\n`
      : `v = v !== null && typeof v === 'object' ? v[${literal(token)}] : undefined;\n`
  }
  return code
}

/** Source that stores `v` (settled, not undefined-checked yet) for pairing `index`, as Put does. */
function storeCode(index: number, ownKey: string | undefined): string {
  if (ownKey === undefined) return `if (v !== undefined) list[${index}].inline.put(pc, v, false);\n`
  return (
    'if (v !== undefined) {\n' +
    `  if (targetIsArray) list[${index}].inline.put(pc, v, false);\n` +
    '  else {\n' +
    '    if (typeof v === \'string\') run.wroteText(v.length);\n' +
    '    else if (v !== null && typeof v === \'object\') { run.wroteReference(v); run.markForeign(v); }\n' +
    `    target[${literal(ownKey)}] = v;\n` +
    '  }\n' +
    '}\n'
  )
}

/** The source of one pairing's step. */
function pairingCode(pairing: Pairing, index: number): string {
  const inline = pairing.inline
  const rest = `return rt.finishAsync(rt.pairings, context, pc, ${index}, p, print);\n`
  let code = `i = ${index};\n`
  if (inline === undefined) {
    code += `p = list[${index}].run(pc);\nif (p !== undefined) ${rest}`
  } else if (inline.read !== undefined) {
    code +=
      `if (shadows) {\n  p = list[${index}].run(pc);\n  if (p !== undefined) ${rest}} else {\n` +
      `v = source;\n${readCode(inline.read)}${storeCode(index, inline.ownKey)}}\n`
  } else {
    code +=
      `v = list[${index}].inline.get(pc);\n` +
      `if (v instanceof Promise) { const put = list[${index}].inline.put; p = v.then((settled) => put(pc, settled, false)); ${rest}}\n` +
      storeCode(index, inline.ownKey)
  }
  return code + 'if (errors.length > 0) return null;\n'
}

/** The body of a level's function: (rt) => (context, pc, print) => undefined | null | Promise. */
export function levelSource(list: readonly Pairing[]): string {
  let body = ''
  for (let index = 0; index < list.length; index++) body += pairingCode(list[index]!, index)
  return (
    '\'use strict\';\n' +
    'const list = rt.list;\n' +
    'return function level(context, pc, print) {\n' +
    'const run = context.run;\n' +
    'const errors = run.errors;\n' +
    'const shadows = run.registry.shadowsPointers;\n' +
    'const source = pc.source;\n' +
    'const target = pc.target;\n' +
    'const targetIsArray = Array.isArray(target);\n' +
    'let v, p, i = 0;\n' +
    `try {\n${body}} catch (error) {\n  throw rt.placed(error, list[i]);\n}\n` +
    'return undefined;\n' +
    '};\n'
  )
}

/** Whether this process lets code be generated from strings (`--disallow-code-generation-from-strings` does not). */
let generationAllowed: boolean | undefined

function canGenerate(): boolean {
  if (generationAllowed === undefined) {
    try {
      // eslint-disable-next-line no-new-func -- a constant probe: may this process generate code?
      generationAllowed = new Function('return true')() === true
    } catch {
      generationAllowed = false
    }
  }
  return generationAllowed
}

/**
 * The generated function of a level, or undefined when the level keeps the closure plan: none of
 * its pairings inlines (the function would only add a frame to every recursion through it), more
 * than MAX_GENERATED, or code generation refused by the process.
 */
export function generateLevel(pairings: Pairings): Level | undefined {
  const list = pairings.list
  if (list.length > MAX_GENERATED || !list.some((pairing) => pairing.inline !== undefined) || !canGenerate()) return undefined
  const runtime: Runtime = { list, pairings, readToken, finishAsync, placed }
  // eslint-disable-next-line no-new-func -- the source is built from literal() and the generator's own text only
  const make = new Function('rt', levelSource(list)) as (rt: Runtime) => (context: Context, pc: Context, print: Print | undefined) => ReturnType<Level>
  return make(runtime)
}
