// The CLI (http.md §10): validate, map, --help, and the exit codes and one-line errors for bad
// arguments and files, run in this process through the entry point's own `runCommand`; one test
// runs the real process (standard input, stdout, stderr and the exit code wired to them).
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { buildServer } from '../server.js'
import { compiledEntry } from './proc-compiled.js'
import { runCli, runEntryPoint } from './startup-support.js'

const dir = mkdtempSync(join(tmpdir(), 'mapper-cli-'))
mkdirSync(join(dir, 'nested'))
writeFileSync(join(dir, 'good.yaml'), '$id: good\nmapping:\n  /out: { source: /in, as: number }\n')
writeFileSync(join(dir, 'nested', 'bad.json'), JSON.stringify({ $id: 'bad', mapping: { '/slug': { source: '/t', transform: 'slugify' }, '/y': { source: '/a', as: 'integer' } } }))
writeFileSync(join(dir, 'uses-good.json'), JSON.stringify({ mapping: { '/g': { $ref: 'good' } } }))
writeFileSync(join(dir, 'broken.yaml'), 'mapping: [unclosed\n')
writeFileSync(join(dir, 'input.json'), JSON.stringify({ in: '42' }))

t.test('--help for the command and each subcommand', async (t) => {
  for (const args of [['--help'], ['validate', '--help'], ['map', '--help']]) {
    const ran = await runCli(args)
    t.equal(ran.code, 0, args.join(' '))
    t.match(ran.stdout, /^Usage: mapper-service/)
  }
})

t.test('validate: reports each document, sees the others and the bundled mappings, exits 1 when any is invalid', async (t) => {
  const ok = await runCli(['validate', join(dir, 'good.yaml'), join(dir, 'uses-good.json'), 'mappings'])
  t.equal(ok.code, 0, ok.stderr)
  t.match(ok.stdout, /good\.yaml: valid/)
  t.match(ok.stdout, /uses-good\.json: valid/)
  t.match(ok.stdout, /5 documents, 0 invalid/)
  const bad = await runCli(['validate', dir.replace(/$/, '/nested'), join(dir, 'good.yaml')])
  t.equal(bad.code, 1)
  t.match(bad.stdout, /bad\.json: invalid/)
  t.match(bad.stdout, /error KW-transform-1 at \/mapping\/~1slug\/transform: slugify matches no registered transformer/)
  t.match(bad.stdout, /error KW-pipeline-1 at \/mapping\/~1y\/as: as must be string, number, boolean, or json/)
})

t.test('validate and test place each diagnostic in its file: file:line:column, YAML and JSON alike', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'mapper-cli-places-'))
  const yaml = join(root, 'places.yaml')
  writeFileSync(yaml, [
    '$id: places', //                                   line 1
    'mapping:', //                                      line 2
    '  /title: /book/title', //                         line 3
    '  /slug:', //                                      line 4
    '    source: /book/title', //                       line 5
    '    transform: slugify', //                        line 6: column 16, the value
    '  /count: { source: /n, as: integer }', //         line 7: column 29
    '',
  ].join('\n'))
  const json = join(root, 'places.json')
  writeFileSync(json, JSON.stringify({ $id: 'places-json', mapping: { '/a': '/a', '/b': { source: '/b', as: 'integer' } } }, null, 2))
  const validated = await runCli(['validate', yaml, json])
  t.equal(validated.code, 1)
  t.match(validated.stdout, `  ${yaml}:6:16: error KW-transform-1 at /mapping/~1slug/transform: `)
  t.match(validated.stdout, `  ${yaml}:7:29: error KW-pipeline-1 at /mapping/~1count/as: `)
  // JSON.stringify(…, null, 2): "as" is on line 7, its value at column 13.
  t.match(validated.stdout, `  ${json}:7:13: error KW-pipeline-1 at /mapping/~1b/as: `)
  const tested = await runCli(['test', yaml])
  t.match(tested.stdout, `INVALID ${yaml}\n  ${yaml}:6:16: error KW-transform-1 at /mapping/~1slug/transform: `, 'test places them the same way')
})

