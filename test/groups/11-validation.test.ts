// The test files of the group "validation" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('validation')
