// Stage 4, shape (engine.md §8.6), in its fixed order: find, concat, init, constant,
// random (+unique), the settle point of asynchronous initializers (§8.9), template, transform.
import { Context } from '../context.js'
import { errorObject, type Provenance } from '../diagnostics.js'
import type { CompileContext, Step } from '../plan.js'
import { runPairings } from '../procedures.js'
import { copyValue, isObject, toText, truthy } from '../values.js'

export function compileShape(descriptor: Record<string, unknown>, compiler: CompileContext, provenance: Provenance): Step[] {
  const steps: Step[] = []
  const add = (step: Step | null): void => {
    if (step !== null) steps.push(step)
  }
  add(compileFind(descriptor, compiler))
  add(compileConcat(descriptor))
  const init = compileInit(descriptor, compiler, provenance)
  add(init)
  add(compileConstant(descriptor))
  add(compileRandom(descriptor, provenance))
  // An initializer is called as it is; a promise it wrongly returns passes constant and random
  // untouched and is settled here, before template (two core cases pin this artifact).
  if (init !== null) add({ awaits: true, run: (value) => value })
  add(compileTemplate(descriptor, compiler))
  add(compileTransform(descriptor, compiler, provenance))
  return steps
}

function compileFind(descriptor: Record<string, unknown>, compiler: CompileContext): Step | null {
  const operand = descriptor.find
  if (!truthy(operand)) return null
  const spec = isObject(operand) ? operand : {}
  const eq = isObject(spec.eq) ? spec.eq : {}
  // The operands are document values (JSON), so a plain property read can never equal one through
  // an inherited member: no own-property test is needed.
  const keys = Object.keys(eq)
  const expected = keys.map((key) => eq[key])
  const narrow = truthy(spec.pointer) ? compiler.reader(spec.pointer) : null
  const matches = (member: unknown): boolean => {
    if (member === null || typeof member !== 'object') return false
    for (let i = 0; i < keys.length; i++) {
      if ((member as Record<string, unknown>)[keys[i]!] !== expected[i]) return false
    }
    return true
  }
  const found = (member: unknown): unknown => (narrow === null ? member : narrow(member))
  return {
    awaits: false,
    run(value, context) {
      if (value === null || typeof value !== 'object') return value
      if (!Array.isArray(value)) return matches(value) ? found(value) : undefined
      for (let i = 0; i < value.length; i++) {
        if (matches(value[i])) {
          context.run.tick(i)
          return found(value[i])
        }
      }
      context.run.tick(value.length)
      return undefined
    },
  }
}

function compileConcat(descriptor: Record<string, unknown>): Step | null {
  if (!truthy(descriptor.concat)) return null
  return {
    awaits: false,
    run(value, context) {
      if (!Array.isArray(value)) return value
      context.run.tick(value.length)
      return ([] as unknown[]).concat(...value)
    },
  }
}

function unknownName(
  compiler: CompileContext,
  provenance: Provenance,
  keyword: 'init' | 'transform',
  name: string,
): Step | null {
  if (compiler.options.unknownNames !== 'error') return null
  const kind = keyword === 'init' ? 'initializer' : 'transformer'
  return {
    awaits: false,
    run(value, context) {
      context.run.errors.push(errorObject(provenance, [[keyword, name]], `${name} matches no registered ${kind}`))
      return value
    },
  }
}

function compileInit(descriptor: Record<string, unknown>, compiler: CompileContext, provenance: Provenance): Step | null {
  const name = descriptor.init
  if (!truthy(name) || typeof name !== 'string') return null
  const initializers = compiler.extensions.initializers
  if (!Object.hasOwn(initializers, name)) return unknownName(compiler, provenance, 'init', name)
  const initializer = initializers[name]!
  return { awaits: false, run: (value, context) => initializer(value, context) }
}

function compileConstant(descriptor: Record<string, unknown>): Step | null {
  if (!Object.hasOwn(descriptor, 'constant') || descriptor.constant === undefined) return null
  const constant = descriptor.constant
  // Objects are copied per use, so no output ever shares structure with the document.
  if (constant !== null && typeof constant === 'object') return { awaits: false, run: () => copyValue(constant) }
  return { awaits: false, run: () => constant }
}

