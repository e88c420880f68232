// The suite runs every test file (test/groups/index.ts): each file in exactly one group, every
// group run by a file of test/groups/ that tap includes (.taprc), named so that tap starts the
// longest groups first, no group naming a file that is gone.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parse } from 'yaml'
import { GROUPS, runnerName } from './groups/index.js'

const here = dirname(fileURLToPath(import.meta.url))
const files = readdirSync(here).filter((name) => name.endsWith('.test.ts')).map((name) => name.slice(0, -'.test.ts'.length)).sort()
const grouped = Object.values(GROUPS).flat()

t.test('every test file is in exactly one group, and every group names files that exist', async (t) => {
  t.same(files.filter((file) => !grouped.includes(file)), [], 'no test file left out')
  t.same(grouped.filter((file, index) => grouped.indexOf(file) !== index), [], 'none in two groups')
  t.same(grouped.filter((file) => !files.includes(file)), [], 'none that is gone')
})

t.test('tap runs each group, and only the groups, longest first', async (t) => {
  const runners = readdirSync(join(here, 'groups')).filter((name) => name.endsWith('.test.ts'))
  // tap starts the runners in the order of their names (the order of GROUPS, longest first).
  t.same(runners.sort((a, b) => a.localeCompare(b, 'en')), Object.keys(GROUPS).map(runnerName), 'a runner per group, named by its place in GROUPS')
  for (const name of Object.keys(GROUPS)) {
    t.match(readFileSync(join(here, 'groups', runnerName(name)), 'utf8'), `await runGroup('${name}')`, `${runnerName(name)} runs its own group`)
  }
  const config = parse(readFileSync(join(here, '..', '.taprc'), 'utf8')) as { include: string[] }
  t.same(config.include, ['test/groups/*.test.ts'], '.taprc includes the group runners only')
})
