// The inline forms of engine/codegen/inline.ts as `{ run, emit }` pairs: for every form a keyword
// record names, the source `emit` writes, run alone, gives what the keyword's compiled step (which
// calls `run`) gives, over values and operands fast-check draws: the value, the errors, and the
// steps counted. And the code builder it is written with (engine/codegen/code.ts): a value that
// is not code enters source only as its literal, and no keyword module writes source.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { DEFAULT_LIMITS } from '../engine/budget.js'
import { _, Code, join as joinCode, literal, Name } from '../engine/codegen/code.js'
import { emitInline, type InlineForm } from '../engine/codegen/inline.js'
import { accountCode, Generator, MAX_INLINE_TOKENS, NO_MEMBERS, objectPath, readCode, SOURCE_OBJECT, walkCode } from '../engine/codegen/level.js'
import { Compiler } from '../engine/compile.js'
import { Context, type EvaluationRun, type Step } from '../engine/context.js'
import { firstCheckpoint, Run } from '../engine/run.js'
import { KEYWORDS } from '../engine/keywords/index.js'
import type { Check, CompiledLocate, KeywordRecord } from '../engine/keywords/record.js'
import { compileReader, compileWriter, escapeToken, readToken } from '../engine/pointer.js'
import { EMPTY_REGISTRY } from '../engine/registry.js'
import { binaryUnit } from './codegen-binary.js'
import { ROOT } from './loader/compiled-tree.mjs'

const key = fc.constantFrom('a', 'b', 'idType', 'value', '0', '1', '__proto__', '')
const scalar = fc.constantFrom<unknown>('doi', 'x', '', '12', ' 7 ', '1e3', 'abc', 0, 1, -2.5, 1e21, true, false, null)
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof({ depthSize: 'small' }, scalar, fc.dictionary(key, tie('json'), { maxKeys: 3 }), fc.array(tie('json'), { maxLength: 3 })),
}))
const value = fc.oneof(fc.constant(undefined), json)
const pointer = fc.array(key, { maxLength: 3 }).map((tokens) => tokens.map((token) => `/${escapeToken(token)}`).join(''))

/** Operands for each form's keyword: well-formed ones mostly, some the keyword refuses. */
const OPERANDS: Record<InlineForm, fc.Arbitrary<unknown>> = {
  'read-source': pointer,
  'read-input': pointer,
  'first-defined': fc.array(fc.oneof(pointer, fc.constant('name'), fc.constant('/a/../b')), { maxLength: 3 }),
  'last-defined': fc.array(pointer, { maxLength: 3 }),
  constant: json,
  default: json,
  coerce: fc.constantFrom('string', 'number', 'boolean', 'json', 'other'),
  find: fc.record({ eq: fc.dictionary(key, scalar, { maxKeys: 2 }), pointer }, { requiredKeys: ['eq'] }),
  required: fc.boolean(),
  type: fc.constantFrom('array', 'boolean', 'integer', 'null', 'number', 'object', 'string', 'other'),
}

const withForm = (KEYWORDS as readonly KeywordRecord[]).filter((record): record is KeywordRecord & { readonly inline: InlineForm } => record.inline !== undefined)

t.test('every inline form a record names has operands drawn here', async (t) => {
  t.ok(withForm.length >= 10, `${withForm.length} keywords name an inline form`)
  for (const record of withForm) t.ok(Object.hasOwn(OPERANDS, record.inline), `${record.name}: ${record.inline}`)
})

function newRun(input: unknown): EvaluationRun {
  return new Run(input, {}, [], EMPTY_REGISTRY, null as never, () => {}, undefined, DEFAULT_LIMITS, firstCheckpoint(DEFAULT_LIMITS), DEFAULT_LIMITS.depth)
}

/** What a run counted (its private meter, read for the comparison). */
function counts(run: Run): unknown {
  const meter = run as unknown as Record<string, unknown>
  return { steps: meter.steps, built: meter.built, bytes: meter.bytes, values: meter.values }
}

/**
 * Generated `code` as a function of the value `v`, the scope's `source`, the level's `target` and
 * the run, with the level's helpers and locals in scope, as level.ts writes a level around it.
 */
type Harnessed = (v: unknown, source: unknown, target: unknown, run: EvaluationRun) => unknown

