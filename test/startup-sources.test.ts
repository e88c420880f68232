// Mapping, extension and options sources (http.md §8), in process: `loadMappings` for modules,
// document files and directories (regular files only); `configFromEnvironment` for EXTENSIONS and
// OPTIONS_FILE, served through `buildServer` and `inject`; module loading bounded in time.
import { execFileSync } from 'node:child_process'
import { symlinkSync } from 'node:fs'
import { createServer } from 'node:net'
import fc from 'fast-check'
import t from 'tap'
import { buildServer, configFromEnvironment } from '../server.js'
import { loadExtensions } from '../sources/extensions.js'
import { jsonSyntaxProblem } from '../sources/json-syntax.js'
import { loadMappings, mappingEntries, type MappingEntry } from '../sources/mappings.js'
import { tempTree } from './startup-support.js'

const ids = (entries: readonly MappingEntry[]): string[] => entries.map((entry) => entry.id)
const SILENT = JSON.stringify({ logging: { level: 'silent' } })

/**
 * A temp dir for module sources. Its package.json says "module": tap's TypeScript loader would
 * otherwise take a bare `.js` for CommonJS (plain node and tsx detect ES syntax by themselves; the
 * entry-point tests load modules without one).
 */
function moduleTree(t: Parameters<typeof tempTree>[0], files: Record<string, string>): ReturnType<typeof tempTree> {
  return tempTree(t, { 'package.json': '{ "type": "module" }', ...files })
}

/** Collects the warnings a load emits. */
function warnings(): { warn: (message: string) => void; seen: string[] } {
  const seen: string[] = []
  return { seen, warn: (message) => seen.push(message) }
}

t.test('MAPPINGS module: a .js default export (an array of documents, a compound among them)', async (t) => {
  const tree = moduleTree(t, {
    'mappings.js': `export default [
  { $id: 'one', mapping: { '/a': '/' } },
  { $id: 'pair', mappings: { first: { $id: 'first', mapping: { '/f': '/' } }, second: { $id: 'second', mapping: { '/s': '/' } } } },
]
`,
  })
  const entries = await loadMappings(tree.path('mappings.js'))
  t.strictSame(ids(entries), ['one', 'first', 'second'], 'every mapping by its $id, compound members included')
  t.ok(entries.every((entry) => entry.source === tree.path('mappings.js')), 'each entry names the module')
})

t.test('MAPPINGS module: a .ts default export (an object keyed by $id, typed)', async (t) => {
  const tree = moduleTree(t, {
    'mappings.ts': `interface Doc { $id: string; mapping: Record<string, unknown> }
const echo: Doc = { $id: 'echo2', mapping: { '/echo': '/' } }
const upper: Doc = { $id: 'upper', mapping: { '/u': '/name' } }
export default { echo2: echo, upper } satisfies Record<string, Doc>
`,
  })
  t.strictSame(ids(await loadMappings(tree.path('mappings.ts'))), ['echo2', 'upper'])
})

t.test('MAPPINGS module: one document, { mappings } forms, and what is refused', async (t) => {
  const tree = moduleTree(t, {
    'single.js': 'export default { $id: \'solo\', mapping: { \'/x\': \'/\' } }\n',
    'wrapped.mjs': 'export default { mappings: { a: { $id: \'wa\', mapping: {} }, b: { $id: \'wb\', mapping: {} } } }\n',
    'list.js': 'export default { mappings: [{ $id: \'la\', mapping: {} }] }\n',
    'number.js': 'export default 7\n',
    'anonymous.js': 'export default [{ mapping: { \'/x\': \'/\' } }]\n',
    'twice.js': 'export default [{ $id: \'d\', mapping: {} }, { $id: \'d\', mapping: {} }]\n',
    'nodefault.js': 'export const mappings = {}\n',
  })
  t.strictSame(ids(await loadMappings(tree.path('single.js'))), ['solo'], 'a single document registers itself')
  t.strictSame(ids(await loadMappings(tree.path('wrapped.mjs'))), ['wa', 'wb'], '{ mappings: { … } }')
  t.strictSame(ids(await loadMappings(tree.path('list.js'))), ['la'], '{ mappings: [ … ] }')
  await t.rejects(loadMappings(tree.path('number.js')), { name: 'SourceError', message: `${tree.path('number.js')} must hold mapping documents or loadMappings() entries: an array, an object keyed by $id, { mappings } or one document` })
  await t.rejects(loadMappings(tree.path('anonymous.js')), { message: `mapping without $id in ${tree.path('anonymous.js')}` })
  await t.rejects(loadMappings(tree.path('twice.js')), { message: /^duplicate mapping \$id "d"/ })
  await t.rejects(loadMappings(tree.path('nodefault.js')), { message: `${tree.path('nodefault.js')} has no default export` })
  t.throws(() => mappingEntries(null as never), { name: 'SourceError' }, 'programmatic null is refused, not a TypeError')
})

