// The test files of the group "reload" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('reload')
