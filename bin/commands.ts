// The commands of the mapper-service CLI (http.md §10) other than serving: `validate` checks
// mapping files against the configured extension surface for CI pipelines, `test` runs their
// examples, `map` evaluates one mapping once, `schema` prints the JSON Schema of a mapping
// document. `validate`, `test` and `map` read MAPPINGS and EXTENSIONS as the server does.
import { readFileSync } from 'node:fs'
import { open, readFile, stat } from 'node:fs/promises'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { relative, sep } from 'node:path'
import picomatch from 'picomatch'
import { loadExtensions } from '../sources/extensions.js'
import { DocumentSyntaxError, SourceError, extensionOf, parseDocumentText, readDocumentFile } from '../sources/files.js'
import { locator, type Position } from '../sources/positions.js'
import { bundledMappingsPath, documentFilesUnder, holdsMappings, loadMappings, notMappings, type MappingEntry } from '../sources/mappings.js'
import {
  countExamples,
  entryOf,
  idOf,
  membersOf,
  describeDifference,
  boundReport,
  exampleDiagnostics,
  Mapper,
  mappingSchema,
  type CompiledMapping,
  type Diagnostic,
  type Envelope,
  type ExampleResult,
  type Extensions,
  type RunOptions,
  type ValidationReport,
} from '../engine/index.js'
import { didYouMean } from '../engine/suggest.js'
import { stockExtensions } from '../extensions/stock.js'
import { shapeError } from '../service/errors.js'
import { answerLines, errorLine, NdjsonReader, type Answering } from '../service/ndjson.js'

interface Io {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  readonly stdin: () => Promise<string>
  readonly env: NodeJS.ProcessEnv
  /** Standard input a chunk at a time (`map --ndjson`); without it, `stdin()` is read whole. */
  readonly stdinStream?: () => AsyncIterable<Buffer | string>
  /** Writes to standard output, false when it should be let drain first (`map --ndjson`); without it, `out`. */
  readonly write?: (text: string) => boolean
  /** Resolves once standard output has drained after `write` returned false. */
  readonly drain?: () => Promise<void>
  /** Whether standard error is a terminal: `map --ndjson` shows its progress there only then. */
  readonly errIsTerminal?: boolean
}

/** Bad arguments or unreadable files: exit code 2, one line on stderr. */
class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** The commands, as `runCommand` dispatches them: what an unknown command is compared with. */
const COMMANDS = ['validate', 'test', 'map', 'schema', 'publish', 'help'] as const

/** A word as a shell would take it back, for messages that quote what was typed: `'*.{yaml,json}'`. */
const quoted = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`)

/**
 * `parseArgs` for one command, its unknown option said in one line with the nearest option it
 * has (`--inclde` → `--include`) rather than Node's advice about positionals.
 */
function parseCommand<T extends ParseArgsConfig>(command: string, config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config)
  } catch (error) {
    const flag = (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'([^']+)'/.exec((error as Error).message)?.[1] : undefined
    if (flag === undefined) throw error
    // Long options are compared by name: a short one (-x) is one letter, near to every other.
    const suggestion = flag.startsWith('--') ? didYouMean(flag.slice(2), Object.keys(config.options ?? {}), (name) => `--${name}`) : ''
    throw new UsageError(`${command}: unknown option ${flag}${suggestion === '' ? ` (see mapper-service ${command} --help)` : suggestion}`)
  }
}

const USAGE = {
  main: `Usage: mapper-service [command]

Commands:
  (none)                               serve (PORT, MAPPINGS, EXTENSIONS, OPTIONS / OPTIONS_FILE)
  validate <file|dir>...               validate mapping documents; exit 1 if any is invalid
  test <file|dir>...                   run the examples of mapping documents; exit 1 on a mismatch
  map <mapping-file-or-id> [input|-]   evaluate a mapping once and print the envelope (--explain: with its trace;
                                       --ndjson: once per line of newline-delimited JSON, streamed)
  schema                               print the JSON Schema of a mapping document
  publish <file|dir>... --url <url>    validate mapping documents here, then write them to a
                                       service's mapping store (PUT /mappings/{id})

Run "mapper-service <command> --help" for a command's details.
`,
  validate: `Usage: mapper-service validate <file|dir>...

