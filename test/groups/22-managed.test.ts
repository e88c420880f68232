// The test files of the group "managed" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('managed')
