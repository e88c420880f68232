// The test files of the group "startup" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('startup')
