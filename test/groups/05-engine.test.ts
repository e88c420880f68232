// The test files of the group "engine" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('engine')