t.test('validate: bad arguments and files are one line on stderr and exit 2', async (t) => {
  const none = await runCli(['validate'])
  t.equal(none.code, 2)
  t.equal(none.stderr, 'mapper-service: validate needs at least one file or directory\n')
  const missing = await runCli(['validate', join(dir, 'nope.json')])
  t.equal(missing.code, 2)
  t.match(missing.stderr, /nope\.json: no such file or directory/)
  const broken = await runCli(['validate', join(dir, 'broken.yaml')])
  t.equal(broken.code, 1, 'a file that does not parse is an invalid document')
  t.equal(broken.stderr, '')
  t.match(broken.stdout, /broken\.yaml: invalid\n {2}error .*broken\.yaml does not parse as YAML \(line \d+/)
})

/** A directory as an author keeps it: mappings, the inputs they are tried on, one file mid-edit. */
function authorTree(): string {
  const root = mkdtempSync(join(tmpdir(), 'mapper-cli-dir-'))
  mkdirSync(join(root, 'fixtures'))
  writeFileSync(join(root, 'a-price.yaml'), '$id: price\nmapping:\n  /amount: { source: /raw, as: number }\nexamples:\n  - input: { raw: "12" }\n    output: { amount: 12 }\n')
  writeFileSync(join(root, 'fixtures', 'order.json'), JSON.stringify({ raw: '12', customer: { name: 'Ada' } }))
  writeFileSync(join(root, 'fixtures', 'orders.json'), JSON.stringify([{ raw: '1' }]))
  writeFileSync(join(root, 'm-editing.yaml'), '$id: editing\nmapping: { /x: [unclosed\n')
  writeFileSync(join(root, 'z-extends.json'), JSON.stringify({ $extend: 'price', $id: 'price-extended' }))
  return root
}

t.test('validate and test of a directory: only mapping documents (the server\'s rule), a syntax error reported and passed', async (t) => {
  const root = authorTree()
  for (const command of ['validate', 'test']) {
    const ran = await runCli([command, root])
    t.equal(ran.code, 1, `${command}: exit 1 for the file that does not parse`)
    const notMapping = (file: string): string => `mapper-service: ignoring ${join(root, file)}: not a mapping document (none of mapping, mappings, $id, $extend at its top)\n`
    t.equal(ran.stderr, notMapping('fixtures/order.json') + notMapping('fixtures/orders.json'), `${command}: the fixtures are named as skipped, on stderr`)
    t.notMatch(ran.stdout, /fixtures|PTR-/, `${command}: the fixtures are not reported as mappings`)
    t.match(ran.stdout, new RegExp(`m-editing\\.yaml[^\\n]*\\n  error ${join(root, 'm-editing.yaml').replace(/[.\\/]/g, '\\$&')} does not parse as YAML \\(line \\d+, column \\d+\\)`), `${command}: the file that does not parse, with its line`)
    if (command === 'validate') {
      t.match(ran.stdout, `${join(root, 'a-price.yaml')}: valid\n`, 'the documents before it are reported')
      t.match(ran.stdout, `${join(root, 'z-extends.json')}: valid\n`, 'and after it')
      t.match(ran.stdout, /3 documents, 1 invalid\n$/)
    } else {
      t.match(ran.stdout, `PASS ${join(root, 'a-price.yaml')}: 1 example\n`)
      t.match(ran.stdout, `-    ${join(root, 'z-extends.json')}: no examples\n`, 'and after it')
      t.match(ran.stdout, /3 documents \(1 invalid\), 1 example: 1 passed, 0 failed\n$/)
    }
  }
  const named = await runCli(['validate', join(root, 'fixtures', 'order.json')])
  t.equal(named.code, 1, 'a file named on the command line is validated as a mapping, whatever it holds')
  t.match(named.stdout, /order\.json: invalid/)
  const unreadable = await runCli(['validate', root, join(root, 'absent.yaml')])
  t.equal(unreadable.code, 2, 'a path that does not exist is still a usage error')
})

t.test('validate: a failing example is an EXAMPLE-1 error, as POST /validate reports it, and test agrees', async (t) => {
  const document = {
    $id: 'total',
    mapping: { '/total': { source: '/n', as: 'number' }, '/label': '/name' },
    examples: [
      { input: { n: '3', name: 'x' }, output: { total: 3, label: 'x' } },
      { description: 'off by one', input: { n: '4', name: 'y' }, output: { total: 5, label: 'z' } },
    ],
  }
  const file = join(mkdtempSync(join(tmpdir(), 'mapper-cli-example-')), 'total.json')
  writeFileSync(file, JSON.stringify(document))
  // Examples run for a caller that may evaluate submitted documents.
  const app = await buildServer({ options: { logging: { level: 'silent' }, map: { explicit: true } } })
  t.teardown(() => app.close())
  const served = (await app.inject({ method: 'POST', url: '/validate', payload: { mapping: document } })).json<{ valid: boolean; errors: Array<{ rule: string; pointer: string; message: string }> }>()
  t.equal(served.valid, false, 'POST /validate: invalid')
  const [error] = served.errors
  t.equal(error?.rule, 'EXAMPLE-1')
  const validated = await runCli(['validate', file])
  t.equal(validated.code, 1, 'validate exits 1')
  t.equal(
    validated.stdout,
    `${file}: invalid\n  ${file}:1:${JSON.stringify(document).indexOf('{"description"') + 1}: error EXAMPLE-1 at ${error!.pointer}: ${error!.message}\n      /total: expected 5, got 4\n      /label: expected "z", got "y"\n1 document, 1 invalid\n`,
    'the same rule, place and message as POST /validate, then every difference'
  )
  const tested = await runCli(['test', file])
  t.equal(tested.code, 1)
  t.match(tested.stdout, `FAIL ${file}: 1 of 2 examples failing\n  ✗ ${error!.pointer} (off by one):\n`)
})

t.test('map: a registered id or a document file, input from a file or standard input', async (t) => {
  const greet = await runCli(['map', 'greet', '-'], { stdin: '{"message":"hello"}' })
  t.equal(greet.code, 0, greet.stderr)
  t.same(JSON.parse(greet.stdout), { text: 'hello', valid: true, errors: [] })
  const file = await runCli(['map', join(dir, 'good.yaml'), join(dir, 'input.json')])
  t.same(JSON.parse(file.stdout), { out: 42, valid: true, errors: [] })
  const absent = await runCli(['map', 'echo'])
  t.same(JSON.parse(absent.stdout), { valid: true, errors: [] }, 'no input: every read is undefined')
  const invalid = await runCli(['map', join(dir, 'nested', 'bad.json')])
  t.equal(invalid.code, 2)
  t.match(invalid.stderr, /is not a valid mapping/)
  const unknown = await runCli(['map', 'no-such-id'])
  t.equal(unknown.code, 2)
  t.equal(unknown.stderr, 'mapper-service: no-such-id: neither a file nor a registered mapping id\n')
  const badInput = await runCli(['map', 'echo', '-'], { stdin: '{nope' })
  t.equal(badInput.code, 2)
  t.match(badInput.stderr, /standard input is not valid JSON/)
  const unknownCommand = await runCli(['frobnicate'])
  t.equal(unknownCommand.code, 2)
})

t.test('map: a result with valid false exits 1', async (t) => {
  writeFileSync(join(dir, 'strict.json'), JSON.stringify({ mapping: { '/x': { source: '/x', required: true } } }))
  const ran = await runCli(['map', join(dir, 'strict.json'), '-'], { stdin: '{}' })
  t.equal(ran.code, 1)
  t.same(JSON.parse(ran.stdout), { valid: false, errors: [{ source: '/x', required: true, message: 'required value' }] })
})

t.test('the real process: standard input in, the envelope on stdout, errors on stderr, the exit code', async (t) => {
  // The command as installed: the shipped files compiled, no test loader in the process (half the
  // start-up of each). One process at a time: four at once on a busy two-core machine can take
  // longer than their bound.
  const entry = await compiledEntry()
  const greet = await runEntryPoint(['map', 'greet', '-'], { stdin: '{"message":"hello"}', entry })
  const help = await runEntryPoint(['--help'], { entry })
  const failed = await runEntryPoint(['map', join(dir, 'strict.json'), '-'], { stdin: '{}', entry })
  const usage = await runEntryPoint(['validate'], { entry })
  t.equal(greet.code, 0, greet.stderr)
  t.same(JSON.parse(greet.stdout), { text: 'hello', valid: true, errors: [] })
  t.equal(help.code, 0)
  t.match(help.stdout, /^Usage: mapper-service/)
  t.equal(failed.code, 1, 'valid false exits 1')
  t.equal(failed.stderr, '')
  t.equal(usage.code, 2)
  t.equal(usage.stdout, '')
  t.equal(usage.stderr, 'mapper-service: validate needs at least one file or directory\n')
})

t.test('validate and test --strict: warnings are errors; --include and --exclude narrow a directory', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'mapper-cli-strict-'))
  mkdirSync(join(root, 'sub'))
  writeFileSync(join(root, 'typo.mapping.json'), JSON.stringify({ $id: 'typo', mapping: { '/a': { sourc: '/b' } } }))
  writeFileSync(join(root, 'sub', 'clean.mapping.yaml'), '$id: clean\nmapping:\n  /a: /b\n')
  writeFileSync(join(root, 'sub', 'other.json'), JSON.stringify({ $id: 'other', mapping: { '/x': { source: '/x', as: 'integer' } } }))

  const lenient = await runCli(['validate', join(root, 'typo.mapping.json')])
  t.equal(lenient.code, 0)
  t.match(lenient.stdout, /typo\.mapping\.json: valid \(1 warning\)/)
  t.match(lenient.stdout, /warning KW-2 at \/mapping\/~1a\/sourc/)
  const strict = await runCli(['validate', '--strict', join(root, 'typo.mapping.json')])
  t.equal(strict.code, 1)
  t.match(strict.stdout, /typo\.mapping\.json: invalid/)
  t.match(strict.stdout, `${join(root, 'typo.mapping.json')}:1:40: error KW-2 at /mapping/~1a/sourc: sourc matches no keyword or registered extension (did you mean source?)`)
  const tested = await runCli(['test', '--strict', join(root, 'typo.mapping.json')])
  t.equal(tested.code, 1)
  t.match(tested.stdout, /INVALID .*typo\.mapping\.json/)

  const included = await runCli(['validate', '--include', '*.mapping.*', root])
  t.match(included.stdout, /2 documents, 0 invalid/, 'both *.mapping.* files, in any directory')
  t.notMatch(included.stdout, /other\.json/)
  const excluded = await runCli(['validate', '--exclude', 'sub/**', root])
  t.match(excluded.stdout, /1 document, 0 invalid/)
  t.match(excluded.stdout, /typo\.mapping\.json/)
  const both = await runCli(['validate', '--include', 'sub/*', '--exclude', '*.yaml', root])
  t.equal(both.code, 1)
  t.match(both.stdout, /other\.json: invalid/)
  t.match(both.stdout, /1 document, 1 invalid/)
  const none = await runCli(['validate', '--include', 'nothing/**', root])
  t.equal(none.code, 2)
  t.equal(none.stderr, `mapper-service: --include 'nothing/**' leaves out every document file (3 files under ${root})\n`)
})

