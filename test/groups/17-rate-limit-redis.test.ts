// The test files of the group "rate-limit-redis" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('rate-limit-redis')