function harness(gen: Generator, code: unknown): Harnessed {
  const locals = Array.from({ length: 8 }, (_unused, i) => `l${i}`).join(', ')
  const constants = gen.constants.map((_constant, i) => `const c${i} = rt[${i}];\n`).join('')
  // eslint-disable-next-line no-new-func -- the source under test, written by the builder
  const make = new Function('rt', 'readToken', 'NO_MEMBERS', `${constants}return function (v, source, target, run) {\nconst errors = run.errors;\n${String(SOURCE_OBJECT)}let w, ${locals};\n${String(code)}return v;\n}`)
  return make(gen.constants, readToken, NO_MEMBERS) as Harnessed
}

/** The emitted source of `form` for `operand` as a function of the value, the source and the run; undefined: no inline form for it. */
function emitted(form: InlineForm, name: string, operand: unknown): ((v: unknown, source: unknown, run: EvaluationRun) => unknown) | undefined {
  const gen = new Generator()
  const code = emitInline(form, name, operand, gen, { pointer: '/p', mapping: undefined } as never)
  if (code === undefined) return undefined
  const run = harness(gen, code)
  return (v, source, meter) => run(v, source, null, meter)
}

/** The keyword's compiled step over the same value, source and run. */
function compiled(record: KeywordRecord, operand: unknown): ((v: unknown, source: unknown, run: EvaluationRun) => unknown) | undefined {
  const compiler = new Compiler({ initializers: {}, transformers: {}, plugins: {} } as never, { unknownNames: 'skip', stdout: () => {} })
  const descriptor = { [record.name]: operand }
  const step = record.compile?.(descriptor, compiler, { pointer: '/p', mapping: undefined } as never)
  if (step === null || step === undefined) return undefined
  const contextOf = (source: unknown, run: EvaluationRun): Context => new Context(run, source, {}, null, -1, undefined, undefined)
  switch (record.stage) {
    case 'locate':
      return (_v, source, run) => (step as CompiledLocate).locate(contextOf(source, run))
    case 'validate':
      return (v, _source, run) => {
        ;(step as Check)(v, run)
        return v
      }
    default:
      return (v, source, run) => (step as Step).run(v, contextOf(source, run))
  }
}

for (const record of withForm) {
  t.test(`${record.name} (${record.inline}): the emitted source gives what the compiled step gives`, async (t) => {
    let emittedCount = 0
    fc.assert(
      fc.property(OPERANDS[record.inline], value, json, (operand, v, source) => {
        const emit = emitted(record.inline, record.name, operand)
        const step = compiled(record, operand)
        // A form is written only for a keyword that takes part (its compile gave a step).
        if (emit === undefined || step === undefined) return true
        emittedCount++
        const [a, b] = [newRun(source), newRun(source)]
        let left: unknown
        let right: unknown
        try {
          left = { value: emit(v, source, a) }
        } catch (error) {
          left = { threw: (error as Error).message }
        }
        try {
          right = { value: step(v, source, b) }
        } catch (error) {
          right = { threw: (error as Error).message }
        }
        t.strictSame([left, a.errors], [right, b.errors], JSON.stringify({ operand, v, source }))
        t.strictSame(counts(a), counts(b), 'the same steps and bytes counted', { diagnostic: false })
        return true
      }),
      { numRuns: 300 }
    )
    t.ok(emittedCount > 0, `${emittedCount} operands had an inline form`)
  })
}

// The runtime steps a generated level writes out, each against the function the closure path calls.

const tokens = fc.oneof(fc.array(key, { maxLength: 4 }), fc.array(key, { minLength: MAX_INLINE_TOKENS + 1, maxLength: MAX_INLINE_TOKENS + 3 }))

t.test('reading a pointer: readCode gives what the compiled reader gives', async (t) => {
  fc.assert(
    fc.property(tokens, json, (path, document) => {
      const gen = new Generator()
      const read = harness(gen, readCode(path, gen))
      return Object.is(read(document, null, null, newRun(null)), compileReader(path)(document))
    }),
    { numRuns: 500 }
  )
})

t.test('counting a write: accountCode counts what Run.wrote counts, and marks the same containers', async (t) => {
  fc.assert(
    fc.property(value, fc.boolean(), (written, fresh) => {
      const [a, b] = [newRun(null), newRun(null)]
      harness(new Generator(), accountCode(fresh))(written, null, null, a)
      b.wrote(written, fresh)
      const marked = (run: Run): boolean => written !== null && typeof written === 'object' && run.isForeign(written)
      return JSON.stringify(counts(a)) === JSON.stringify(counts(b)) && marked(a) === marked(b)
    }),
    { numRuns: 300 }
  )
})