t.test('globMatcher (picomatch): brace sets, character classes, ** across directories, negation; a glob without / on the name', async (t) => {
  const { globMatcher } = await import('../bin/commands.js')
  const cases: Array<[string, string, boolean]> = [
    ['*.json', 'a.json', true],
    ['*.json', 'deep/er/a.json', true],
    ['*.json', 'a.jsonx', false],
    ['sub/*.json', 'sub/a.json', true],
    ['sub/*.json', 'sub/x/a.json', false],
    ['sub/**/*.json', 'sub/a.json', true],
    ['sub/**/*.json', 'sub/x/y/a.json', true],
    ['sub/**', 'sub/x/a.json', true],
    ['sub/**', 'other/sub/a.json', false],
    ['**/x/*.yaml', 'a/b/x/c.yaml', true],
    ['a?.json', 'ab.json', true],
    ['a?.json', 'a/.json', false],
    ['*.{yaml,json}', 'a.yaml', true],
    ['*.{yaml,json}', 'sub/a.json', true],
    ['*.{yaml,json}', 'a.yml', false],
    ['[cg]*', 'good.yaml', true],
    ['[cg]*', 'sub/clean.yaml', true],
    ['[cg]*', 'bad.yaml', false],
    ['[!cg]*', 'bad.yaml', true],
    ['[!cg]*', 'good.yaml', false],
    ['[^cg]*', 'bad.yaml', true],
    ['[[:digit:]]*.json', '2024.json', true],
    ['!*.yaml', 'a.json', true],
    ['!*.yaml', 'sub/a.yaml', false],
    ['!sub/**', 'sub/a.json', false],
    ['!sub/**', 'a.json', true],
    ['{a,b}/*.json', 'b/x.json', true],
    ['{a,b}/*.json', 'c/x.json', false],
  ]
  for (const [glob, path, matches] of cases) t.equal(globMatcher(glob)(path), matches, `${glob} ~ ${path}`)
})

