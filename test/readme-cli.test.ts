// The README's command lines, run as written (issue 32): the "Command line" section's commands, its
// two output and filter blocks, the CLI batch of "Batches", the examples document of "Examples",
// and "Hot reload"'s shell session and embedded Reloader. Every block is read from README.md at test
// time (test/readme-support.ts), never copied here, so a README that stops telling the truth fails.
// Shell lines run in bash, in a temporary directory holding the files they name, with a
// `mapper-service` first on PATH that runs this tree's bin compiled as the shipped build is
// (test/proc-compiled.ts, as test/cli.test.ts runs the real process: half the start-up of the
// loader's), so a line meets the command a user meets. The one change to a line: `localhost:3333`
// becomes the test's own port, since test files run in parallel. The two commands the README does
// not spell out (only an output, or a document for `test`) are the test's own, run in this process.
import { spawn, type ChildProcess } from 'node:child_process'
import { accessSync, chmodSync, constants, cpSync, readFileSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { gzipSync } from 'node:zlib'
// The named export: under NodeNext the default one is the CommonJS module object.
import { Ajv2020 } from 'ajv/dist/2020.js'
import t, { type Test } from 'tap'
import { hostProject } from './package-support.js'
import { compiledEntry } from './proc-compiled.js'
import { fencedBlocks, readmeSection, type FencedBlock } from './readme-support.js'
import { exchange, freePort, ROOT, runCli, spawnEntryPoint, tempTree, untracked, waitForHealth, waitUntil, type EntryPoint, type Exit } from './startup-support.js'

t.setTimeout(180000)

const ENTRY = await compiledEntry()
/** The bundled mappings' ids (mappings/), which the README's outputs count. */
const BUNDLED = ['citation', 'echo', 'greet']

/** The one block of `blocks` whose text holds `marker`: a block the README lost or doubled fails here. */
function blockWith(blocks: FencedBlock[], marker: string): string {
  const found = blocks.filter((block) => block.code.includes(marker))
  if (found.length !== 1) throw new Error(`README.md: expected one block holding "${marker}", found ${found.length}`)
  return found[0]!.code
}

const lines = (code: string): string[] => code.split('\n').filter((line) => line.trim() !== '')

/** Whether `name` is an executable on this process's PATH. */
function onPath(name: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/**
 * Whether the commands a block runs besides mapper-service are here (`tools`: command → its Debian
 * package; .ci/run installs them). Without one the test is skipped with the reason, or fails with
 * it under MAPPER_REQUIRE_SYSTEM_SERVICES=1, where it must run (as test/ops-rate-limit-redis.test.ts).
 */
function toolsHere(t: Test, tools: Record<string, string>): boolean {
  const absent = Object.entries(tools).filter(([command]) => !onPath(command))
  if (absent.length === 0) return true
  const reason = `needs ${absent.map(([command, pkg]) => `${command} (Debian package ${pkg})`).join(' and ')}`
  if (process.env.MAPPER_REQUIRE_SYSTEM_SERVICES === '1') t.fail(`MAPPER_REQUIRE_SYSTEM_SERVICES=1 and this block ${reason}`)
  else t.plan(0, `skipped: ${reason}`)
  return false
}

const quote = (word: string): string => `'${word.replace(/'/g, "'\\''")}'`

/** A tree with `mapper-service` in its bin/: the compiled entry point, run as the tests run it (startup-support's `untracked`). */
function cliTree(t: Test, files: Record<string, string> = {}): ReturnType<typeof tempTree> & { env: Record<string, string> } {
  const tree = tempTree(t, files)
  const [command, args] = untracked(process.execPath, [ENTRY])
  tree.write('bin/mapper-service', `#!/bin/sh\nexec ${[command, ...args].map(quote).join(' ')} "$@"\n`)
  chmodSync(tree.path('bin/mapper-service'), 0o755)
  // Only PATH and HOME, as spawnEntryPoint gives the service: no MAPPINGS, OPTIONS or tap variables.
  return { ...tree, env: { PATH: `${tree.path('bin')}${delimiter}${process.env.PATH ?? ''}`, HOME: tree.root } }
}

/** The bundled mappings, copied as the README's `mappings/` (a user's own directory). */
function copyMappings(tree: { path(relative: string): string }): void {
  cpSync(join(ROOT, 'mappings'), tree.path('mappings'), { recursive: true })
}

interface Shell extends EntryPoint {
  /** Settles when bash itself exits (`exited` waits for everything it started to close its output too). */
  readonly ended: Promise<number | null>
  /** Signal bash and every process it started (its own process group). */
  signal(signal: NodeJS.Signals): void
}

/**
 * `bash args` in `cwd` with `env`, in a process group of its own: a line's `mapper-service` (and a
 * job it puts in the background) is killed with it after `timeoutMs` and at teardown.
 */
function bash(t: Test, args: string[], cwd: string, env: Record<string, string>, stdin: 'pipe' | 'ignore' = 'ignore', timeoutMs = 60000): Shell {
  const child: ChildProcess = spawn('bash', args, { cwd, env, stdio: [stdin, 'pipe', 'pipe'], detached: true })
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  let open = true
  const signal = (name: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, name)
    } catch {
      // The group is gone already.
    }
  }
  let killed = false
  const timer = setTimeout(() => {
    killed = true
    signal('SIGKILL')
  }, timeoutMs)
  const ended = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const exited = new Promise<Exit>((resolve) => {
    child.once('close', (code, signalled) => {
      open = false
      clearTimeout(timer)
      resolve({ code, signal: signalled, stdout, stderr, killed })
    })
  })
  t.teardown(() => {
    clearTimeout(timer)
    if (open) signal('SIGKILL')
    return exited
  })
  return { child, stdout: () => stdout, stderr: () => stderr, exited, ended, signal }
}