t.test('MAPPINGS document file: .json, .yaml, .yml; a compound registers its members by $id', async (t) => {
  const tree = tempTree(t, {
    'one.json': JSON.stringify({ $id: 'j', mapping: { '/j': '/' } }),
    'one.yaml': '$id: y\nmapping:\n  /y: /\n',
    'compound.yml': '$id: bundle\ndescription: two members\nmappings:\n  keyA:\n    $id: memberA\n    mapping: { /a: / }\n  keyB:\n    $id: memberB\n    mapping: { /b: /a }\n',
    'bom.json': '\uFEFF' + JSON.stringify({ $id: 'bom', mapping: {} }),
    'array.json': '[]',
    'anonymous.yaml': 'mapping:\n  /x: /\n',
    'one.txt': 'echo',
  })
  t.strictSame(ids(await loadMappings(tree.path('one.json'))), ['j'])
  t.strictSame(ids(await loadMappings(tree.path('one.yaml'))), ['y'])
  const compound = await loadMappings(tree.path('compound.yml'))
  t.strictSame(ids(compound), ['memberA', 'memberB'], 'by $id, not by member key; the compound $id is not registered')
  t.strictSame(compound[1]!.document, { $id: 'memberB', mapping: { '/b': '/a' } })
  t.strictSame(ids(await loadMappings(tree.path('bom.json'))), ['bom'], 'a byte-order mark is not content')
  await t.rejects(loadMappings(tree.path('array.json')), { message: `not a mapping document: ${tree.path('array.json')}` })
  await t.rejects(loadMappings(tree.path('anonymous.yaml')), { message: `mapping without $id in ${tree.path('anonymous.yaml')}` })
  await t.rejects(loadMappings(tree.path('missing.json')), { message: `${tree.path('missing.json')} does not exist` })
  await t.rejects(loadMappings(tree.path('one.txt')), { message: /must be a module \(\.js\/\.ts\), a document file/ })
})

t.test('MAPPINGS directory: recursive, lexicographic path order, non-documents warned', async (t) => {
  const tree = tempTree(t, {
    'dir/b.json': JSON.stringify({ $id: 'b', mapping: {} }),
    'dir/a/z.yaml': '$id: az\nmapping: {}\n',
    'dir/a/b/deep.yml': '$id: abdeep\nmapping: {}\n',
    'dir/a-c.JSON': JSON.stringify({ $id: 'ac', mapping: {} }),
    'dir/c.yaml': '$id: group\nmappings:\n  m2: { $id: c2, mapping: {} }\n  m1: { $id: c1, mapping: {} }\n',
    'dir/README.md': '# notes',
    'dir/a/notes.txt': 'not a mapping',
    'dir/list.json': '[1, 2]',
    'dir/empty.yaml': '',
    'dir/a/input.json': JSON.stringify({ title: 'an input fixture beside its mapping', id: 7 }),
    'dir/extends.yaml': '$extend: b\n$id: extends\n',
    'dir/.hidden/x.json': JSON.stringify({ $id: 'hidden', mapping: {} }),
  })
  const { warn, seen } = warnings()
  const entries = await loadMappings(tree.path('dir'), { warn })
  // JS string order on the full path: '-' (0x2d) < '/' (0x2f) < 'b' < 'c'.
  t.strictSame(ids(entries), ['ac', 'abdeep', 'az', 'b', 'c2', 'c1', 'extends'], 'files in lexicographic path order; members in document order')
  t.strictSame(
    entries.map((entry) => entry.source),
    ['dir/a-c.JSON', 'dir/a/b/deep.yml', 'dir/a/z.yaml', 'dir/b.json', 'dir/c.yaml', 'dir/c.yaml', 'dir/extends.yaml'].map((relative) => tree.path(relative))
  )
  t.strictSame(
    [...seen].sort(),
    [
      `ignoring hidden directory ${tree.path('dir/.hidden')}`,
      `ignoring non-document file ${tree.path('dir/README.md')}`,
      `ignoring non-document file ${tree.path('dir/a/notes.txt')}`,
      `ignoring ${tree.path('dir/empty.yaml')}: not a mapping document (none of mapping, mappings, $id, $extend at its top)`,
      `ignoring ${tree.path('dir/list.json')}: not a mapping document (none of mapping, mappings, $id, $extend at its top)`,
      `ignoring ${tree.path('dir/a/input.json')}: not a mapping document (none of mapping, mappings, $id, $extend at its top)`,
    ].sort(),
    'every skipped file is named in a warning'
  )
})

