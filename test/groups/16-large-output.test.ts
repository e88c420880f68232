// The test files of the group "large-output" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('large-output')
