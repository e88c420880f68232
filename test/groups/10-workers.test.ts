// The test files of the group "workers" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('workers')
