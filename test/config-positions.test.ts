// Where a diagnostic's pointer lands in a mapping file (sources/positions.ts): YAML and JSON, a
// compound file's member by its `$id`, an absent member placed on the object that lacks it, and
// no place for a file too large to parse again on the event loop.
import t from 'tap'
import { locator, placeInFile } from '../sources/positions.js'
import { tempTree } from './startup-support.js'

t.test('locator: a pointer\'s node, or the deepest one on its way', async (t) => {
  const yaml = locator('$id: a\nmapping:\n  /x~y: { source: /s, as: integer }\n  /list: [1, 2]\n')
  t.strictSame(yaml.at('/mapping/~1x~0y/as'), { line: 3, column: 27 })
  t.strictSame(yaml.at('/mapping/~1list/1'), { line: 4, column: 14 })
  t.strictSame(yaml.at('/mapping/~1x~0y/absent'), { line: 3, column: 9 }, 'an absent member: the object that lacks it')
  t.strictSame(yaml.at(''), { line: 1, column: 1 }, 'the root')
  t.equal(locator('mapping: [unclosed\n').at('/mapping'), undefined, 'a text that does not parse has no places')
  const json = locator(JSON.stringify({ mapping: { '/a': { as: 'x' } } }, null, 2))
  t.strictSame(json.at('/mapping/~1a/as'), { line: 4, column: 13 })
})

t.test('placeInFile: a compound member by $id; nothing for other sources or files over the bound', async (t) => {
  const tree = tempTree(t, {
    'set.yaml': 'mappings:\n  one:\n    $id: first\n    mapping: { /a: /a }\n  two:\n    $id: second\n    mapping:\n      /b: { as: integer }\n',
    'big.json': JSON.stringify({ $id: 'big', mapping: { '/a': { as: 'integer' } }, padding: 'x'.repeat(300 * 1024) }),
  })
  t.equal(placeInFile(tree.path('set.yaml'), 'second', '/mapping/~1b/as'), `${tree.path('set.yaml')}:8:17`)
  t.equal(placeInFile(tree.path('set.yaml'), 'first', '/mapping/~1a'), `${tree.path('set.yaml')}:4:20`)
  t.equal(placeInFile(tree.path('big.json'), 'big', '/mapping/~1a/as'), undefined, 'over 256 KiB: not read again')
  t.equal(placeInFile(tree.path('absent.yaml'), 'x', '/mapping'), undefined)
  t.equal(placeInFile('mappings.js', 'x', '/mapping'), undefined, 'a module is no document file')
})