t.test('--include and --exclude with braces, classes and negation; filters that leave no file say so (exit 2)', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'mapper-cli-globs-'))
  mkdirSync(join(root, 'sub'))
  writeFileSync(join(root, 'clean.yaml'), '$id: c\nmapping:\n  /a: /b\n')
  writeFileSync(join(root, 'good.json'), JSON.stringify({ $id: 'g', mapping: { '/a': '/b' } }))
  writeFileSync(join(root, 'other.yml'), '$id: o\nmapping:\n  /a: /b\n')
  writeFileSync(join(root, 'sub', 'deep.json'), JSON.stringify({ $id: 'd', mapping: { '/a': '/b' } }))
  const names = (stdout: string): string[] => [...stdout.matchAll(/^(\S+): valid$/gm)].map((m) => m[1]!.slice(root.length + 1)).sort()

  const braces = await runCli(['validate', '--include', '*.{yaml,json}', root])
  t.equal(braces.code, 0, braces.stderr)
  t.same(names(braces.stdout), ['clean.yaml', 'good.json', 'sub/deep.json'], 'a brace set, the name in any directory')
  const classes = await runCli(['validate', '--include', '[cg]*', root])
  t.same(names(classes.stdout), ['clean.yaml', 'good.json'], 'a character class')
  const deep = await runCli(['validate', '--include', 'sub/**', root])
  t.same(names(deep.stdout), ['sub/deep.json'], '** below a directory')
  const negated = await runCli(['validate', '--include', '!*.json', root])
  t.same(names(negated.stdout), ['clean.yaml', 'other.yml'], 'a negated glob')
  const excluded = await runCli(['validate', '--exclude', '*.{yml,yaml}', '--exclude', 'sub/**', root])
  t.same(names(excluded.stdout), ['good.json'], '--exclude with braces, repeated')

  const none = await runCli(['validate', '--include', '*.{txt,md}', root])
  t.equal(none.code, 2)
  t.equal(none.stdout, '')
  t.equal(none.stderr, `mapper-service: --include '*.{txt,md}' leaves out every document file (4 files under ${root})\n`)
  const both = await runCli(['test', '--include', '[cg]*', '--exclude', '*.{json,yaml}', root])
  t.equal(both.code, 2)
  t.equal(both.stderr, `mapper-service: --include '[cg]*' --exclude '*.{json,yaml}' leave out every document file (4 files under ${root})\n`, 'test says the same, naming every filter')
  const empty = mkdtempSync(join(tmpdir(), 'mapper-cli-empty-'))
  t.equal((await runCli(['validate', '--include', '*.json', empty])).stderr, 'mapper-service: no mapping documents (.json, .yaml, .yml) found\n', 'a directory with no document file at all: no filter to blame')
  t.equal((await runCli(['validate', '--include', '', root])).stderr, 'mapper-service: a glob must not be empty\n')
})

