// Code generation (issue 20): a level's pairings compiled to JavaScript, so that a level runs as
// straight-line code: direct property reads for the pointer tokens known when the document
// compiles, the inline form of each keyword that has one written out in place (engine/codegen/
// inline.ts: the keyword record names its form, the driver writes it), the value stored straight
// into the level's target, and a structural right side with pairings written in place mapped by a
// loop over the nested level's own generated function, with no Context made per element.
//
// Two functions per level. `free` exists when every pairing has a generated form: it needs no
// Context (Pairings.free). `level` serves the rest: the generated pairings inline, every other one
// calls its compiled `run` exactly as the closure plan does. Either runs only while no registered
// id shadows a pointer string; the closure plan stays the fallback for whole levels (explain mode,
// levels past MAX_GENERATED, engines created with `codegen: false`, processes that refuse code
// generation from strings).
//
// Caller text never becomes code: every piece of source is written with the `_` builder of
// code.ts, which writes any value that is not code as its literal. Everything else a level needs
// (plans, writers, nested levels, objects of the document, the keywords' helpers) is passed in as
// constants, and every identifier in the source is the generator's own (a `Name`).
import type { Context, EvaluationRun, Free, Level, Pairing, Pairings, Print } from '../context.js'
import { compileReader, isArrayIndex, isInherited, parsePointer, readToken } from '../pointer.js'
import { finishAsync, placed } from '../procedures.js'
import { supplier } from '../values.js'
import { _, join, Name, nil, SOURCE, type Code, type CodeGen } from './code.js'

/** Past this many pairings a level keeps the closure plan: one huge function is compiled slowly and seldom optimized. */
export const MAX_GENERATED = 1000

/**
 * Past this many characters of source a level keeps the closure plan: what a document's text can
 * make the generator write is bounded, whatever its shape (a pipeline's many elements, long pointers).
 */
export const MAX_SOURCE = 256 * 1024

/** Pointers of more reference tokens than this are read and written through their compiled closures, not written out. */
export const MAX_INLINE_TOKENS = 16

/** What the generated source may call, passed in rather than named from the surrounding scope. */
interface Runtime {
  readonly list: readonly Pairing[]
  readonly pairings: Pairings
  readonly constants: readonly unknown[]
  readonly readToken: typeof readToken
  readonly finishAsync: typeof finishAsync
  readonly placed: typeof placed
  readonly noMembers: object
}

/** What a level reads its source's members from when the source is no object: nothing at all. */
export const NO_MEMBERS: object = Object.freeze(Object.create(null) as object)

/**
 * Source that reads reference `tokens` from the value in `v`, leaving the result in `v`: the
 * inline form of a compiled reader (pointer.ts compileReader), which a long pointer calls instead.
 */
export function readCode(tokens: readonly string[], gen: Generator): Code {
  // An empty pointer, or one whose first token is empty, denotes the whole value (pointer.ts).
  if (tokens.length === 0 || tokens[0] === '') return nil
  // A long pointer is one call of its compiled reader, not a line per token.
  if (tokens.length > MAX_INLINE_TOKENS) return _`v = ${gen.constant(compileReader(tokens))}(v);\n`
  return tokenReads(tokens)
}

/** Source that reads each of `tokens` in turn from the value in `v` (an empty token is the key ""). */
function tokenReads(tokens: readonly string[]): Code {
  return join(
    tokens.map((token) =>
      isInherited(token) ? _`v = readToken(v, ${token});\n` : _`v = v !== null && typeof v === 'object' ? v[${token}] : undefined;\n`
    )
  )
}

/**
 * Source that reads reference `tokens` from the level's source into `v`. Every function of a level
 * looks at its source once (`SOURCE_OBJECT`): `so` is the source when it is an object, else an
 * empty object without a prototype, so that a read's first token is one property load with no
 * test before it. Measured on Node 24 (the array workload's element level): a test of the source
 * before each read kept V8 from sharing one map check among them, and cost a fifth of the level.
 */
function sourceReadCode(tokens: readonly string[], gen: Generator): Code {
  const first = tokens[0]
  if (first === undefined || first === '' || tokens.length > MAX_INLINE_TOKENS || isInherited(first)) return _`v = source;\n${readCode(tokens, gen)}`
  return _`v = so[${first}];\n${tokenReads(tokens.slice(1))}`
}