Validates each mapping document (.json, .yaml, .yml; directories recursively) at the instance
level: well-formedness, the pattern safety screen, and reachability of every name against the
extension surface (EXTENSIONS, else the stock one) and the mappings (MAPPINGS, else the bundled
examples, plus every document given); then runs a valid document's examples, each failing one an
EXAMPLE-1 error as in POST /validate. From a directory, only the files the server would register
(with mapping, mappings, $id or $extend at the top; the others are named on stderr). Prints each
report; a file that does not parse is reported and the others still run. Exits 0 when all are
valid, 1 when any is invalid or does not parse, 2 on bad arguments or unreadable files.

  --strict           warnings are errors (an unknown keyword, KW-2; a pairing to valid or
                     errors, CTX-3), as under the service's validate.strict
  --include <glob>   from a directory, take only files whose path below it matches (repeatable:
                     any of them). * within a name, ** across directories, ? one character,
                     {yaml,json} one of a set, [cg] and [!cg] one character of a class or not,
                     a leading ! for "not"; a glob without / matches the file name anywhere:
                     --include '*.mapping.json'. Quote globs, so the shell does not expand them
  --exclude <glob>   from a directory, leave out files whose path below it matches (repeatable)
  When the filters leave out every document file found, that is said and the exit code is 2.
`,
  test: `Usage: mapper-service test <file|dir>...

Runs the examples of each mapping document (.json, .yaml, .yml; directories recursively): every
{ input, output } under a document's examples (and under each compound member's) is evaluated as
the mapping would be once registered, against the extension surface (EXTENSIONS, else the stock
one) and the mappings (MAPPINGS, else the bundled examples, plus every document given), and the
envelope is compared with the example. From a directory, only the files the server would register
(the others are named on stderr). Prints one line per document as it is done and, for each
failing example, where the envelope differs. Exits 0 when every example passes, 1 when any fails
or a document is invalid or does not parse, 2 on bad arguments or unreadable files. A running
count of examples goes to stderr past 200 of them.

  --strict, --include <glob>, --exclude <glob>   as for validate
`,
  publish: `Usage: mapper-service publish <file|dir>... --url <service> [--token <token>]

Writes mapping documents (.json, .yaml, .yml; directories recursively, as validate reads them)
to a running service's mapping store, each with PUT /mappings/{id} under its $id (a compound
document under its entry's, its last member's): the service serves it at once, on every replica
(README "Managed mappings"). Every document is first validated here as validate does (examples
run, against EXTENSIONS and MAPPINGS of this environment); when any is invalid, nothing is sent.
The service validates each again against what it serves. Prints one line per document: the
version stored, or why the service refused it (with the mappings a refused change would break).
Exits 0 when every document was published, 1 when any is invalid or was refused, 2 on bad
arguments, unreadable files or a service that cannot be reached.

  --url <url>          the service's base URL, its path prefix included (or MAPPER_URL)
  --token <token>      a bearer token with the claims of options.mappings.write.claims (or
                       MAPPER_TOKEN, which keeps it out of the process list)
  --id <id>            the id of a single document that has no $id
  --if-match <n>       write only when version n is the one stored (one document): a change made
                       meanwhile by someone else is refused (412) instead of overwritten
  --create-only        write only ids that are not stored yet (If-None-Match: *)
  --strict, --include <glob>, --exclude <glob>   as for validate
`,
  schema: `Usage: mapper-service schema

Prints the JSON Schema (draft 2020-12) of a mapping document, generated from the keyword
catalogue: the document GET /schema/mapping.json serves. Point an editor at it for completion,
hovers and checks (README, "Authoring mappings").
`,
  map: `Usage: mapper-service map <mapping-file-or-id> [input.json|-]
       mapper-service map <mapping-file-or-id> --ndjson [input.ndjson|-]

Evaluates a mapping once and prints the envelope { ...output, valid, errors } as JSON. The
mapping is a document file, or the id of a mapping in MAPPINGS (else the bundled examples). The
input is a JSON or YAML file, "-" for standard input, or absent. Exits 0 when the envelope is
valid, 1 when it is not, 2 on bad arguments, unreadable files or an evaluation failure.

  --explain            add the explain trace beside valid and errors, as POST /map does with
                       "explain": true: per pairing, its target, the input pointers read, the
                       value after each pipeline stage, the branch taken and plugin timings
  --ndjson             the input (a file, or standard input when "-" or absent) is newline-delimited
                       JSON: each line is evaluated and answered by one line on standard output, in
                       input order, as POST /map/stream answers: the envelope, or an error line
                       {"line": n, "status": s, "error": {code, message, ...}} for a line that is
                       not JSON, is over --max-line-bytes or fails; empty lines are skipped. Read
                       and written a chunk at a time, in constant memory. On a terminal, standard
                       error shows records, records/s and bytes (from a file: a bar and an ETA).
                       Exits 0 when every line answered a valid envelope, 1 otherwise
  --concurrency <n>    with --ndjson, lines evaluated at once when the mapping awaits (plugins),
                       1 to 64, default 4; the output keeps the input order
  --max-line-bytes <n> with --ndjson, the longest line read (default 1048576, the service's
                       maxBodyBytes); a longer one is answered by a 413 error line and skipped
