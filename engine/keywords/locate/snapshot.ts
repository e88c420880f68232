// A read of the output under construction is a snapshot: the output keeps changing, and a value read
// from it must never make the output contain itself. Copying is work, counted per container.
import type { Context } from '../../context.js'
import { copyValue } from '../../values.js'

export function snapshot(value: unknown, context: Context): unknown {
  if (value === null || typeof value !== 'object') return value
  return copyValue(value, (containers) => context.run.tick(containers))
}