/** The declaration every function of a level opens with: its source as an object (`sourceReadCode`). */
export const SOURCE_OBJECT = _`const so = source !== null && typeof source === 'object' ? source : NO_MEMBERS;\n`

/** One level's source being written: its constants and locals (inline.ts CodeGen). */
export class Generator implements CodeGen {
  readonly constants: unknown[] = []
  private readonly named = new Map<unknown, Name>()
  private locals = 0

  constant(value: unknown): Name {
    let name = this.named.get(value)
    if (name === undefined) {
      name = new Name(`c${this.constants.length}`)
      this.constants.push(value)
      this.named.set(value, name)
    }
    return name
  }

  value(json: unknown): Code {
    switch (typeof json) {
      case 'string':
      case 'boolean':
        return _`${json}`
      case 'number':
        return Number.isFinite(json) && !Object.is(json, -0) ? _`${json}` : this.constant(json)
      case 'object':
        return json === null ? _`null` : _`${this.constant(supplier(json))}()`
      default:
        return this.constant(json)
    }
  }

  read(pointer: unknown, from?: Code): Code | undefined {
    let tokens: readonly string[]
    try {
      tokens = parsePointer(pointer)
    } catch {
      return undefined
    }
    if (from === SOURCE) return sourceReadCode(tokens, this)
    return _`${from === undefined ? nil : _`v = ${from};\n`}${readCode(tokens, this)}`
  }

  local(): Name {
    return new Name(`l${this.locals++}`)
  }

  /** How many locals are taken so far: the bounds of the ones a piece of source took. */
  mark(): number {
    return this.locals
  }

  /** The declarations a function of the level starts with: its own locals, `[from, to)` ranges of them. */
  declarations(ranges: readonly (readonly [number, number])[]): Code {
    const names: Code[] = [_`v`, _`w`, _`i = 0`]
    for (const [from, to] of ranges) for (let i = from; i < to; i++) names.push(new Name(`l${i}`))
    return _`let ${join(names, _`, `)};\n`
  }
}

/** A pairing's value computed into `v` by generated source alone; `fresh`: a container the engine built for it. */
interface ValueCode {
  readonly code: Code
  readonly fresh: boolean
}

/**
 * Source computing a pairing's right side into `v` with no Context, or undefined when it has no
 * generated form. The locals it sees: `source`, the level's source; `depth`, its context's depth;
 * `run` and `errors`.
 */
function valueCode(pairing: Pairing, gen: Generator): ValueCode | undefined {
  const inline = pairing.inline
  if (inline === undefined) return undefined
  if (inline.read !== undefined) return { code: sourceReadCode(inline.read, gen), fresh: false }
  const plan = inline.plan
  const pipeline = plan?.emit?.(gen)
  if (plan === undefined || pipeline === undefined) return undefined
  const nested = inline.nested
  if (nested === undefined) return plan.structural ? undefined : { code: pipeline, fresh: false }
  if (nested.free === undefined) return undefined
  // putPlan, dispatch and nest (procedures.ts) written out: the shifted context's depth, its GET,
  // then an object mapped once or an array element by element (a fan-out that cannot go async),
  // each element's level entered and counted as nest counts it.
  const run = gen.constant(nested.made)
  const level = gen.constant(nested)
  const depth = gen.local()
  const list = gen.local()
  const out = gen.local()
  const index = gen.local()
  const element = gen.local()
  const code = _`${depth} = depth + 1;
if (${depth} > run.deepest) run.reached(${depth});
${pipeline}if (v !== null && typeof v === 'object') {
  ${depth}++;
  if (Array.isArray(v)) {
    ${list} = v;
    ${out} = new Array(${list}.length);
    if (${list}.length > 0 && ${depth} > run.deepest) run.reached(${depth});
    for (${index} = 0; ${index} < ${list}.length; ${index}++) {
      ${element} = ${list}[${index}];
      run.enterLevel(${level});
      ${out}[${index}] = ${run}(run, ${element} === undefined ? source : ${element}, null, ${depth});
    }
    v = ${out};
  } else {
    if (${depth} > run.deepest) run.reached(${depth});
    run.enterLevel(${level});
    v = ${run}(run, v, null, ${depth});
  }
}
`
  return { code, fresh: true }
}

/**
 * The tokens of a left pointer that a generated write may walk itself: at least two, each
 * container on the way a plain object of the engine's (a missing one created as an object: no
 * token after the first is `-` or an array index) and found by a plain property read (no
 * intermediate token names an inherited member), the last one not `__proto__`. Undefined for any
 * other pointer, which keeps its compiled writer.
 */
