// The published declarations as a strict TypeScript consumer meets them: the shipped files'
// declarations are emitted (as `npm run build` would; from the program test/typecheck.test.ts
// checks, test/typescript-project.ts) into a package beside a consumer project, which compiles with
// `strict` and without `skipLibCheck`. One file uses the plugin, the engine and the request plugin
// and must compile with no error at all (its `@ts-expect-error` lines must each meet one); another
// holds the mistakes a user makes and must fail, each on its own line.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import t from 'tap'
import ts from 'typescript'
import { ROOT, tempTree } from './startup-support.js'
import { emitDeclarations, sharingHost } from './typescript-project.js'

t.setTimeout(300000)

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }

/** A consumer project with mapper-service installed: its declarations and package.json, its dependencies linked. */
function consumer(root: string): void {
  const installed = join(root, 'node_modules', 'mapper-service')
  // From the project's checked program (test/typescript-project.ts), as the build emits them.
  const written = emitDeclarations(join(installed, 'dist'))
  if (written < 100) throw new Error(`only ${written} declaration files were emitted`)
  writeFileSync(join(installed, 'package.json'), readFileSync(join(ROOT, 'package.json')))
  for (const name of [...Object.keys(manifest.dependencies), '@types/node']) {
    const link = join(root, 'node_modules', name)
    mkdirSync(dirname(link), { recursive: true })
    symlinkSync(join(ROOT, 'node_modules', name), link, 'dir')
  }
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }))
}

const STRICT: ts.CompilerOptions = {
  strict: true,
  skipLibCheck: false,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2023.d.ts'],
  types: ['node'],
}

const USES = `
import Fastify from 'fastify'
import mapperService, { buildServer, loadMappings, type MapperHandle, type MapperServiceOptions, type Options } from 'mapper-service'
import { Mapper, type Envelope, type MappingDocument, type RunOptions } from 'mapper-service/engine'
import { createRequest, ResponseTooDeepError } from 'mapper-service/request'

const document: MappingDocument = { $id: 'title', mapping: { '/title': { source: '/book/title', as: 'string' } } }
const mapper = new Mapper({ mappings: [document] }, {})
const request = createRequest({ allowHeaders: [], denyPrivateNetworks: true })
const fetching = new Mapper({}, { plugins: { request } })
console.log(fetching.validate(document).valid, ResponseTooDeepError.name)
const run: RunOptions = { limits: { timeMs: 50 } }
const envelope: Envelope = await mapper.map('title', { book: { title: 'x' } }, { identity: { sub: 'a' } }, run)
console.log(envelope.valid, envelope.errors.length)

const options: Options = { map: { explicit: { stdout: false } }, logging: { level: 'warn' }, limits: { outputBytes: 1000 } }
const service: MapperServiceOptions = { mappings: [document], options }
const app = Fastify()
await app.register(mapperService, { prefix: '/mapper', ...service })
// Documents and loadMappings() entries in one array; the host's document options; the decorator.
const mixed = [...(await loadMappings('./mappings')), document]
await app.register(mapperService, { prefix: '/two', mappings: mixed, decorator: 'second', options: { openapi: { hideFromHost: true, operationIdPrefix: 'two_' } } })
// The engine takes the same mappings (issue 32): the mixed array, one loadMappings() entry alone.
const engineToo = new Mapper({ mappings: mixed })
const oneEntry = new Mapper({ mappings: (await loadMappings('./mappings'))[0]! })
console.log(Object.keys(engineToo.mappings), Object.keys(oneEntry.mappings))
const handle: MapperHandle = app.mapper
const viaHost: Envelope = await handle.map('title', { book: { title: 'x' } })
console.log(viaHost.valid, app.mapper.has('title'), Object.keys(app.mapper.mappings))
const standalone = await buildServer({ options: { map: { explicit: true } } })
await standalone.close()

// @ts-expect-error a number is not a mapping document
const notADocument: MappingDocument = 42
// @ts-expect-error options a host should not set: the resolved configuration is internal
await app.register(mapperService, { config: {} })
console.log(notADocument)
`

/** Each mistake on a line of its own, marked with the code of the error it must give. */
const MISTAKES = `
import Fastify from 'fastify'
import mapperService from 'mapper-service'
import { Mapper } from 'mapper-service/engine'

const app = Fastify()
const mapper = new Mapper({}, {})
await app.register(mapperService, { options: { map: { explicit: 'yes' } } }) // TS2769
await app.register(mapperService, { options: { logging: { levle: 'warn' } } }) // TS2769
await app.register(mapperService, { serverIds: true }) // TS2769
await app.register(mapperService, { options: { openapi: { hideFromHots: true } } }) // TS2769
await app.mapper.map(42, {}) // TS2345
await mapper.map({ mapping: {} }, {}, { limits: { timeMs: 50 } }) // TS2322
`

t.test('the declarations compile in a strict consumer, and a user\'s mistakes do not', async (t) => {
  const tree = tempTree(t)
  consumer(tree.root)
  const uses = tree.write('uses.ts', USES)
  const mistakes = tree.write('mistakes.ts', MISTAKES)
  const program = ts.createProgram({ rootNames: [uses, mistakes], options: STRICT, host: sharingHost(STRICT) })
  const diagnostics = ts.getPreEmitDiagnostics(program)
  const describe = (d: ts.Diagnostic): string => {
    const where = d.file === undefined || d.start === undefined ? '' : `${d.file.fileName.slice(tree.root.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1} `
    return `${where}TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0]}`
  }
  const inUses = diagnostics.filter((d) => d.file?.fileName !== mistakes)
  t.strictSame(inUses.map(describe), [], 'the use of the plugin and the engine compiles, the declarations included, each @ts-expect-error meeting its error')

  const lines = MISTAKES.split('\n')
  const expected = lines.flatMap((line, index) => {
    const code = /\/\/ (TS\d+)$/.exec(line)?.[1]
    return code === undefined ? [] : [`mistakes.ts:${index + 1} ${code}`]
  })
  const found = diagnostics.filter((d) => d.file?.fileName === mistakes).map((d) => describe(d).split(' ').slice(0, 2).join(' '))
  t.strictSame(found, expected, 'every mistake fails to compile, on its own line, and nothing else does')
})
