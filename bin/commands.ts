// The commands of the mapper-service CLI (http.md §10) other than serving: `validate` checks
// mapping files against the configured extension surface for CI pipelines, `map` evaluates one
// mapping once. Both read MAPPINGS and EXTENSIONS as the server does.
import { readFile, stat } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { loadExtensions } from '../config/extensions.js'
import { DOCUMENT_EXTENSIONS, SourceError, extensionOf, parseDocumentText, readDocumentFile } from '../config/files.js'
import { bundledMappingsPath, loadMappings, type MappingEntry } from '../config/mappings.js'
import { Mapper, type Diagnostic, type Extensions, type ValidationReport } from '../engine/index.js'
import { stockExtensions } from '../extensions/stock.js'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'

interface Io {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  readonly stdin: () => Promise<string>
  readonly env: NodeJS.ProcessEnv
}

/** Bad arguments or unreadable files: exit code 2, one line on stderr. */
class UsageError extends Error {
  override readonly name = 'UsageError'
}

const USAGE = {
  main: `Usage: mapper-service [command]

Commands:
  (none)                               serve (PORT, MAPPINGS, EXTENSIONS, OPTIONS / OPTIONS_FILE)
  validate <file|dir>...               validate mapping documents; exit 1 if any is invalid
  map <mapping-file-or-id> [input|-]   evaluate a mapping once and print the envelope (--explain: with its trace)

Run "mapper-service <command> --help" for a command's details.
`,
  validate: `Usage: mapper-service validate <file|dir>...

Validates each mapping document (.json, .yaml, .yml; directories recursively) at the instance
level: well-formedness, the pattern safety screen, and reachability of every name against the
extension surface (EXTENSIONS, else the stock one) and the mappings (MAPPINGS, else the bundled
examples, plus every document given). Prints each report; exits 0 when all are valid, 1 when any
is invalid, 2 on bad arguments or unreadable files.
`,
  map: `Usage: mapper-service map [--explain] <mapping-file-or-id> [input.json|-]

Evaluates a mapping once and prints the envelope { ...output, valid, errors } as JSON. The
mapping is a document file, or the id of a mapping in MAPPINGS (else the bundled examples). The
input is a JSON or YAML file, "-" for standard input, or absent. Exits 0 when the envelope is
valid, 1 when it is not, 2 on bad arguments, unreadable files or an evaluation failure.

  --explain   add the explain trace beside valid and errors, as POST /map does with
              "explain": true: per pairing, its target, the input pointers read, the value after
              each pipeline stage, the branch taken and plugin timings
`,
}

async function surface(env: NodeJS.ProcessEnv): Promise<{ extensions: Extensions; mappings: MappingEntry[] }> {
  const extensions = env.EXTENSIONS ? await loadExtensions(env.EXTENSIONS) : stockExtensions(env)
  const mappings = await loadMappings(env.MAPPINGS ? env.MAPPINGS : bundledMappingsPath())
  return { extensions, mappings }
}

async function documentFiles(path: string): Promise<string[]> {
  let info
  try {
    info = await stat(path)
  } catch {
    throw new UsageError(`${path}: no such file or directory`)
  }
  if (!info.isDirectory()) return [path]
  const found: string[] = []
  for (const entry of (await readdir(path, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const child = join(path, entry.name)
    if (entry.isDirectory()) found.push(...(await documentFiles(child)))
    else if (DOCUMENT_EXTENSIONS.has(extensionOf(child))) found.push(child)
  }
  return found
}

function describe(entry: Diagnostic, severity: 'error' | 'warning'): string {
  const where = entry.pointer === '' ? '(document)' : entry.pointer
  return `  ${severity} ${entry.rule} at ${where}: ${entry.message}`
}

/** `validate <file|dir>...` → exit code. */
async function validateCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } })
  if (values.help) {
    io.out(USAGE.validate)
    return 0
  }
  if (positionals.length === 0) throw new UsageError('validate needs at least one file or directory')
  const files = (await Promise.all(positionals.map(documentFiles))).flat()
  if (files.length === 0) throw new UsageError('no mapping documents (.json, .yaml, .yml) found')
  const documents: Array<[string, unknown]> = []
  for (const file of files) {
    try {
      documents.push([file, await readDocumentFile(file)])
    } catch (error) {
      throw new UsageError((error as Error).message)
    }
  }
  const { extensions, mappings } = await surface(io.env)
  const mapper = new Mapper({}, extensions)
  mapper.register({ mappings: Object.fromEntries(mappings.map((m, i) => [String(i), m.document])) })
  // The documents given are visible to each other, as they would be once registered together.
  const given = documents.flatMap(([, document]) => {
    if (document === null || typeof document !== 'object') return []
    const compound = (document as { mappings?: unknown }).mappings
    return compound !== null && typeof compound === 'object' ? Object.values(compound) : [document]
  })
  try {
    mapper.register({ mappings: Object.fromEntries(given.filter((d) => typeof (d as { $id?: unknown }).$id === 'string').map((d, i) => [String(i), d])) })
  } catch {
    // Registration problems ($extend) are reported per document by validation below.
  }
  let invalid = 0
  for (const [file, document] of documents) {
    const report: ValidationReport = mapper.validate(document)
    if (!report.valid) invalid++
    io.out(`${file}: ${report.valid ? 'valid' : 'invalid'}${report.warnings.length > 0 ? ` (${report.warnings.length} warning${report.warnings.length === 1 ? '' : 's'})` : ''}\n`)
    for (const entry of report.errors) io.out(`${describe(entry, 'error')}\n`)
    for (const entry of report.warnings) io.out(`${describe(entry, 'warning')}\n`)
  }
  io.out(`${documents.length} document${documents.length === 1 ? '' : 's'}, ${invalid} invalid\n`)
  return invalid === 0 ? 0 : 1
}