t.test('MAPPINGS directory: duplicates name both files; unparseable files name file and line', async (t) => {
  const dup = tempTree(t, {
    'm/x.json': JSON.stringify({ $id: 'same', mapping: {} }),
    'm/w/y.yaml': '$id: same\nmapping: {}\n',
  })
  await t.rejects(loadMappings(dup.path('m')), {
    name: 'SourceError',
    message: `duplicate mapping $id "same" in ${dup.path('m/x.json')} (already registered from ${dup.path('m/w/y.yaml')})`,
  })
  const cases: Array<[string, string, string]> = [
    ['trailing.json', '{\n  "$id": "t",\n  "mapping": {},\n}\n', '(line 4, column 1): unexpected "}"'],
    ['unterminated.json', '{\n  "$id": "t\n}', '(line 2, column 12): unexpected "\\n"'],
    ['truncated.json', '{\n  "$id": "t",\n  "mapping": {', '(line 3, column 15): unexpected end of input'],
    ['comment.json', '// a comment\n{}', '(line 1, column 1): unexpected "/"'],
    ['tab.yaml', '$id: t\nmapping:\n\t/x: /\n', '(line 3, column 1)'],
    ['unclosed.yml', '$id: t\nmapping: { /x: /\n', '(line 3, column 1)'],
  ]
  for (const [name, text, where] of cases) {
    const tree = tempTree(t, { [`m/${name}`]: text })
    const kind = name.endsWith('.json') ? 'JSON' : 'YAML'
    const error = (await t.rejects(loadMappings(tree.path('m')), { name: 'SourceError' }, name)) as unknown as Error
    t.ok(error.message.startsWith(`${tree.path(`m/${name}`)} does not parse as ${kind} ${where}`), `${name}: ${error.message}`)
    t.notMatch(error.message, /\n/, `${name}: one line`)
  }
})

t.test('MAPPINGS directory: a ConfigMap-style volume (hidden data dir, links) registers each file once', async (t) => {
  const tree = tempTree(t, { 'volume/..2025_01_01/echo.json': JSON.stringify({ $id: 'vol', mapping: {} }) })
  symlinkSync('..2025_01_01', tree.path('volume/..data'))
  symlinkSync('..data/echo.json', tree.path('volume/echo.json'))
  symlinkSync('.', tree.path('volume/self'))
  symlinkSync('nowhere', tree.path('volume/dangling.json'))
  const { warn, seen } = warnings()
  const entries = await loadMappings(tree.path('volume'), { warn })
  t.strictSame(ids(entries), ['vol'], 'once, though reachable three ways (and a link loops back)')
  t.strictSame(
    [...seen].sort(),
    [
      `ignoring broken link ${tree.path('volume/dangling.json')}`,
      `ignoring hidden directory ${tree.path('volume/..2025_01_01')}`,
      `ignoring hidden file ${tree.path('volume/..data')}`,
    ]
  )
  t.equal(entries[0]!.source, tree.path('volume/echo.json'), 'read through the visible link')
})

/** Fail instead of hanging: these loads used to block forever. */
async function bounded<T>(what: string, work: Promise<T>, ms = 15000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([work, expired])
  } finally {
    clearTimeout(timer)
  }
}

