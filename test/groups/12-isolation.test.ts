// The test files of the group "isolation" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('isolation')