export function objectPath(pointer: string): readonly string[] | undefined {
  let tokens: readonly string[]
  try {
    tokens = parsePointer(pointer)
  } catch {
    return undefined
  }
  if (tokens.length < 2 || tokens.length > MAX_INLINE_TOKENS || tokens[tokens.length - 1] === '__proto__') return undefined
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    if (i > 0 && (token === '-' || isArrayIndex(token))) return undefined
    if (i < tokens.length - 1 && isInherited(token)) return undefined
  }
  return tokens
}

/**
 * Source that counts `v`, a value about to be written, against the output budgets: Run.wrote
 * written out (a call per write cost `small` and `array` about 4 % in npm run bench); `fresh` as
 * in storeCode. test/engine-inline.test.ts holds the two to each other.
 */
export function accountCode(fresh: boolean): Code {
  return fresh
    ? _`if (typeof v === 'string') run.wroteText(v.length);\n`
    : _`if (typeof v === 'string') run.wroteText(v.length);\nelse if (v !== null && typeof v === 'object') { run.wroteReference(v); run.markForeign(v); }\n`
}

/**
 * Source that stores `v` (not undefined-checked yet) for `pairing`, as its Put does (procedures.ts
 * putter). `arrays`: the target may be an array (a `level` function's; a `free` one's never is).
 */
function storeCode(pairing: Pairing, fresh: boolean, gen: Generator, arrays: boolean): Code {
  const account = accountCode(fresh)
  const through = _`w = ${gen.constant(pairing.write)}(target, v, run);\nif (w !== undefined) errors.push({ target: ${pairing.pointer}, message: w });\n`
  const ownKey = pairing.inline?.ownKey
  if (ownKey !== undefined) {
    const own = _`target[${ownKey}] = v;\n`
    return _`if (v !== undefined) {\n${account}${arrays ? _`if (targetIsArray) {\n${through}} else ${own}` : own}}\n`
  }
  const path = objectPath(pairing.pointer)
  if (path === undefined) return _`if (v !== undefined) {\n${account}${through}}\n`
  return _`if (v !== undefined) {\n${account}write: {\n${arrays ? _`if (targetIsArray) {\n${through}break write;\n}\n` : nil}${walkCode(path, gen, through)}}\n}\n`
}

/**
 * Source that writes `v` at `path` (objectPath's tokens) into `target`, inside a block labelled
 * `write`: the compiled writer's walk (pointer.ts compileWriter) written out while every container
 * on the way is the engine's own object. A missing one is created; anything else (an array, a
 * primitive, a container from outside) runs `through`, the compiled writer from the top, before
 * anything changed. test/engine-inline.test.ts holds the two to each other.
 */
export function walkCode(path: readonly string[], gen: Generator, through: Code): Code {
  const container = gen.local()
  const member = gen.local()
  const steps = path.slice(0, -1).map(
    (token) => _`${member} = ${container}[${token}];
if (${member} === undefined) { ${member} = {}; ${container}[${token}] = ${member}; }
else if (${member} === null || typeof ${member} !== 'object' || Array.isArray(${member}) || run.isForeign(${member})) {\n${through}break write;\n}
${container} = ${member};\n`
  )
  return _`${container} = target;\n${join(steps)}${container}[${path[path.length - 1]!}] = v;\n`
}

/** The step of one pairing in `level`: its generated form while no id shadows pointers, else its run. */
function levelPairingCode(pairing: Pairing, index: number, value: ValueCode | undefined, store: Code | undefined): Code {
  const rest = _`return finishAsync(pairings, context, pc, ${index}, p, print);\n`
  const viaRun = _`p = list[${index}].run(pc);\nif (p !== undefined) ${rest}`
  let step: Code
  if (value !== undefined) {
    step = _`if (shadows) {\n${viaRun}} else {\n${value.code}${store!}}\n`
  } else if (pairing.inline?.get !== undefined) {
    step = _`v = list[${index}].inline.get(pc);
if (v instanceof Promise) { const put = list[${index}].inline.put; p = v.then((settled) => put(pc, settled, false)); ${rest}}
${store!}`
  } else {
    step = viaRun
  }
  return _`i = ${index};\n${step}if (errors.length > 0) return null;\n`
}

