// Heap cost of one evaluation (performance.md §3: heap growth for one `array` evaluation at most
// 3 × the size of its serialized output). Needs `gc` (node --expose-gc) for a clean baseline.
//
// Two figures, both in bytes of V8 heap:
// - retained: growth of the used heap between a full collection before the evaluation and one
//   after it, the result still held. This is the heap growth the target bounds.
// - allocated: everything the evaluation allocated, garbage included: the used heap right after
//   it, plus what every collection that ran during it freed (read from v8.GCProfiler).
import { Buffer } from 'node:buffer'
import { GCProfiler, getHeapStatistics } from 'node:v8'
import { median, type Operation } from './measure.js'

export interface HeapCost {
  readonly serializedBytes: number
  readonly retainedBytes: number
  readonly allocatedBytes: number
}

const used = (): number => getHeapStatistics().used_heap_size

/**
 * The heap cost of one call of `operation` (each figure the median of `samples` calls, since a
 * single reading moves by tens of kilobytes), or null when the host gives no `gc`.
 */
export async function heapCost(operation: Operation, samples = 5): Promise<HeapCost | null> {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) return null
  const costs: HeapCost[] = []
  for (let i = 0; i < samples; i++) costs.push(await sample(operation, gc))
  return {
    serializedBytes: costs[0]!.serializedBytes,
    retainedBytes: median(costs.map((c) => c.retainedBytes)),
    allocatedBytes: median(costs.map((c) => c.allocatedBytes)),
  }
}

async function sample(operation: Operation, gc: () => void): Promise<HeapCost> {
  gc()
  gc()
  const before = used()
  const profiler = new GCProfiler()
  profiler.start()
  const pending = operation()
  const result = pending instanceof Promise ? await pending : pending
  const after = used()
  const collections = profiler.stop().statistics
  const freed = collections.reduce(
    (sum, c) => sum + Math.max(0, c.beforeGC.heapStatistics.usedHeapSize - c.afterGC.heapStatistics.usedHeapSize),
    0
  )
  gc()
  gc()
  const retained = used() - before
  const serializedBytes = Buffer.byteLength(JSON.stringify(result))
  return { serializedBytes, retainedBytes: Math.max(0, retained), allocatedBytes: after - before + freed }
}
