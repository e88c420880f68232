// The test files of the group "idle-memory" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('idle-memory')