`,
}

async function surface(env: NodeJS.ProcessEnv): Promise<{ extensions: Extensions; mappings: MappingEntry[] }> {
  const extensions = env.EXTENSIONS ? await loadExtensions(env.EXTENSIONS) : stockExtensions(env)
  const mappings = await loadMappings(env.MAPPINGS ? env.MAPPINGS : bundledMappingsPath())
  return { extensions, mappings }
}

/**
 * A glob's test of a path relative to the directory scanned, `/`-separated, by picomatch: `*` and
 * `?` within a name, `**` across directories, brace sets (`*.{yaml,json}`), character classes
 * (`[cg]*`, `[!cg]*`), extglobs, and a leading `!` for "not". A glob without `/` is tried on the file's name,
 * in any directory (`*.mapping.json`), as in .gitignore. (picomatch's own `basename` option tries
 * every glob on the name alone, `sub/**` included, so the choice is made here.)
 */
export function globMatcher(glob: string): (path: string) => boolean {
  if (glob === '') throw new UsageError('a glob must not be empty')
  let test: (path: string) => boolean
  try {
    // posix: picomatch 4 reads `[!cg]` as a class holding `!` unless it is set (micromatch/picomatch#187).
    test = picomatch(glob, { dot: true, posix: true })
  } catch (error) {
    throw new UsageError(`${glob} is not a glob picomatch accepts: ${(error as Error).message}`)
  }
  if (glob.includes('/')) return test
  return (path) => test(path.slice(path.lastIndexOf('/') + 1))
}

/** Which files of a directory scan `validate` and `test` take: --include (any of them, when given) and not --exclude. */
export interface FileFilter {
  readonly include: ReadonlyArray<(path: string) => boolean>
  readonly exclude: ReadonlyArray<(path: string) => boolean>
  /** The filters as given on the command line (`--include '*.yaml'`), for the message when they leave no file. */
  readonly given: readonly string[]
}

const ALL_FILES: FileFilter = { include: [], exclude: [], given: [] }

/** The filter of the --include and --exclude globs given. */
function fileFilter(include: readonly string[] = [], exclude: readonly string[] = []): FileFilter {
  return {
    include: include.map(globMatcher),
    exclude: exclude.map(globMatcher),
    given: [...include.map((glob) => `--include ${quoted(glob)}`), ...exclude.map((glob) => `--exclude ${quoted(glob)}`)],
  }
}

/** The document files a path names, and how many of a directory's the filters left out. */
interface Found {
  readonly files: Array<{ file: string; scanned: boolean }>
  readonly left: number
}

/**
 * The document files a path names: a file as it is, a directory's document files (the server's
 * MAPPINGS scan: hidden entries and other files skipped, each named on stderr), narrowed by
 * `filter` (patterns over the path below the directory).
 */
async function documentFiles(path: string, io: Io, filter: FileFilter): Promise<Found> {
  let info
  try {
    info = await stat(path)
  } catch {
    throw new UsageError(`${path}: no such file or directory`)
  }
  if (!info.isDirectory()) return { files: [{ file: path, scanned: false }], left: 0 }
  const all = await documentFilesUnder(path, (message) => io.err(`mapper-service: ${message}\n`))
  const files = all
    .filter((file) => {
      const below = relative(path, file).split(sep).join('/')
      return (filter.include.length === 0 || filter.include.some((test) => test(below))) && !filter.exclude.some((test) => test(below))
    })
    .map((file) => ({ file, scanned: true }))
  return { files, left: all.length - files.length }
}

type Describe = (entry: Diagnostic, severity: 'error' | 'warning') => string

/**
 * How a file's diagnostics are printed: `  a.yaml:4:5: error KW-2 at /mapping/~1a: …`, the place
 * in the file where the pointer lands first, as editors and terminals link it (without a file, or
 * where the text gives no place, the pointer alone).
 */
