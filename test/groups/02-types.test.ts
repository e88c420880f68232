// The test files of the group "types" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('types')
