// The test files of the group "package" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('package')