function describer(file: string | undefined): Describe {
  // The file is read again, for its positions, only once there is something to place.
  let positions: ReturnType<typeof locator> | undefined | null = null
  const positionOf = (pointer: string): Position | undefined => {
    if (positions === null) {
      let text: string | undefined
      try {
        text = file === undefined ? undefined : readFileSync(file, 'utf8')
      } catch {
        text = undefined
      }
      positions = text === undefined ? undefined : locator(text)
    }
    return positions?.at(pointer)
  }
  return (entry, severity) => {
    const where = entry.pointer === '' ? '(document)' : entry.pointer
    const position = positionOf(entry.pointer)
    const place = position === undefined ? '' : `${file}:${position.line}:${position.column}: `
    return `  ${place}${severity} ${entry.rule} at ${where}: ${entry.message}`
  }
}

/** A file given or found: its document, or why it could not be read or parsed. */
interface Parsed {
  readonly file: string
  readonly document: unknown
}
interface Unparsed {
  readonly file: string
  readonly problem: string
}
type Given = Parsed | Unparsed

const parsed = (given: Given): given is Parsed => !('problem' in given)

/**
 * The documents under the paths given, parsed. A file that does not parse is kept with its error
 * (reported in its turn, as an invalid document; the others still run); one that cannot be read
 * is a usage error; one found in a directory that holds no mappings (an input fixture, say:
 * `holdsMappings`, the server's rule) is skipped, named on stderr.
 */
async function readDocuments(paths: readonly string[], io: Io, filter: FileFilter = ALL_FILES): Promise<Given[]> {
  const files: Array<{ file: string; scanned: boolean }> = []
  let left = 0
  for (const path of paths) {
    const found = await documentFiles(path, io, filter)
    for (const file of found.files) files.push(file)
    left += found.left
  }
  // Filters that keep nothing are more likely a mistake than a wish to check no file: said as such.
  if (files.length === 0 && left > 0) {
    throw new UsageError(`${filter.given.join(' ')} ${filter.given.length > 1 ? 'leave' : 'leaves'} out every document file (${plural(left, 'file')} under ${paths.join(', ')})`)
  }
  const documents: Given[] = []
  for (const { file, scanned } of files) {
    let document: unknown
    try {
      document = await readDocumentFile(file)
    } catch (error) {
      // A file that cannot be read ends the run (exit 2); one that does not parse is reported.
      if (!(error instanceof DocumentSyntaxError)) throw new UsageError((error as Error).message)
      documents.push({ file, problem: error.message })
      continue
    }
    if (scanned && !holdsMappings(document)) io.err(`mapper-service: ${notMappings(file)}\n`)
    else documents.push({ file, document })
  }
  if (documents.length === 0) throw new UsageError('no mapping documents (.json, .yaml, .yml) found')
  return documents
}

/** An engine with the configured surface and mappings, and the documents given registered over them. */
async function engineWith(documents: readonly Given[], env: NodeJS.ProcessEnv): Promise<Mapper> {
  const { extensions, mappings } = await surface(env)
  const mapper = new Mapper({}, extensions)
  mapper.register({ mappings: Object.fromEntries(mappings.map((m, i) => [String(i), m.document])) })
  // The documents given are visible to each other, as they would be once registered together.
  const given = documents.filter(parsed).flatMap(({ document }) => {
    if (document === null || typeof document !== 'object') return []
    const compound = (document as { mappings?: unknown }).mappings
    return compound !== null && typeof compound === 'object' ? Object.values(compound) : [document]
  })
  try {
    mapper.register({ mappings: Object.fromEntries(given.filter((d) => idOf(d) !== undefined).map((d, i) => [String(i), d])) })
  } catch {
    // Registration problems ($extend) are reported per document by validation.
  }
  return mapper
}

/**
 * What `validate` and `test` work on: the documents named (files, directories recursively) and an
 * engine that sees them beside MAPPINGS; undefined when only --help was asked for (and printed).
 */
async function givenDocuments(command: 'validate' | 'test', args: string[], io: Io): Promise<{ documents: Given[]; mapper: Mapper; strict: boolean } | undefined> {
  const { values, positionals } = parseCommand(command, {
    args,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      strict: { type: 'boolean' },
      include: { type: 'string', multiple: true },
      exclude: { type: 'string', multiple: true },
    },
  })
  if (values.help) {
    io.out(USAGE[command])
    return undefined
  }
  if (positionals.length === 0) throw new UsageError(`${command} needs at least one file or directory`)
  const documents = await readDocuments(positionals, io, fileFilter(values.include, values.exclude))
  return { documents, mapper: await engineWith(documents, io.env), strict: values.strict === true }
}

