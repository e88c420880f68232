// The suite runs every test file (test/groups/index.ts): each file in exactly one group, every
// group run by a file of test/groups/ that tap includes (.taprc), no group naming a file that is gone.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parse } from 'yaml'
import { GROUPS } from './groups/index.js'

const here = dirname(fileURLToPath(import.meta.url))
const files = readdirSync(here).filter((name) => name.endsWith('.test.ts')).map((name) => name.slice(0, -'.test.ts'.length)).sort()
const grouped = Object.values(GROUPS).flat()

t.test('every test file is in exactly one group, and every group names files that exist', async (t) => {
  t.same(files.filter((file) => !grouped.includes(file)), [], 'no test file left out')
  t.same(grouped.filter((file, index) => grouped.indexOf(file) !== index), [], 'none in two groups')
  t.same(grouped.filter((file) => !files.includes(file)), [], 'none that is gone')
})

t.test('tap runs each group, and only the groups', async (t) => {
  const runners = readdirSync(join(here, 'groups')).filter((name) => name.endsWith('.test.ts'))
  t.same(runners.map((name) => name.slice(0, -'.test.ts'.length)).sort(), Object.keys(GROUPS).sort(), 'a runner per group')
  for (const runner of runners) {
    const name = runner.slice(0, -'.test.ts'.length)
    t.match(readFileSync(join(here, 'groups', runner), 'utf8'), `await runGroup('${name}')`, `${runner} runs its own group`)
  }
  const config = parse(readFileSync(join(here, '..', '.taprc'), 'utf8')) as { include: string[] }
  t.same(config.include, ['test/groups/*.test.ts'], '.taprc includes the group runners only')
})