/** One line (or a whole block, `bash -e`) run to its end. */
const run = (t: Test, script: string, tree: { root: string; env: Record<string, string> }, options: string[] = []): Promise<Exit> =>
  bash(t, [...options, '-c', script], tree.root, tree.env).exited

const ndjson = (text: string): unknown[] => text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown)

/** A bibliographic record as the bundled `citation` mapping reads it, and what it makes of it. */
const record = (n: number): object => ({ title: `Record ${n}`, ids: [{ idType: 'doi', value: `10.1000/${n}` }], issued: { year: String(1990 + n) }, contributors: [{ surname: 'Lovelace', forename: 'Ada' }] })
const citation = (n: number): object => ({
  citation: { title: `Record ${n}`, doi: `10.1000/${n}`, year: 1990 + n, authors: [{ family: 'Lovelace', given: 'Ada' }], source: 'import' },
  valid: true,
  errors: [],
})
const RECORDS = [1, 2, 3].map((n) => JSON.stringify(record(n))).join('\n') + '\n'

/**
 * `mapper-service args` in this process, run in `tree` (the command prints the paths as given, so it
 * runs where they are relative to): the same runCommand, output and exit code as the binary
 * (startup-support's runCli), for the tests whose command line is the test's own, not the README's.
 */
async function inTree(tree: { root: string }, args: string[]): Promise<Exit> {
  const before = process.cwd()
  process.chdir(tree.root)
  try {
    const ran = await runCli(args)
    return { ...ran, signal: null, killed: false }
  } finally {
    process.chdir(before)
  }
}

// What the README shows of a command it does not spell out (a diagnostic's output, a document that
// `test` passes): the command line is the test's own, so it runs in this process, through what the
// binary runs (the process adds its stdout and exit code, which the README's lines below and
// test/cli.test.ts's real process meet: exit 1 included). Two start-ups of the command saved, a
// second and a half of CPU. Before the tests below and one at a time: each changes the working
// directory while it runs.
t.test('Command line and Examples: what the README shows of a command, run in this process', async (t) => {
  t.test('Command line: validate places each diagnostic in its file, the output shown', async (t) => {
    const shown = blockWith(fencedBlocks(readmeSection('Command line'), ''), 'places.yaml: invalid')
    // The document the prose describes (the README shows only the output): its sixth line names a
    // transformer no surface registers, the value at column 16.
    const tree = tempTree(t, { 'places.yaml': '$id: places\nmapping:\n  /title: /book/title\n  /slug:\n    source: /book/title\n    transform: slugify\n' })
    const ran = await inTree(tree, ['validate', 'places.yaml'])
    t.equal(ran.code, 1, 'an invalid document exits 1')
    const pattern = new RegExp(`^${shown.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('[^\\n]*')}$`)
    t.match(ran.stdout, pattern, 'the output, as the README shows it')
  })

  t.test('Examples: the document shown passes mapper-service test', async (t) => {
    const document = blockWith(fencedBlocks(readmeSection('Examples'), 'yaml'), '$id: citation')
    t.match(document, /\nexamples:\n/, 'a document with examples')
    const tree = tempTree(t, { 'citation.yaml': document })
    const ran = await inTree(tree, ['test', 'citation.yaml'])
    t.equal(ran.code, 0, ran.stdout + ran.stderr)
    t.equal(ran.stdout, 'PASS citation.yaml: 2 examples\n1 document, 2 examples: 2 passed, 0 failed\n', 'both examples, of this document')
  })
})