t.test('unknown commands and options: one line, exit 2, and the nearest name for a one-letter misspelling', async (t) => {
  for (const [args, message] of [
    [['valdate', 'x'], 'unknown command "valdate" (did you mean validate?)'], // a deletion
    [['tset'], 'unknown command "tset" (did you mean test?)'], // a transposition
    [['maps'], 'unknown command "maps" (did you mean map?)'], // an insertion
    [['schema2'], 'unknown command "schema2" (did you mean schema?)'],
    [['--hepl'], 'unknown command "--hepl" (did you mean --help?)'],
    [['serve'], 'unknown command "serve" (try --help)'], // far from every command
    [['validate', '--inclde', '*.json', 'mappings'], 'validate: unknown option --inclde (did you mean --include?)'],
    [['test', '--strcit', 'mappings'], 'test: unknown option --strcit (did you mean --strict?)'],
    [['map', 'greet', '--ndjsn'], 'map: unknown option --ndjsn (did you mean --ndjson?)'],
    [['map', 'greet', '--ndjson', '--max-line-byte', '5'], 'map: unknown option --max-line-byte (did you mean --max-line-bytes?)'],
    [['map', 'greet', '--concurency', '2'], 'map: unknown option --concurency (did you mean --concurrency?)'],
    [['schema', '--hlp'], 'schema: unknown option --hlp (did you mean --help?)'],
    [['validate', '--verbose', 'mappings'], 'validate: unknown option --verbose (see mapper-service validate --help)'],
    [['validate', '-x', 'mappings'], 'validate: unknown option -x (see mapper-service validate --help)'],
  ] as const) {
    const ran = await runCli([...args])
    t.equal(ran.code, 2, args.join(' '))
    t.equal(ran.stdout, '')
    t.equal(ran.stderr, `mapper-service: ${message}\n`, args.join(' '))
  }
})

t.test('validate: a misspelt keyword is reported with the keyword it was likely meant to be', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'mapper-cli-typo-'))
  const file = join(root, 'typo.yaml')
  writeFileSync(file, '$id: typo\nmapping:\n  /a: { sourc: /b }\n  /b: { source: /b, wibble: 1 }\n')
  const ran = await runCli(['validate', file])
  t.equal(ran.code, 0)
  t.match(ran.stdout, `${file}:3:16: warning KW-2 at /mapping/~1a/sourc: sourc matches no keyword or registered extension (did you mean source?)\n`)
  t.match(ran.stdout, `${file}:4:29: warning KW-2 at /mapping/~1b/wibble: wibble matches no keyword or registered extension\n`, 'a far-off key: no suggestion')
})
