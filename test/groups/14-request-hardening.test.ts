// The test files of the group "request-hardening" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('request-hardening')