/**
 * Past this many characters of source a level's pairings are split into functions of about this
 * size, called in turn. V8 optimizes no function of more than 60 KB of bytecode (about 120,000
 * characters of this source: a level of 200 coerced pairings ran interpreted), and it compiles a
 * large one in time that grows faster than its size (seconds for one near that bound).
 */
export const PART_SOURCE = 16 * 1024

/** One pairing's generated source, and the locals it took. */
interface Piece {
  readonly value: ValueCode | undefined
  /** Its store, when it has a value or an inline GET (none in a level built as one literal). */
  readonly store: Code | undefined
  readonly locals: readonly (readonly [number, number])[]
}

/** Consecutive pieces, by index, whose source together stays within PART_SOURCE (a larger piece alone). */
function parts(sizes: readonly number[]): number[][] {
  const result: number[][] = [[]]
  let size = 0
  sizes.forEach((length, index) => {
    const current = result[result.length - 1]!
    if (current.length > 0 && size + length > PART_SOURCE) {
      result.push([index])
      size = length
    } else {
      current.push(index)
      size += length
    }
  })
  return result
}

/**
 * The body of a level function over the pieces `bodies`: inline when they fit one part, else a
 * call of one part function each, `check` deciding from each part's result whether to return it.
 * Every part declares only the locals its pieces took and places a thrown error at its pairing.
 */
function partedBody(
  name: string,
  params: Code,
  bodies: readonly Code[],
  pieces: readonly Piece[],
  gen: Generator,
  opening: Code,
  check: (result: Code) => Code,
  done: Code
): { body: Code; helpers: Code } {
  const groups = parts(bodies.map((body) => body.length))
  const own = (group: readonly number[]): Code =>
    _`${opening}${SOURCE_OBJECT}${gen.declarations(group.flatMap((index) => pieces[index]!.locals))}try {
${join(group.map((index) => bodies[index]!))}} catch (error) {
  throw placed(error, list[i]);
}
`
  if (groups.length === 1) return { body: own(groups[0]!), helpers: nil }
  const calls: Code[] = []
  const helpers: Code[] = []
  groups.forEach((group, n) => {
    const part = new Name(`${name}${n}`)
    calls.push(check(_`${part}(${params})`))
    helpers.push(_`function ${part}(${params}) {\n${own(group)}${done}}\n`)
  })
  return { body: join(calls), helpers: join(helpers) }
}

/** The object a level makes: each key's value, a pairing's slot (its index) or a nested object, in first-write order. */
type Shape = Map<string, number | Shape>

/**
 * The tokens each pairing of a level writes when they make a tree of fresh objects: every pairing
 * writes one plain key (Inline.ownKey) or walks a path of plain objects (objectPath), no path runs
 * through another's value (`/a` and `/a/b`), and no token is `__proto__`. Undefined otherwise.
 */
function shapeOf(list: readonly Pairing[]): { paths: (readonly string[])[]; shape: Shape } | undefined {
  const paths: (readonly string[])[] = []
  const shape: Shape = new Map()
  for (let index = 0; index < list.length; index++) {
    const pairing = list[index]!
    const key = pairing.inline?.ownKey
    const path = key !== undefined ? [key] : objectPath(pairing.pointer)
    if (path === undefined || path.includes('__proto__')) return undefined
    let node = shape
    for (const token of path.slice(0, -1)) {
      let next = node.get(token)
      if (next === undefined) node.set(token, (next = new Map()))
      if (typeof next === 'number') return undefined
      node = next
    }
    const last = path[path.length - 1]!
    // A key written twice keeps its first place and takes the last value, as two stores do.
    if (typeof node.get(last) === 'object') return undefined
    node.set(last, index)
    paths.push(path)
  }
  return { paths, shape }
}

/**
 * A level's function that computes every right side first, in order, into a slot (counted against
 * the budgets and stopped by an error as before), then, for a target of its own (null), makes the
 * object in one call of a constructor per object of the shape when every slot holds a value — one
 * allocation of the final form instead of a map transition per key, most of a wide level's time —
 * else stores the values there are in pairing order, as into a target given. Computing before
 * storing changes nothing a document can see: a generated right side reads the source only (no
 * `output` read has a generated form), and nothing it stores can fail: into a target of its own,
 * the containers on the way are its own, and a target given (single keys only, never an array:
 * runPairings sees to that) takes one key as an object does.
 *
 * Constructors, not object literals: V8 tracks a literal's allocations and, once a young collection
 * finds them all alive (an evaluation part way through its output), allocates every later one in
 * the old generation, which halved the `array` workload in one run of three; and it makes a
 * literal of more than 128 keys in dictionary mode, where the envelope's two members then cost four
 * times the literal. The constructors' instances have Object.prototype, as `{}` has.
 */