/** `3 documents`, `1 warning`. */
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`

/**
 * A document's report as POST /validate gives it: when it is valid, its examples run and each
 * failing one is an `EXAMPLE-1` error. The failing results come back too, for their differences.
 */
async function validateWithExamples(mapper: Mapper, document: unknown, run: RunOptions, strict: boolean): Promise<{ report: ValidationReport; failing: ExampleResult[] }> {
  const report = mapper.validate(document, { strict })
  if (!report.valid || countExamples(document) === 0) return { report, failing: [] }
  const failing = (await mapper.examples(document, { run })).filter((result) => !result.pass)
  if (failing.length === 0) return { report, failing }
  return { report: boundReport({ ...report, valid: false, errors: [...report.errors, ...exampleDiagnostics(failing)] }), failing }
}

/**
 * Validate one document as POST /validate would (its examples run when it is valid) and print its
 * report as `validate` does; whether it is valid.
 */
async function printReport(given: Given, mapper: Mapper, run: RunOptions, strict: boolean, io: Io): Promise<boolean> {
  if (!parsed(given)) {
    io.out(`${given.file}: invalid\n  error ${given.problem}\n`)
    return false
  }
  const { report, failing } = await validateWithExamples(mapper, given.document, run, strict)
  const describe = describer(given.file)
  io.out(`${given.file}: ${report.valid ? 'valid' : 'invalid'}${report.warnings.length > 0 ? ` (${plural(report.warnings.length, 'warning')})` : ''}\n`)
  for (const entry of report.errors) {
    io.out(`${describe(entry, 'error')}\n`)
    // The line names an example's first difference; the others follow, one a line, as in `test`.
    const example = entry.rule === 'EXAMPLE-1' ? failing.find((result) => result.pointer === entry.pointer) : undefined
    if (example !== undefined && example.differences.length > 1) {
      for (const difference of example.differences) io.out(`      ${describeDifference(difference)}\n`)
      if (example.differenceCount > example.differences.length) io.out(`      … ${plural(example.differenceCount - example.differences.length, 'more difference')}\n`)
    }
  }
  for (const entry of report.warnings) io.out(`${describe(entry, 'warning')}\n`)
  if (report.truncated === true) io.out(`  … ${plural(report.omitted ?? 0, 'more diagnostic')} not listed (the report is bounded)\n`)
  return report.valid
}

/** What a `stdout` keyword prints goes to stderr: stdout carries the reports. */
const stdoutToErr = (io: Io): RunOptions => ({ stdout: (text: string): void => io.err(`${text}\n`) })

/** `validate <file|dir>...` → exit code. */
async function validateCommand(args: string[], io: Io): Promise<number> {
  const given = await givenDocuments('validate', args, io)
  if (given === undefined) return 0
  const { documents, mapper, strict } = given
  let invalid = 0
  for (const document of documents) if (!(await printReport(document, mapper, stdoutToErr(io), strict, io))) invalid++
  io.out(`${plural(documents.length, 'document')}, ${invalid} invalid\n`)
  return invalid === 0 ? 0 : 1
}

/** How long one PUT of `publish` may take. */
const PUBLISH_TIMEOUT_MS = 30_000

/** The id a document is published under: its `$id`, or a compound document's entry's (its last member's). */
function publishedId(document: unknown, file: string, given: string | undefined): string {
  const members = membersOf(document)
  const id = idOf(members === undefined ? document : entryOf(members))
  if (id !== undefined) {
    if (given !== undefined && given !== id) throw new UsageError(`${file}: its $id is "${id}", not "${given}" (--id)`)
    return id
  }
  if (given !== undefined && members === undefined) return given
  throw new UsageError(`${file}: no $id to publish it under (give it one, or --id with one file)`)
}

/** `publish <file|dir>... --url <service>` → exit code. */
async function publishCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand('publish', {
    args,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      url: { type: 'string' },
      token: { type: 'string' },
      id: { type: 'string' },
      'if-match': { type: 'string' },
      'create-only': { type: 'boolean' },
      strict: { type: 'boolean' },
      include: { type: 'string', multiple: true },
      exclude: { type: 'string', multiple: true },
    },
  })
  if (values.help) {
    io.out(USAGE.publish)
    return 0
  }
  const base = values.url ?? io.env.MAPPER_URL
  if (base === undefined || base === '') throw new UsageError('publish needs --url <the service\'s base URL> (or MAPPER_URL)')
  let service: URL
  try {
    service = new URL(base.endsWith('/') ? base : `${base}/`)
  } catch {
    throw new UsageError(`--url ${quoted(base)} is not a URL`)
  }
  if (service.protocol !== 'http:' && service.protocol !== 'https:') throw new UsageError(`--url ${quoted(base)}: http or https only`)
  if (positionals.length === 0) throw new UsageError('publish needs at least one file or directory')
  const version = values['if-match']
  if (version !== undefined && !/^[1-9][0-9]*$/.test(version)) throw new UsageError(`--if-match ${quoted(version)}: a version number`)
  if (version !== undefined && values['create-only'] === true) throw new UsageError('--if-match and --create-only cannot both be given')
  const documents = await readDocuments(positionals, io, fileFilter(values.include, values.exclude))
  if ((version !== undefined || values.id !== undefined) && documents.length !== 1) throw new UsageError(`${version !== undefined ? '--if-match' : '--id'} names one version of one mapping: give one file`)
  // Checked here first, as `validate` checks them: nothing is sent unless every document is valid.
  const mapper = await engineWith(documents, io.env)
  let invalid = 0
  for (const document of documents) if (!(await printReport(document, mapper, stdoutToErr(io), values.strict === true, io))) invalid++
  if (invalid > 0) {
    io.err(`mapper-service: nothing published: ${plural(invalid, 'document')} invalid\n`)
    return 1
  }
  const token = values.token ?? io.env.MAPPER_TOKEN
  let refused = 0
  for (const given of documents.filter(parsed)) {
    const id = publishedId(given.document, given.file, values.id)
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (token !== undefined && token !== '') headers.authorization = `Bearer ${token}`
    if (version !== undefined) headers['if-match'] = `"${version}"`
    if (values['create-only'] === true) headers['if-none-match'] = '*'
    let response: Response
    try {
      response = await fetch(new URL(`mappings/${encodeURIComponent(id)}`, service), { method: 'PUT', headers, body: JSON.stringify(given.document), signal: AbortSignal.timeout(PUBLISH_TIMEOUT_MS) })
    } catch (error) {
      const cause = (error as { cause?: { message?: string } }).cause?.message
      throw new UsageError(`${service.origin} could not be reached: ${cause ?? (error as Error).message}`)
    }
    const text = await response.text()
    let body: Record<string, unknown> = {}
    try {
      body = JSON.parse(text) as Record<string, unknown>
    } catch {
      // Not the service's answer (a proxy's page): the status says enough.
    }
    if (response.ok) {
      io.out(`${given.file}: published "${id}" as version ${String(body.version)} (${response.status === 201 ? 'new' : 'replaced'})\n`)
      continue
    }
    refused++
    const dependents = Array.isArray(body.dependents) && body.dependents.length > 0 ? ` (used by ${body.dependents.map((name) => JSON.stringify(name)).join(', ')})` : ''
    io.out(`${given.file}: refused: ${response.status} ${typeof body.code === 'string' ? body.code : response.statusText}: ${typeof body.message === 'string' ? body.message : text.slice(0, 200)}${dependents}\n`)
    const report = body.report as ValidationReport | undefined
    if (report !== undefined && Array.isArray(report.errors)) for (const entry of report.errors) io.out(`${describer(given.file)(entry, 'error')}\n`)
  }
  io.out(`${plural(documents.length - refused, 'document')} published, ${refused} refused\n`)
  return refused === 0 ? 0 : 1
}

/** Past this many examples in all, a running count goes to stderr as well. */
const PROGRESS_FROM = 200
const PROGRESS_EVERY = 100

/** The lines of a failing example: its place, then every difference (or what evaluation threw). */
function failureLines(result: ExampleResult): string[] {
  const name = `  ✗ ${result.pointer}${result.description === undefined ? '' : ` (${result.description})`}`
  if (result.error !== undefined) return [`${name}: evaluation threw: ${result.error}`]
  const lines = [`${name}:`]
  for (const difference of result.differences) lines.push(`      ${describeDifference(difference)}`)
  if (result.differenceCount > result.differences.length) lines.push(`      … ${plural(result.differenceCount - result.differences.length, 'more difference')}`)
  return lines
}

/** `test <file|dir>...` → exit code. */
async function testCommand(args: string[], io: Io): Promise<number> {
  const given = await givenDocuments('test', args, io)
  if (given === undefined) return 0
  const { documents, mapper, strict } = given
  const total = documents.reduce((sum, given) => sum + (parsed(given) ? countExamples(given.document) : 0), 0)
  let done = 0
  let passed = 0
  let failed = 0
  let invalid = 0
  // What a `stdout` keyword prints goes to stderr: stdout carries the results.
  const run = { stdout: (text: string): void => io.err(`${text}\n`) }
  for (const given of documents) {
    const { file } = given
    if (!parsed(given)) {
      invalid++
      io.out(`INVALID ${file}\n  error ${given.problem}\n`)
      continue
    }
    const { document } = given
    const report = mapper.validate(document, { strict })
    if (!report.valid) {
      invalid++
      const describe = describer(file)
      io.out(`INVALID ${file}\n${report.errors.map((entry) => describe(entry, 'error')).join('\n')}\n`)
      continue
    }
    const results: ExampleResult[] = []
    await mapper.examples(document, {
      run,
      onResult: (result) => {
        results.push(result)
        done++
        if (total >= PROGRESS_FROM && done % PROGRESS_EVERY === 0) io.err(`test: ${done}/${total} examples\n`)
      },
    })
    const failing = results.filter((result) => !result.pass)
    passed += results.length - failing.length
    failed += failing.length
    if (results.length === 0) io.out(`-    ${file}: no examples\n`)
    else if (failing.length === 0) io.out(`PASS ${file}: ${plural(results.length, 'example')}\n`)
    else io.out(`FAIL ${file}: ${failing.length} of ${plural(results.length, 'example')} failing\n${failing.flatMap(failureLines).join('\n')}\n`)
  }
  io.out(`${plural(documents.length, 'document')}${invalid > 0 ? ` (${invalid} invalid)` : ''}, ${plural(passed + failed, 'example')}: ${passed} passed, ${failed} failed\n`)
  return failed === 0 && invalid === 0 ? 0 : 1
}

/** `schema` → exit code. */
function schemaCommand(args: string[], io: Io): number {
  const { values } = parseCommand('schema', { args, options: { help: { type: 'boolean', short: 'h' } } })
  if (values.help) {
    io.out(USAGE.schema)
    return 0
  }
  io.out(`${JSON.stringify(mappingSchema(), null, 2)}\n`)
  return 0
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

/** A positive integer option, at most `max`. */
function integerOption(name: string, value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!/^[0-9]+$/.test(value) || n < 1 || n > max) throw new UsageError(`--${name} must be an integer from 1 to ${max}`)
  return n
}

/** `map <mapping-file-or-id> [input|-]` → exit code. */
async function mapCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand('map', {
    args,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      explain: { type: 'boolean' },
      ndjson: { type: 'boolean' },
      concurrency: { type: 'string' },
      'max-line-bytes': { type: 'string' },
    },
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
    const describe = describer(isFile ? target : undefined)
    io.err(`${target} is not a valid mapping:\n${report.errors.map((e) => describe(e, 'error')).join('\n')}\n`)
    return 2
  }
  if (values.ndjson) {
    if (values.explain) throw new UsageError('--explain and --ndjson do not go together')
    const concurrency = integerOption('concurrency', values.concurrency, 4, 64)
    const maxLineBytes = integerOption('max-line-bytes', values['max-line-bytes'], 1048576, 1073741824)
    return mapNdjson(mapper.compile(mapping), inputPath, io, { concurrency, maxLineBytes })
  }
  if (values.concurrency !== undefined || values['max-line-bytes'] !== undefined) throw new UsageError('--concurrency and --max-line-bytes go with --ndjson')
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

/** Where `map --ndjson` reads: a file (its size known) or standard input. */
async function ndjsonSource(path: string | undefined, io: Io): Promise<{ source: AsyncIterable<Buffer | string>; size: number | undefined }> {
  if (path === undefined || path === '-') {
    const source = io.stdinStream?.() ?? (async function * () {
      yield await io.stdin()
    })()
    return { source, size: undefined }
  }
  let file
  try {
    file = await open(path)
  } catch {
    throw new UsageError(`${path}: cannot be read`)
  }
  const { size } = await file.stat()
  return { source: file.createReadStream({ highWaterMark: 65536 }), size }
}

/**
 * `map --ndjson`: each line of the input evaluated by `plan` and answered by one line on standard
 * output, in input order, the same lines as POST /map/stream (service/ndjson.ts), written as fast
 * as standard output takes them and read no faster; progress on standard error when it is a
 * terminal. Exit 0 when every line answered a valid envelope, 1 otherwise.
 */
async function mapNdjson(plan: CompiledMapping, path: string | undefined, io: Io, options: { concurrency: number; maxLineBytes: number }): Promise<number> {
  const { source, size } = await ndjsonSource(path, io)
  const reader = new NdjsonReader(source, options.maxLineBytes)
  let records = 0
  let failed = 0
  const answer = (envelope: Envelope): string => {
    records++
    if (!envelope.valid) failed++
    return `${JSON.stringify(envelope)}\n`
  }
  const answering: Answering = {
    concurrency: options.concurrency,
    maxLineBytes: options.maxLineBytes,
    evaluate: (input) => {
      const envelope = plan.run(input)
      return envelope instanceof Promise ? envelope.then(answer) : answer(envelope)
    },
    fail: (line, error) => {
      records++
      failed++
      const shaped = shapeError(error, options.maxLineBytes)
      return errorLine(line, shaped.status, { code: shaped.code, message: shaped.message, ...shaped.extra })
    },
  }
  const progress = io.errIsTerminal === true ? new Progress(io.err, size, () => ({ records, bytes: reader.bytes })) : undefined
  const write = io.write ?? ((text: string): boolean => {
    io.out(text)
    return true
  })
  const drain = io.drain ?? (() => Promise.resolve())
  try {
    await answerLines(reader, answering, { write, drain })
  } finally {
    progress?.stop()
  }
  return failed === 0 ? 0 : 1
}

/** `12.3 MiB`: bytes in binary units, labelled as such (1 KiB = 1024 bytes). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes / 1024
  let unit = 0
  // 1023.96 KiB would print as 1024.0 KiB: the next unit takes it.
  while (value >= 1023.95 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(1)} ${units[unit]}`
}