t.test('MAPPINGS directory: only regular files are read; FIFOs, sockets, devices and links to them are skipped with a warning', async (t) => {
  const tree = tempTree(t, { 'm/good.json': JSON.stringify({ $id: 'good', mapping: {} }) })
  execFileSync('mkfifo', [tree.path('m/x.json')])
  const socket = createServer()
  await new Promise<void>((resolve) => socket.listen(tree.path('m/socket.json'), resolve))
  t.teardown(() => new Promise<void>((resolve) => socket.close(() => resolve())))
  symlinkSync('x.json', tree.path('m/to-fifo.yaml'))
  symlinkSync('/dev/zero', tree.path('m/zero.json'))
  const { warn, seen } = warnings()
  const entries = await bounded('loadMappings', loadMappings(tree.path('m'), { warn }))
  t.strictSame(ids(entries), ['good'])
  t.strictSame(
    [...seen].sort(),
    [
      `ignoring FIFO ${tree.path('m/to-fifo.yaml')}: not a regular file`,
      `ignoring FIFO ${tree.path('m/x.json')}: not a regular file`,
      `ignoring character device ${tree.path('m/zero.json')}: not a regular file`,
      `ignoring socket ${tree.path('m/socket.json')}: not a regular file`,
    ]
  )
})

t.test('a FIFO named as MAPPINGS, OPTIONS_FILE or EXTENSIONS fails at once, naming it', async (t) => {
  const tree = tempTree(t)
  for (const name of ['pipe.json', 'pipe.js', 'options.yaml']) execFileSync('mkfifo', [tree.path(name)])
  await t.rejects(bounded('a document', loadMappings(tree.path('pipe.json'))), { name: 'SourceError', message: `${tree.path('pipe.json')} is not a regular file (a FIFO)` })
  await t.rejects(bounded('a module', loadMappings(tree.path('pipe.js'))), { name: 'SourceError', message: `${tree.path('pipe.js')} is not a regular file (a FIFO)` })
  await t.rejects(bounded('options', configFromEnvironment({ OPTIONS_FILE: tree.path('options.yaml') }, () => {})), {
    message: `OPTIONS_FILE: ${tree.path('options.yaml')} is not a regular file (a FIFO)`,
  })
  await t.rejects(bounded('extensions', configFromEnvironment({ OPTIONS: SILENT, EXTENSIONS: tree.path('pipe.js') }, () => {})), {
    message: `EXTENSIONS: ${tree.path('pipe.js')} is not a regular file (a FIFO)`,
  })
  await t.rejects(loadMappings('/dev/null'), { name: 'SourceError' }, 'a device is refused too')
})

t.test('a module whose top-level await never settles fails after the load timeout, naming it', async (t) => {
  const tree = moduleTree(t, {
    'hang.js': 'await new Promise(() => {})\nexport default {}\n',
    'hang-mappings.js': 'await new Promise(() => {})\nexport default []\n',
    'slow.js': 'await new Promise((resolve) => setTimeout(resolve, 50))\nexport default { transformers: { id: (value) => value } }\n',
  })
  await t.rejects(bounded('loadExtensions', loadExtensions(tree.path('hang.js'), { timeoutMs: 200 })), {
    name: 'SourceError',
    message: `${tree.path('hang.js')} did not finish loading within 200 ms (options.server.loadTimeout)`,
  })
  const options = JSON.stringify({ logging: { level: 'silent' }, server: { loadTimeout: 300 } })
  await t.rejects(bounded('EXTENSIONS', configFromEnvironment({ OPTIONS: options, EXTENSIONS: tree.path('hang.js') }, () => {})), {
    name: 'SourceError',
    message: `EXTENSIONS: ${tree.path('hang.js')} did not finish loading within 300 ms (options.server.loadTimeout)`,
  })
  await t.rejects(bounded('MAPPINGS', configFromEnvironment({ OPTIONS: options, MAPPINGS: tree.path('hang-mappings.js') }, () => {})), {
    name: 'SourceError',
    message: `MAPPINGS: ${tree.path('hang-mappings.js')} did not finish loading within 300 ms (options.server.loadTimeout)`,
  })
  const slow = await configFromEnvironment({ OPTIONS: options, EXTENSIONS: tree.path('slow.js') }, () => {})
  t.strictSame(Object.keys(slow.extensions?.transformers ?? {}), ['id'], 'a top-level await that settles in time loads')
})

