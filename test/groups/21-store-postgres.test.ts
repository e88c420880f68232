// The test files of the group "store-postgres" in one process (test/groups/index.ts).
import { runGroup } from './index.js'

await runGroup('store-postgres')