function madeFirst(name: string, paths: readonly (readonly string[])[], shape: Shape, pieces: readonly Piece[], gen: Generator): { code: Code; helpers: Code } {
  const body = (index: number, slot: Code): Code => {
    const value = pieces[index]!.value!
    return _`i = ${index};\n${value.code}if (v !== undefined) {\n${accountCode(value.fresh)}}\n${slot} = v;\nif (errors.length > 0) return null;\n`
  }
  // Slots are locals while the level fits one function, else an array its parts fill (sized as
  // that longer form, so that the locals' form fits one function whenever it is chosen).
  const single = parts(paths.map((_path, index) => body(index, _`slots[${index}]`).length)).length === 1
  const slot = (index: number): Code => (single ? new Name(`s${index}`) : _`slots[${index}]`)
  const parted = partedBody(
    name,
    _`run, source, slots, depth, errors`,
    paths.map((_path, index) => body(index, slot(index))),
    pieces,
    gen,
    single ? _`let ${join(paths.map((_path, index) => slot(index)), _`, `)};\n` : nil,
    (call) => _`if (${call} === null) return null;\n`,
    _`return slots;\n`
  )
  const constructors: Code[] = []
  const make = (node: Shape): Code => {
    const fields = [...node]
    const made = new Name(`${name}Made${constructors.length}`)
    constructors.push(nil)
    const at = constructors.length - 1
    const params = fields.map((_field, n) => new Name(`p${n}`))
    constructors[at] = _`function ${made}(${join(params, _`, `)}) {
${join(fields.map(([key], n) => _`this[${key}] = ${params[n]!};\n`))}}
${made}.prototype = Object.prototype;
`
    return _`new ${made}(${join(fields.map(([, member]) => (typeof member === 'number' ? slot(member) : make(member))), _`, `)})`
  }
  const construct = make(shape)
  const all = join(paths.map((_path, index) => _`${slot(index)} !== undefined`), _` && `)
  const stores = paths.map((path, index) => {
    if (path.length === 1) return _`if (${slot(index)} !== undefined) target[${path[0]!}] = ${slot(index)};\n`
    // The walk of storeCode with nothing to check: every container on the way is this call's own.
    const walk = path.slice(0, -1).map((token) => _`m = c[${token}];\nif (m === undefined) { m = {}; c[${token}] = m; }\nc = m;\n`)
    return _`if (${slot(index)} !== undefined) {\nc = target;\n${join(walk)}c[${path[path.length - 1]!}] = ${slot(index)};\n}\n`
  })
  const fn = new Name(name)
  const code = _`function ${fn}(run, source, target, depth) {
const errors = run.errors;
${single ? nil : _`const slots = new Array(${paths.length});\n`}${parted.body}if (target === null) {
if (${all}) return ${construct};
target = {};
}
${paths.some((path) => path.length > 1) ? _`let c, m;\n` : nil}${join(stores)}return target;
}`
  return { code, helpers: _`${join(constructors)}${parted.helpers}` }
}

