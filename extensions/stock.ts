// The stock extension surface (http.md §8): no initializers, no transformers, and the `request`
// plugin with an empty header allowlist (no caller-chosen header goes upstream) that refuses
// redirects. A deployment replaces all of it with EXTENSIONS.
import type { Extensions } from '../engine/index.js'
import { createRequest } from '../request/index.js'

export function stockExtensions(): Extensions {
  return {
    initializers: {},
    transformers: {},
    plugins: { request: createRequest({ allowHeaders: [] }) },
  }
}
