// The test files of the group "slices" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('slices')
