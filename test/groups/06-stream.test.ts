// The test files of the group "stream" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('stream')
