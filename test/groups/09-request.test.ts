// The test files of the group "request" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('request')
