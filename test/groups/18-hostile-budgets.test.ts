// The test files of the group "hostile-budgets" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('hostile-budgets')