t.test('configFromEnvironment: MAPPINGS unset serves the bundled examples with the stock surface', async (t) => {
  const config = await configFromEnvironment({ OPTIONS: SILENT, PORT: '0' }, () => t.fail('no warning expected'))
  t.equal(config.port, 0)
  t.strictSame(ids(config.mappings as MappingEntry[]).sort(), ['citation', 'echo', 'greet'])
  t.strictSame(Object.keys(config.extensions?.plugins ?? {}), ['request'])
  const defaults = await configFromEnvironment({ OPTIONS: SILENT }, () => {})
  t.equal(defaults.port, 3333, 'PORT defaults to 3333')
})

t.test('configFromEnvironment: warnings from MAPPINGS reach the warn callback', async (t) => {
  const tree = tempTree(t, { 'm/a.json': JSON.stringify({ $id: 'a', mapping: {} }), 'm/notes.md': '' })
  const { warn, seen } = warnings()
  await configFromEnvironment({ OPTIONS: SILENT, MAPPINGS: tree.path('m') }, warn)
  t.strictSame(seen, [`ignoring non-document file ${tree.path('m/notes.md')}`])
})

const EXTENSIONS_JS = `export default {
  initializers: { zero: () => 0 },
  transformers: { shout: (value) => String(value).toUpperCase() + '!' },
  plugins: { lookup: async (options, value) => ({ found: value, via: options.via }) },
}
`

const EXTENSIONS_TS = `import type { Extensions } from '${new URL('../engine/index.ts', import.meta.url).href}'

const twice = (value: unknown): unknown => (typeof value === 'number' ? value * 2 : value)
const surface: Extensions = { transformers: { twice }, plugins: { stamp: async (_options: unknown, value: unknown) => ({ stamped: value }) } }
export default surface
`

for (const [kind, file, text, names, mapping, expected] of [
  [
    '.js',
    'extensions.js',
    EXTENSIONS_JS,
    { initializers: ['zero'], transformers: ['shout'], plugins: ['lookup'] },
    { '/s': { source: '/name', transform: 'shout' }, '/l': { source: '/id', lookup: { via: 'test' } } },
    { s: 'ADA!', l: { found: 7, via: 'test' } },
  ],
  [
    '.ts',
    'extensions.ts',
    EXTENSIONS_TS,
    { initializers: [], transformers: ['twice'], plugins: ['stamp'] },
    { '/t': { source: '/id', transform: 'twice' }, '/p': { source: '/name', stamp: {} } },
    { t: 14, p: { stamped: 'Ada' } },
  ],
] as const) {
  t.test(`EXTENSIONS ${kind} module replaces the whole stock surface`, async (t) => {
    const tree = moduleTree(t, { [file]: text, 'm/uses.json': JSON.stringify({ $id: 'uses', mapping }) })
    const config = await configFromEnvironment({ OPTIONS: SILENT, MAPPINGS: tree.path('m'), EXTENSIONS: tree.path(file) }, () => {})
    const { port: _port, ...build } = config
    const app = await buildServer(build)
    t.teardown(() => app.close())
    const surface = await app.inject({ method: 'GET', url: '/extensions' })
    t.equal(surface.statusCode, 200)
    t.strictSame(surface.json(), names, 'only the module’s names: no stock request plugin')
    const mapped = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'uses', input: { name: 'Ada', id: 7 } } })
    t.strictSame(mapped.json(), { ...expected, valid: true, errors: [] }, 'a registered mapping uses them')
    const request = await app.inject({ method: 'POST', url: '/validate', payload: { mapping: { mapping: { '/r': { request: { url: '/x' } } } } } })
    t.match(request.json(), { warnings: [{ rule: 'KW-2', pointer: '/mapping/~1r/request' }] }, 'the stock request plugin is gone: `request` matches nothing')
  })
}