t.test('writing at a pointer: walkCode writes what the compiled writer writes, falling back to it', async (t) => {
  const target = fc.dictionary(key, json, { maxKeys: 3 })
  fc.assert(
    fc.property(fc.array(key, { minLength: 2, maxLength: 4 }), target, json, fc.boolean(), (path, start, written, foreignFirst) => {
      const pointer = path.map((token) => `/${escapeToken(token)}`).join('')
      const walkable = objectPath(pointer)
      fc.pre(walkable !== undefined)
      const writer = compileWriter(walkable)
      const gen = new Generator()
      const through = _`w = ${gen.constant(writer)}(target, v, run);\nif (w !== undefined) errors.push({ target: ${pointer}, message: w });\n`
      const emitted = harness(gen, _`write: {\n${walkCode(walkable, gen, through)}}\n`)
      const [left, right] = [structuredClone(start), structuredClone(start)]
      const [a, b] = [newRun(null), newRun(null)]
      // A container from outside on the way is never changed in place (Run.markForeign).
      const first = (target: Record<string, unknown>) => target[walkable[0]!]
      const foreign: unknown[] = []
      for (const [target, run] of [[left, a], [right, b]] as const) {
        const member = first(target)
        if (foreignFirst && member !== null && typeof member === 'object') {
          run.markForeign(member)
          foreign.push(member)
        }
      }
      const foreignBefore = JSON.stringify(foreign)
      const outcome = (write: () => void): string => {
        try {
          write()
          return 'wrote'
        } catch (error) {
          return `threw ${(error as Error).message}`
        }
      }
      const emittedOutcome = outcome(() => emitted(written, null, left, a))
      const compiledOutcome = outcome(() => {
        const refused = writer(right, written, b)
        if (refused !== undefined) b.errors.push({ target: pointer, message: refused } as never)
      })
      t.strictSame([emittedOutcome, left, a.errors], [compiledOutcome, right, b.errors], pointer, { diagnostic: false })
      t.equal(JSON.stringify(foreign), foreignBefore, 'a container from outside is unchanged', { diagnostic: false })
      return true
    }),
    { numRuns: 500 }
  )
})

t.test('the code builder writes every value that is not code as its literal', async (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.string({ unit: binaryUnit })), (text) => {
      const source = String(_`return ${text};`)
      // eslint-disable-next-line no-new-func -- the property under test
      return new Function(source)() === text && !/[\u2028\u2029]/.test(source) && literal(text) === source.slice(7, -1)
    }),
    { numRuns: 500 }
  )
  fc.assert(
    fc.property(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(), fc.constant(null)), (scalarValue) => {
      fc.pre(!Object.is(scalarValue, -0))
      // eslint-disable-next-line no-new-func -- the property under test
      return Object.is(new Function(String(_`return 0-${scalarValue as number};`))(), 0 - (scalarValue as number))
    })
  )
  for (const refused of [{}, [], () => 1, Number.NaN, Infinity, -0, Symbol('s'), 1n]) {
    t.throws(() => _`${refused as never}`, TypeError, `${typeof refused} is refused`)
  }
  t.equal(String(_`a${_`b${'c'}`}d`), 'ab"c"d', 'code interpolates as code')
  t.equal(String(joinCode([_`x`, _`y`], _`, `)), 'x, y')
  for (const name of ['a b', '1a', 'a;b', '', 'a\u2028', 'a\n']) t.throws(() => new Name(name), TypeError, `${escape(name)} is no name`)
  t.ok(new Name('l12') instanceof Code)
})

t.test('no keyword module writes source: its inline form is a name the driver writes', async (t) => {
  const folder = join(ROOT, 'engine', 'keywords')
  // The keyword modules, one folder per stage (the drivers beside them, pipeline.ts among them, write source).
  const files = readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && /[\\/]/.test(file))
  t.ok(files.length > 40, `${files.length} keyword modules`)
  for (const file of files) {
    const text = readFileSync(join(folder, file), 'utf8')
    t.notMatch(text, /codegen\/(code|level)\.js/, `${file} imports no code builder`)
    t.notMatch(text, /^\s+code[(:]/m, `${file} has no code hook`)
  }
  for (const record of KEYWORDS) t.notOk(Object.hasOwn(record, 'code'), `${record.name} has no code member`)
})
