// The test files of the group "service" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('service')
