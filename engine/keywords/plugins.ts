// Stage 3, plugins (language.md §8.5): every descriptor key that names a registered plugin fires in
// written order, each fed the previous result; its options' `pointer` narrows what it returns.
import type { CompileContext, Step } from '../context.js'
import { isThenable, truthy } from '../values.js'

/** The keys of a descriptor that name registered plugins, in written order. */
export function pluginNames(descriptor: Record<string, unknown>, compiler: CompileContext): string[] {
  const plugins = compiler.extensions.plugins
  return Object.keys(descriptor).filter((key) => Object.hasOwn(plugins, key))
}

export function compilePlugins(descriptor: Record<string, unknown>, compiler: CompileContext): Step[] {
  const plugins = compiler.extensions.plugins
  const steps: Step[] = []
  for (const key of pluginNames(descriptor, compiler)) {
    const plugin = plugins[key]!
    const options = descriptor[key]
    const pointer = options !== null && typeof options === 'object' ? (options as Record<string, unknown>).pointer : undefined
    const narrow = truthy(pointer) ? compiler.reader(pointer) : null
    steps.push({
      awaits: true,
      run(value, context) {
        const run = context.run
        run.callPlugin()
        const result = plugin(options, value, context)
        // The await is bounded by the time budget, and answers with the evaluation's end once that
        // has come (§13): a sibling's failure or a budget trip.
        if (isThenable(result)) return run.awaitPlugin(Promise.resolve(result)).then(narrow ?? undefined)
        return narrow === null ? result : narrow(result)
      },
    })
  }
  return steps
}