// The tests three at a time: each runs its own processes in its own temporary tree on its own port,
// and spends most of its time waiting on them (a start-up, a reload, a shutdown); one after another,
// those waits added up.
t.test('the README\'s command lines, three tests at a time', { jobs: 3 }, async (t) => {
  t.test('Batches: the CLI maps a file and a decompressed standard input, one envelope per line', async (t) => {
    if (!toolsHere(t, { zcat: 'gzip' })) return
    const block = blockWith(fencedBlocks(readmeSection('Batches'), 'sh'), 'mapper-service map citation --ndjson')
    const tree = cliTree(t, { 'records.ndjson': RECORDS, 'mapping.yaml': 'mapping:\n  /title: /title\n  /year: { source: /issued/year, as: number }\n' })
    writeFileSync(tree.path('records.ndjson.gz'), gzipSync(RECORDS))
    const ran = await run(t, block, tree, ['-e'])
    t.equal(ran.code, 0, `both lines exit 0: ${ran.stderr}`)
    t.equal(ran.stdout, '', 'the envelopes go to the files')
    t.same(ndjson(readFileSync(tree.path('citations.ndjson'), 'utf8')), [1, 2, 3].map(citation), 'citations.ndjson: one envelope per record, in order')
    t.same(
      ndjson(readFileSync(tree.path('out.ndjson'), 'utf8')),
      [1, 2, 3].map((n) => ({ title: `Record ${n}`, year: 1990 + n, valid: true, errors: [] })),
      'out.ndjson: mapping.yaml over the gzipped records, one line each'
    )
  })

  t.test('Command line: each command as written', async (t) => {
    const code = blockWith(fencedBlocks(readmeSection('Command line'), 'sh'), '# serve')
    const [serve, ...commands] = lines(code)
    t.match(serve, /^mapper-service\s+#/, 'the block starts with serving: the command alone')

    const tree = cliTree(t, {
      'extra.yaml': '$id: extra\nmapping:\n  /copy: /message\n',
      'record.json': JSON.stringify(record(7)),
      'records.ndjson': RECORDS,
    })
    copyMappings(tree)

    // Per line, what it must do; a line the README gains or changes has no check and fails.
    const checks: Array<[RegExp, (t: Test, ran: Exit) => void]> = [
      [/^mapper-service validate mappings\/ extra\.yaml\s/, (t, ran) => {
        t.equal(ran.code, 0, ran.stderr)
        t.equal(ran.stdout, 'mappings/citation.yaml: valid\nmappings/echo.json: valid\nmappings/greet.yaml: valid\nextra.yaml: valid\n4 documents, 0 invalid\n', 'each document valid, the bundled ones and extra.yaml')
      }],
      [/^mapper-service test mappings\/\s/, (t, ran) => {
        t.equal(ran.code, 0, ran.stderr)
        t.equal(ran.stdout, 'PASS mappings/citation.yaml: 2 examples\nPASS mappings/echo.json: 1 example\nPASS mappings/greet.yaml: 1 example\n3 documents, 4 examples: 4 passed, 0 failed\n', 'every example of each document passes')
      }],
      [/^mapper-service map citation record\.json\s/, (t, ran) => {
        t.equal(ran.code, 0, ran.stderr)
        t.same(JSON.parse(ran.stdout), citation(7), 'the envelope')
      }],
      [/^mapper-service map --explain citation record\.json\s/, (t, ran) => {
        t.equal(ran.code, 0, ran.stderr)
        const { explain, ...envelope } = JSON.parse(ran.stdout) as { explain: { pairings: Array<{ target: string }> } }
        t.same(envelope, citation(7), 'the same envelope')
        t.same(explain.pairings.map((pairing) => pairing.target), ['/citation/title', '/citation/doi', '/citation/year', '/citation/authors', '/citation/source'], 'its trace, a pairing each')
      }],
      [/^echo '\{"message":"hi"\}' \| mapper-service map greet -$/, (t, ran) => {
        t.equal(ran.code, 0, ran.stderr)
        t.same(JSON.parse(ran.stdout), { text: 'hi', valid: true, errors: [] })
      }],
      [/^mapper-service map citation --ndjson records\.ndjson > out\.ndjson\s/, (t, ran) => {
        t.equal(ran.code, 0, ran.stderr)
        t.same(ndjson(readFileSync(tree.path('out.ndjson'), 'utf8')), [1, 2, 3].map(citation), 'one envelope per line')
      }],
      [/^mapper-service schema > mapping\.schema\.json\s/, (t, ran) => {
        t.equal(ran.code, 0, ran.stderr)
        const schema = JSON.parse(readFileSync(tree.path('mapping.schema.json'), 'utf8')) as { $schema: string }
        t.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema', 'written to the file: a JSON Schema 2020-12 document')
        const check = new Ajv2020({ strict: true, allowUnionTypes: true }).compile(schema)
        t.ok(check(JSON.parse(readFileSync(tree.path('mappings/echo.json'), 'utf8'))), 'a JSON Schema that accepts a bundled mapping')
        t.notOk(check({ mapping: 42 }), 'and refuses a mapping that is a number')
      }],
      [/^mapper-service --help\s/, (t, ran) => {
        t.equal(ran.code, 0, ran.stderr)
        t.match(ran.stdout, /^Usage: mapper-service \[command\]\n[\s\S]*validate[\s\S]*test[\s\S]*map[\s\S]*schema/, 'the usage, every command in it')
      }],
    ]
    // Serving, "the environment above": its port, and on loopback only (the address is the test's
    // choice). Started first, so its start-up overlaps the commands below rather than following them.
    const port = await freePort()
    const server = bash(t, ['-c', serve], tree.root, { ...tree.env, PORT: String(port), OPTIONS: JSON.stringify({ host: '127.0.0.1' }) })

    // Two at a time (two lanes, each taking every other line in the README's order), checked in
    // that order: more at once on a busy two-core machine could take longer than their bound, and
    // none writes what another reads (each its own output file, or none).
    const runs = commands.map(() => {
      let settle!: (exit: Promise<Exit>) => void
      const exit = new Promise<Exit>((resolve) => (settle = resolve))
      return { exit, settle }
    })
    for (const lane of [0, 1]) {
      void (async () => {
        for (let i = lane; i < commands.length; i += 2) {
          const exit = run(t, commands[i]!, tree)
          runs[i]!.settle(exit)
          await exit
        }
      })()
    }
    for (const [i, line] of commands.entries()) {
      const matching = checks.filter(([pattern]) => pattern.test(line))
      t.equal(matching.length, 1, `a check for: ${line}`)
      const ran = await runs[i]!.exit
      await t.test(line, async (t) => matching[0]?.[1](t, ran))
    }
    t.equal(commands.length, checks.length, 'every check met its line')

    await waitForHealth(server, port)
    t.same(Object.keys(JSON.parse((await exchange(port, 'GET', '/mappings')).body) as object).sort(), BUNDLED, 'the bundled mappings served')
    server.signal('SIGTERM')
    const exit = await server.exited
    t.equal(exit.code, 0, `SIGTERM ends it, exit 0: ${exit.stderr}`)
    t.match(exit.stdout, /"signal":"SIGTERM","msg":"shutting down"/, 'logged as it stopped')
  })

  t.test('Command line: --include and --exclude narrow a directory as the comments say', async (t) => {
    const [validate, test, ...rest] = lines(blockWith(fencedBlocks(readmeSection('Command line'), ''), '--include'))
    t.same(rest, [], 'two commands')
    const tree = cliTree(t, {
      // What --exclude 'drafts/**' is for: a document mid-edit, invalid (the transformer of the
      // places.yaml test above), which would be reported and fail the run.
      'mappings/drafts/wip.yaml': '$id: wip\nmapping:\n  /slug: { source: /title, transform: slugify }\n',
    })
    copyMappings(tree)

    const validated = await run(t, validate!, tree)
    t.equal(validated.code, 0, `the drafts left out, the rest valid under --strict: ${validated.stdout}${validated.stderr}`)
    t.equal(validated.stdout, 'mappings/citation.yaml: valid\nmappings/echo.json: valid\nmappings/greet.yaml: valid\n3 documents, 0 invalid\n', 'the three bundled documents, nothing under drafts/')

    t.match(test, /# citation\.yaml and greet\.yaml$/, 'the comment names the files it runs')
    const tested = await run(t, test!, tree)
    t.equal(tested.code, 0, tested.stderr)
    t.equal(tested.stdout, 'PASS mappings/citation.yaml: 2 examples\nPASS mappings/greet.yaml: 1 example\n2 documents, 3 examples: 3 passed, 0 failed\n', 'citation.yaml and greet.yaml, and nothing else')
  })

  t.test('Hot reload: the shell session, typed line by line', async (t) => {
    if (!toolsHere(t, { curl: 'curl', jq: 'jq' })) return
    const [start, reload, list, ...rest] = lines(blockWith(fencedBlocks(readmeSection('Hot reload'), 'sh'), 'kill -HUP'))
    t.same(rest, [], 'three lines')
    t.match(list, 'localhost:3333', 'the default port, which this test replaces by its own')

    const tree = cliTree(t, { 'orders.json': JSON.stringify({ $id: 'orders', mapping: { '/total': { source: '/amount', as: 'number' } } }) })
    copyMappings(tree)
    const port = await freePort()
    // One shell, its script on standard input, as a user types it: each line once the one before has
    // done what it is there for. `%1` is that shell's job; PORT is the test's, in the environment. The
    // service listens where the line has it listen (OPTIONS sets no host: every address, the
    // default); the test reaches it on loopback only.
    const shell = bash(t, ['-s'], tree.root, { ...tree.env, PORT: String(port) }, 'pipe')
    const type = (line: string): void => {
      shell.child.stdin!.write(`${line}\n`)
    }
    const stop = (): string | undefined => (shell.child.exitCode !== null ? `the shell exited: ${shell.stderr()}` : undefined)

    type(start!)
    await waitForHealth(shell, port)
    const before = JSON.parse((await exchange(port, 'GET', '/mappings')).body) as object
    t.same(Object.keys(before).sort(), BUNDLED, 'serving ./mappings')

    type(reload!)
    // Either outcome logs a line: a refused set fails the assertion below rather than a wait.
    await waitUntil('the reload', () => shell.stdout().includes('"msg":"mappings reload'), 60000, stop)
    t.match(shell.stdout(), '"mappings":4,"msg":"mappings reloaded: 4 mappings"', 'SIGHUP reloaded the directory, orders.json in it')

    type(list!.replaceAll('localhost:3333', `localhost:${port}`))
    shell.child.stdin!.end()
    t.equal(await shell.ended, 0, `the session ends well: ${shell.stderr()}`)
    // bash has exited, but the background job holds the pipe open, so what jq wrote just before may
    // still be on its way to this process (a CI run once read nothing of it).
    const printed = (): string => shell.stdout().split('\n').filter((line) => !line.startsWith('{')).join('\n')
    await waitUntil("jq's output", () => printed().trimEnd().endsWith(']'), 10000)
    t.same(JSON.parse(printed()), [...BUNDLED, 'orders'], 'jq keys: the ids served, orders among them')

    // The background job outlives the shell, as it would a user's: stopped as a user would stop it.
    shell.signal('SIGTERM')
    const exit = await shell.exited
    t.match(exit.stdout, /"signal":"SIGTERM","msg":"shutting down"/, 'the service stopped on SIGTERM')
  })

  t.test('Hot reload: the embedded Reloader, in a host app, reloads on SIGUSR2', async (t) => {
    const snippet = blockWith(fencedBlocks(readmeSection('Hot reload'), 'ts'), 'new Reloader(')
    const printedAs = /SIGUSR2.*\/\/\s*(\{ ok: true, mappings: (\d+) \})\s*$/m.exec(snippet)
    t.ok(printedAs, 'the snippet says what SIGUSR2 prints')
    // The host around it: `app` before, a listening server after (the port the test's).
    const host = `import Fastify from 'fastify'\nconst app = Fastify({ logger: true })\n${snippet}await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })\n`
    const entry = await hostProject(tempTree(t), host)

    const port = await freePort()
    // Run from this tree's root, whose ./mappings (the bundled ones) is what the snippet reads.
    const app = spawnEntryPoint(t, { PORT: String(port) }, 120000, entry)
    await waitForHealth(app, port, '/mapper/health')
    const ids = async (): Promise<string[]> => Object.keys(JSON.parse((await exchange(port, 'GET', '/mapper/mappings')).body) as object).sort()
    t.same(await ids(), ['greet'], "the snippet's last line reloaded a set of its own")

    app.child.kill('SIGUSR2')
    const outcome = (): string | undefined => app.stdout().split('\n').find((line) => line.startsWith('{ ok'))
    await waitUntil('the SIGUSR2 reload', () => outcome() !== undefined, 60000)
    t.equal(outcome(), printedAs?.[1], 'printed as the comment says')
    t.equal(Number(printedAs?.[2]), BUNDLED.length, "the count of ./mappings' documents")
    t.same(await ids(), BUNDLED, 'served after the reload, under /mapper')

    app.child.kill('SIGTERM')
    const exit = await app.exited
    const errors = exit.stdout
      .split('\n')
      .filter((line) => line.startsWith('{"'))
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((line) => line.level >= 50)
    t.same(errors, [], 'nothing logged at error level')
  })
})
