// The published declarations as a strict TypeScript consumer meets them: the shipped files'
// declarations are emitted as `npm run build` emits them (TypeScript 7's tsc, test/tsc.ts, over
// tsconfig.build.json) into a package beside a consumer project, which compiles with `strict`:
// under TypeScript 7 without `skipLibCheck` (the declarations themselves are checked), and under
// TypeScript 5.9 (the `typescript` package's API), which a consumer may still use, with it, as most
// projects compile (5.9 must read the declarations and type the same uses and mistakes alike; a
// full check of every dependency's declarations by 5.9 cost ten seconds of CPU more). One file uses the plugin, the engine and the request plugin
// and must compile with no error at all (its `@ts-expect-error` lines must each meet one); another
// holds the mistakes a user makes and must fail, each on its own line.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import t from 'tap'
import ts from 'typescript'
import { ROOT, tempTree } from './startup-support.js'
import { tsc, type Diagnostic } from './tsc.js'

t.setTimeout(300000)

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }

/** A consumer project with mapper-service installed: its declarations and package.json, its dependencies linked. */
async function consumer(root: string): Promise<void> {
  const installed = join(root, 'node_modules', 'mapper-service')
  const emitted = await tsc(['-p', 'tsconfig.build.json', '--emitDeclarationOnly', '--outDir', join(installed, 'dist')])
  if (emitted.code !== 0) throw new Error(`the declarations were not emitted: ${emitted.output}`)
  // The build's last step (npm run build): the catalogue's declarations load the keyword modules' operand types.
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'keyword-declarations.mjs'), join(installed, 'dist')])
  const written = readdirSync(join(installed, 'dist'), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.d.ts')).length
  if (written < 100) throw new Error(`only ${written} declaration files were emitted`)
  writeFileSync(join(installed, 'package.json'), readFileSync(join(ROOT, 'package.json')))
  for (const name of [...Object.keys(manifest.dependencies), '@types/node']) {
    const link = join(root, 'node_modules', name)
    mkdirSync(dirname(link), { recursive: true })
    symlinkSync(join(ROOT, 'node_modules', name), link, 'dir')
  }
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }))
}

/** The consumer's compiler options, as its tsconfig.json has them. */
const STRICT = {
  strict: true,
  skipLibCheck: false,
  noEmit: true,
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  lib: ['ES2023'],
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
import { Mapper, type MappingDocument } from 'mapper-service/engine'

const app = Fastify()
const mapper = new Mapper({}, {})
await app.register(mapperService, { options: { map: { explicit: 'yes' } } }) // TS2769
await app.register(mapperService, { options: { logging: { levle: 'warn' } } }) // TS2769
await app.register(mapperService, { serverIds: true }) // TS2769
await app.register(mapperService, { options: { openapi: { hideFromHots: true } } }) // TS2769
await app.mapper.map(42, {}) // TS2345
await mapper.map({ mapping: {} }, {}, { limits: { timeMs: 50 } }) // TS2322
const coerced: MappingDocument = { mapping: { '/n': { source: '/n', as: 'integer' } } } // TS2322
`

/** The errors of the consumer's two files, compiled by TypeScript 5.9 through its API (skipLibCheck, above). */
function compiledBy59(root: string, files: readonly string[]): Diagnostic[] {
  const { options, errors } = ts.convertCompilerOptionsFromJson({ ...STRICT, skipLibCheck: true }, root)
  if (errors.length > 0) throw new Error(ts.flattenDiagnosticMessageText(errors[0]!.messageText, '\n'))
  const program = ts.createProgram({ rootNames: files, options })
  return ts.getPreEmitDiagnostics(program).map((d) => ({
    file: d.file?.fileName ?? '',
    line: d.file === undefined || d.start === undefined ? 0 : d.file.getLineAndCharacterOfPosition(d.start).line + 1,
    code: `TS${d.code}`,
    message: ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0]!,
  }))
}

/** The same, compiled by TypeScript 7's tsc over a tsconfig.json of the consumer's. */
async function compiledBy7(root: string, files: readonly string[]): Promise<Diagnostic[]> {
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: STRICT, files: files.map((file) => relative(root, file)) }))
  const compiled = await tsc(['-p', join(root, 'tsconfig.json')], root)
  if (compiled.code !== 0 && compiled.diagnostics.length === 0) throw new Error(`tsc failed without a diagnostic: ${compiled.output}`)
  return compiled.diagnostics.map((d) => ({ ...d, file: join(root, d.file) }))
}

t.test('the declarations compile in a strict consumer, and a user\'s mistakes do not', async (t) => {
  const tree = tempTree(t)
  await consumer(tree.root)
  const uses = tree.write('uses.ts', USES)
  const mistakes = tree.write('mistakes.ts', MISTAKES)
  const lines = MISTAKES.split('\n')
  const expected = lines.flatMap((line, index) => {
    const code = /\/\/ (TS\d+)$/.exec(line)?.[1]
    return code === undefined ? [] : [`mistakes.ts:${index + 1} ${code}`]
  })
  const describe = (d: Diagnostic): string => `${d.file === '' ? '' : relative(tree.root, d.file)}:${d.line} ${d.code} ${d.message}`
  for (const [compiler, compile] of [['TypeScript 7', compiledBy7], ['TypeScript 5.9', compiledBy59]] as const) {
    const diagnostics = await compile(tree.root, [uses, mistakes])
    const inUses = diagnostics.filter((d) => d.file !== mistakes)
    t.strictSame(inUses.map(describe), [], `${compiler}: the use of the plugin and the engine compiles, the declarations included, each @ts-expect-error meeting its error`)
    const found = diagnostics.filter((d) => d.file === mistakes).map((d) => describe(d).split(' ').slice(0, 2).join(' '))
    t.strictSame(found, expected, `${compiler}: every mistake fails to compile, on its own line, and nothing else does`)
  }
})