/** `1m05s`: a duration to come. */
function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?'
  const whole = Math.round(seconds)
  return whole < 60 ? `${whole}s` : `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`
}

/** A one-line progress display on a terminal, redrawn four times a second and once at the end. */
class Progress {
  readonly #timer: NodeJS.Timeout
  readonly #started = performance.now()

  constructor(
    private readonly show: (text: string) => void,
    private readonly size: number | undefined,
    private readonly read: () => { records: number; bytes: number }
  ) {
    this.#timer = setInterval(() => this.#draw(false), 250)
    this.#timer.unref()
  }

  /** The line as it reads now: records, records/s, bytes and, when the size is known, a bar and an ETA. */
  line(): string {
    const { records, bytes } = this.read()
    const seconds = (performance.now() - this.#started) / 1000
    const rate = seconds > 0 ? Math.round(records / seconds) : 0
    let text = `${records.toLocaleString('en')} records  ${rate.toLocaleString('en')} records/s  ${formatBytes(bytes)}`
    if (this.size !== undefined && this.size > 0) {
      const done = Math.min(1, bytes / this.size)
      const width = 24
      const filled = Math.round(done * width)
      const eta = done > 0 ? (seconds / done) * (1 - done) : Number.POSITIVE_INFINITY
      text += ` of ${formatBytes(this.size)}  [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.floor(done * 100)}%  ETA ${formatSeconds(eta)}`
    }
    return text
  }

  #draw(last: boolean): void {
    // Carriage return and erase to the end of the line: the display stays one line.
    this.show(`\r\x1b[K${this.line()}${last ? '\n' : ''}`)
  }

  stop(): void {
    clearInterval(this.#timer)
    this.#draw(true)
  }
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
    if (command === 'test') return await testCommand(rest, io)
    if (command === 'schema') return schemaCommand(rest, io)
    if (command === 'publish') return await publishCommand(rest, io)
    // A flag before any command is compared with --help, the one flag taken there.
    const suggestion = command.startsWith('--') ? didYouMean(command.slice(2), ['help'], (name) => `--${name}`) : didYouMean(command, COMMANDS)
    throw new UsageError(`unknown command "${command}"${suggestion === '' ? ' (try --help)' : suggestion}`)
  } catch (error) {
    if (error instanceof UsageError || error instanceof SourceError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`mapper-service: ${(error as Error).message}\n`)
      return 2
    }
    throw error
  }
}
