// The test files of the group "hostile-inputs" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('hostile-inputs')