async function readInput(path: string | undefined, io: Io): Promise<unknown> {
  if (path === undefined) return undefined
  if (path === '-') {
    const text = await io.stdin()
    try {
      return JSON.parse(text) as unknown
    } catch (error) {
      throw new UsageError(`standard input is not valid JSON: ${(error as Error).message}`)
    }
  }
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch {
    throw new UsageError(`${path}: cannot be read`)
  }
  try {
    return parseDocumentText(text, extensionOf(path) === '' ? `${path}.json` : path)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/** `map <mapping-file-or-id> [input|-]` → exit code. */
async function mapCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { help: { type: 'boolean', short: 'h' }, explain: { type: 'boolean' } },
  })
  if (values.help) {
    io.out(USAGE.map)
    return 0
  }
  if (positionals.length < 1 || positionals.length > 2) throw new UsageError('map needs a mapping file or id, and optionally an input file or -')
  const [target, inputPath] = positionals as [string, string | undefined]
  const { extensions, mappings } = await surface(io.env)
  const mapper = new Mapper({}, extensions)
  mapper.register({ mappings: Object.fromEntries(mappings.map((m, i) => [String(i), m.document])) })
  let mapping: unknown = target
  const isFile = await stat(target).then((s) => s.isFile(), () => false)
  if (isFile) {
    try {
      mapping = await readDocumentFile(target)
    } catch (error) {
      throw new UsageError((error as Error).message)
    }
  } else if (!Object.hasOwn(mapper.mappings, target)) {
    throw new UsageError(`${target}: neither a file nor a registered mapping id`)
  }
  const report = mapper.validate(mapping)
  if (!report.valid) {
    io.err(`${target} is not a valid mapping:\n${report.errors.map((e) => describe(e, 'error')).join('\n')}\n`)
    return 2
  }
  const input = await readInput(inputPath, io)
  let envelope
  try {
    if (values.explain) {
      const explained = await mapper.explain(mapping, input)
      envelope = { ...explained.envelope, explain: explained.explain }
    } else {
      envelope = await mapper.map(mapping, input)
    }
  } catch (error) {
    throw new UsageError(`evaluation failed: ${(error as Error).message}`)
  }
  io.out(`${JSON.stringify(envelope, null, 2)}\n`)
  return envelope.valid ? 0 : 1
}

/** Dispatch a command line (without the node and script arguments); undefined means "serve". */
export async function runCommand(argv: string[], io: Io): Promise<number | undefined> {
  const [command, ...rest] = argv
  try {
    if (command === undefined) return undefined
    if (command === '--help' || command === '-h' || command === 'help') {
      io.out(USAGE.main)
      return 0
    }
    if (command === 'validate') return await validateCommand(rest, io)
    if (command === 'map') return await mapCommand(rest, io)
    throw new UsageError(`unknown command "${command}" (try --help)`)
  } catch (error) {
    if (error instanceof UsageError || error instanceof SourceError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`mapper-service: ${(error as Error).message}\n`)
      return 2
    }
    throw error
  }
}