t.test('OPTIONS_FILE: .json, .yaml and .yml are read and applied', async (t) => {
  const tree = tempTree(t, {
    'options.json': JSON.stringify({ logging: { level: 'silent' }, requestIdPrefix: 'json_' }),
    'options.yaml': 'logging:\n  level: silent\nrequestIdPrefix: yaml_\n',
    'options.yml': '# comments are fine\nlogging: { level: silent }\nrequestIdPrefix: yml_\nmap:\n  explicit: true\n',
    'empty.yaml': '',
  })
  for (const [file, prefix] of [
    ['options.json', 'json_'],
    ['options.yaml', 'yaml_'],
    ['options.yml', 'yml_'],
  ] as const) {
    const { port: _port, ...build } = await configFromEnvironment({ OPTIONS_FILE: tree.path(file) }, () => {})
    const app = await buildServer(build)
    t.teardown(() => app.close())
    const response = await app.inject({ method: 'GET', url: '/health' })
    t.match(response.headers['x-request-id'], new RegExp(`^${prefix}[0-9a-f]{16}$`), `${file}: its requestIdPrefix applies`)
  }
  const { options } = await configFromEnvironment({ OPTIONS_FILE: tree.path('options.yml') }, () => {})
  t.strictSame(options, { logging: { level: 'silent' }, requestIdPrefix: 'yml_', map: { explicit: true } })
  const empty = await configFromEnvironment({ OPTIONS_FILE: tree.path('empty.yaml'), MAPPINGS: tree.path('options.json').replace('options.json', 'nothing-here') }, () => {}).catch((error: Error) => error.message)
  t.equal(empty, `MAPPINGS: ${tree.path('nothing-here')} does not exist`, 'an empty options file is {} (the next setting is checked)')
})

t.test('configFromEnvironment: the setting is named in every source failure', async (t) => {
  const tree = moduleTree(t, { 'bad.yaml': 'a: [\n', 'ext.js': 'export default { plugins: { find: async () => 1 } }\n' })
  await t.rejects(configFromEnvironment({ OPTIONS: '{', MAPPINGS: tree.root }, () => {}), { message: 'OPTIONS is not valid JSON (line 1, column 2): unexpected end of input' })
  await t.rejects(configFromEnvironment({ OPTIONS_FILE: tree.path('bad.yaml') }, () => {}), { message: new RegExp(`^OPTIONS_FILE: ${tree.path('bad.yaml')} does not parse as YAML \\(line 2, column 1\\)`) })
  await t.rejects(configFromEnvironment({ OPTIONS: SILENT, EXTENSIONS: tree.path('ext.js') }, () => {}), {
    name: 'SourceError',
    message: `EXTENSIONS: ${tree.path('ext.js')}: plugin "find" cannot be registered: "find" is a keyword of the mapping language`,
  })
  await t.rejects(configFromEnvironment({ OPTIONS: '{"nope":true}' }, () => {}), { name: 'ConfigError', message: /^options\.nope/ })
  await t.rejects(configFromEnvironment({ OPTIONS: 'null' }, () => {}), { name: 'SourceError', message: 'OPTIONS must be a JSON object, not null' })
  await t.rejects(configFromEnvironment({ OPTIONS: '[{"host":"x"}]' }, () => {}), { message: 'OPTIONS must be a JSON object, not an array' })
  const list = tree.write('list.yaml', '- host: 127.0.0.1\n')
  await t.rejects(configFromEnvironment({ OPTIONS_FILE: list }, () => {}), { message: `OPTIONS_FILE: ${list} must hold an object, not an array` })
})

t.test('the JSON syntax locator agrees with JSON.parse on what is JSON', async (t) => {
  const parses = (text: string): boolean => {
    try {
      JSON.parse(text)
      return true
    } catch {
      return false
    }
  }
  fc.assert(
    fc.property(fc.json(), fc.nat(4), (text, indent) => {
      const pretty = JSON.stringify(JSON.parse(text), null, indent)
      return jsonSyntaxProblem(text) === undefined && jsonSyntaxProblem(pretty) === undefined
    })
  )
  // Damaged JSON: a character dropped or inserted somewhere.
  fc.assert(
    fc.property(fc.json(), fc.nat(), fc.constantFrom('', ',', '}', ']', '"', ':', 'x', '\n'), (text, at, insert) => {
      const position = at % (text.length + 1)
      const damaged = text.slice(0, position) + insert + text.slice(position + (insert === '' ? 1 : 0))
      return parses(damaged) === (jsonSyntaxProblem(damaged) === undefined)
    })
  )
  t.pass('valid JSON has no problem; invalid JSON always has one')
})
