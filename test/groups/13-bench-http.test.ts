// The test files of the group "bench-http" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('bench-http')