function compileRandom(descriptor: Record<string, unknown>, provenance: Provenance): Step | null {
  const count = descriptor.random
  if (!truthy(count)) return null
  const unique = truthy(descriptor.unique)
  return {
    awaits: false,
    run(value, context) {
      if (!Array.isArray(value)) return value
      if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) return value
      if (unique && count > new Set(value).size) {
        context.run.errors.push(
          errorObject(provenance, [['value', value], ['random', count]], `cannot select ${count} unique members`),
        )
        return undefined
      }
      const pick = (): unknown => value[Math.floor(Math.random() * value.length)]
      if (count === 1) return value.length === 0 ? undefined : pick()
      if (value.length === 0) return value
      context.run.willMake(count)
      if (!unique) return Array.from({ length: count }, pick)
      // Unique selection: a partial Fisher–Yates shuffle of the distinct members terminates always.
      const distinct = [...new Set(value)]
      for (let i = 0; i < count; i++) {
        const j = i + Math.floor(Math.random() * (distinct.length - i))
        ;[distinct[i], distinct[j]] = [distinct[j], distinct[i]]
      }
      return distinct.slice(0, count)
    },
  }
}

/**
 * A placeholder: `{{name}}`, the name one or more characters none of which is `}` (the reference
 * engine's reading), so `{{}}` and `{{a}b}}` stay literal text.
 */
const PLACEHOLDER = /\{\{([^}]+)\}\}/

function compileTemplate(descriptor: Record<string, unknown>, compiler: CompileContext): Step | null {
  if (!truthy(descriptor.template) || !truthy(descriptor.mapping)) return null
  // Alternating literal text and placeholder names: [text, name, text, name, …, text].
  const parts = toText(descriptor.template).split(PLACEHOLDER)
  const weight = parts.length
  const pairingsOf = compiler.pairingSlot(descriptor.mapping)
  const render = (result: object | null): string => {
    let text = parts[0]!
    for (let i = 1; i < parts.length; i += 2) {
      const name = parts[i]!
      const member = result !== null && Object.hasOwn(result, name) ? (result as Record<string, unknown>)[name] : undefined
      text += (truthy(member) ? toText(member) : '') + parts[i + 1]!
    }
    return text
  }
  return {
    awaits: true,
    run(value, context) {
      if (value === undefined || typeof value !== 'object') return value
      context.run.tick(weight)
      // The template's pairings map the value into the enclosing target (decision 5).
      const scoped = new Context(context.run, value, context.target, context, -1, '/', undefined)
      const result = runPairings(pairingsOf(scoped), scoped, value, undefined)
      return result instanceof Promise ? result.then(render) : render(result)
    },
  }
}

function compileTransform(descriptor: Record<string, unknown>, compiler: CompileContext, provenance: Provenance): Step | null {
  const operand = descriptor.transform
  if (!truthy(operand)) return null
  const transformers = compiler.extensions.transformers
  const calls: Step[] = []
  const call = (name: string, options: Record<string, unknown> | undefined): void => {
    if (!Object.hasOwn(transformers, name)) {
      const step = unknownName(compiler, provenance, 'transform', name)
      if (step !== null) calls.push(step)
      return
    }
    const transformer = transformers[name]!
    calls.push({
      awaits: false,
      run: options === undefined
        ? (value, context) => transformer(value, context)
        : (value, context) => transformer(value, context, { ...options }),
    })
  }
  if (typeof operand === 'string') call(operand, undefined)
  else if (Array.isArray(operand)) {
    for (const step of operand) {
      if (typeof step === 'string') call(step, undefined)
      else if (isObject(step)) for (const name of Object.keys(step)) call(name, step)
    }
  }
  if (calls.length === 0) return null
  if (calls.length === 1) return calls[0]!
  return {
    awaits: false,
    run(value, context) {
      let current = value
      for (const step of calls) current = step.run(current, context)
      return current
    },
  }
}