/** The source of a level's functions: (rt) => { level, free }. */
function levelSource(list: readonly Pairing[], gen: Generator): Code {
  const values = list.map((pairing) => {
    const from = gen.mark()
    const value = valueCode(pairing, gen)
    return { value, locals: [from, gen.mark()] as const }
  })
  const generated = values.every(({ value }) => value !== undefined)
  // A free level whose writes make a tree of fresh objects makes them in one step (madeFirst).
  const made = generated ? shapeOf(list) : undefined
  const singleKeys = made !== undefined && made.paths.every((path) => path.length === 1)
  const pieces: Piece[] = values.map(({ value, locals }, index) => {
    const pairing = list[index]!
    if (singleKeys) return { value, store: undefined, locals: [locals] }
    const from = gen.mark()
    const store = value !== undefined ? storeCode(pairing, value.fresh, gen, !generated) : pairing.inline?.get !== undefined ? storeCode(pairing, false, gen, true) : undefined
    return { value, store, locals: [locals, [from, gen.mark()]] }
  })
  let free: Code | undefined
  let madeName: Code | undefined
  let helpers: Code = nil
  if (made !== undefined && singleKeys) {
    // Its stores cannot fail into any target it is given: the one function serves both.
    const made1 = madeFirst('free', made.paths, made.shape, pieces, gen)
    free = made1.code
    helpers = made1.helpers
  } else if (generated) {
    const bodies = pieces.map(({ value, store }, index) => _`i = ${index};\n${value!.code}${store!}if (errors.length > 0) return null;\n`)
    const params = _`run, source, target, depth, errors`
    const parted = partedBody('free', params, bodies, pieces, gen, nil, (call) => _`if (${call} === null) return null;\n`, _`return target;\n`)
    // Paths into a target given may meet its containers, whose stores can fail: that one is
    // written in order as before, and only a target of its own is made first (kept to levels of
    // one function, since the pairings' source is then written twice).
    let fresh: { code: Code; helpers: Code } | undefined
    if (made !== undefined && parted.helpers.length === 0) fresh = madeFirst('fresh', made.paths, made.shape, pieces, gen)
    free = _`function free(run, source, target, depth) {
const errors = run.errors;
${fresh === undefined ? _`if (target === null) target = {};\n` : _`if (target === null) return fresh(run, source, null, depth);\n`}${parted.body}return target;
}`
    helpers = fresh === undefined ? parted.helpers : _`${parted.helpers}${fresh.helpers}${fresh.code}\n`
    if (fresh !== undefined) madeName = _`fresh`
  }
  let level: Code | undefined
  // A level with a free form never needs this one (the closure plan serves it while ids shadow
  // pointers, or when its target is an array).
  if (free === undefined) {
    const bodies = pieces.map(({ value, store }, index) => levelPairingCode(list[index]!, index, value, store))
    const params = _`context, pc, print, run, errors, shadows, source, target, depth, targetIsArray`
    const parted = partedBody('level', params, bodies, pieces, gen, _`let p;\n`, (call) => _`r = ${call};\nif (r !== undefined) return r;\n`, _`return undefined;\n`)
    level = _`function level(context, pc, print) {
const run = context.run;
const errors = run.errors;
const shadows = run.registry.shadowsPointers;
const source = pc.source;
const target = pc.target;
const depth = pc.depth;
const targetIsArray = Array.isArray(target);
${parted.helpers.length === 0 ? nil : _`let r;\n`}${parted.body}return undefined;
}`
    helpers = parted.helpers
  }
  const constants = gen.constants.map((_constant, i) => _`const ${new Name(`c${i}`)} = rt.constants[${i}];\n`)
  return _`'use strict';
const list = rt.list, pairings = rt.pairings, readToken = rt.readToken, finishAsync = rt.finishAsync, placed = rt.placed, NO_MEMBERS = rt.noMembers;
${join(constants)}${helpers}const free = ${free ?? _`undefined`};
return {
level: ${level ?? _`undefined`},
free,
made: ${madeName ?? _`free`}
};
`
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

type LevelFunction = (context: Context, pc: Context, print: Print | undefined) => ReturnType<Level>
type FreeFunction = (run: EvaluationRun, source: unknown, target: object | null, depth: number) => object | null

/**
 * The generated functions of a level (nothing when it keeps the closure plan: none of its pairings
 * has a generated form, so a function would only add a frame to every recursion through it; more
 * than MAX_GENERATED pairings; code generation refused by the process).
 */
export function generateLevel(pairings: Pairings): { level: Level | undefined; free: Free | undefined; made: Free | undefined } {
  const list = pairings.list
  const none = { level: undefined, free: undefined, made: undefined }
  if (list.length > MAX_GENERATED || !list.some((pairing) => pairing.inline !== undefined) || !canGenerate()) return none
  const gen = new Generator()
  const source = levelSource(list, gen)
  if (source.length > MAX_SOURCE) return none
  const runtime: Runtime = { list, pairings, constants: gen.constants, readToken, finishAsync, placed, noMembers: NO_MEMBERS }
  // eslint-disable-next-line no-new-func -- the source is Code: the builder's own text, every value a literal
  const make = new Function('rt', source.toString()) as (rt: Runtime) => { level: LevelFunction | undefined; free: FreeFunction | undefined; made: FreeFunction | undefined }
  return make(runtime)
}
