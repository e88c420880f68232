// Every fenced block of README.md is run, or reproduced, by a test, as written: a README that lies
// fails `npm test`. The first test holds the table of where each block is run (PLACES): a block
// that no entry claims, or an entry whose block is gone, fails it, so a new snippet needs a test
// before it lands. This file runs the blocks that need a service answering on a port or the
// options resolver; the others are run by the file PLACES names, which reads them from README.md
// at test time as this file does (test/readme-support.ts).
//
// Shell lines run through bash as written, with one substitution: the README's port 3333 becomes
// the test server's own (tests run in parallel; a developer's `npm start` may hold 3333). An output
// shown in the README is compared with the real one, `…` standing for any text (a request id).
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import stripJsonComments from 'strip-json-comments'
import t, { type Test } from 'tap'
import { parse as parseYaml } from 'yaml'
import { Mapper, validate } from '../engine/index.js'
import { resolveConfig } from '../config/resolve.js'
import { OptionsSchema } from '../config/options-schema.js'
import { resolveAuthOptions } from '../http/plugins/auth/options.js'
import { resolveRateLimitOptions } from '../http/plugins/rate-limit/options.js'
import { buildServer } from '../server.js'
import { bundledMappingsPath, loadMappings } from '../sources/mappings.js'
import { packageLayout } from './package-support.js'
import { placedBlocks, type PlacedBlock } from './readme-support.js'
import { exchange, freePort, ROOT, runCli, tempTree, untracked, waitUntil } from './startup-support.js'

t.setTimeout(180000)

/** Where a block is run: its section, the start of its first line, and the test file that runs it. */
interface Place {
  readonly section: string
  readonly first: string
  readonly by: string
}

const HERE = 'readme-snippets.test.ts'

/** Every block of the README, by section and first line, and the file whose tests run it. */
const PLACES: readonly Place[] = [
  // Its `npm start` is run by startup-npm.test.ts too.
  { section: 'Quick start', first: 'npm ci', by: HERE },
  { section: 'Quick start', first: 'npm run dev', by: 'startup-npm.test.ts' },
  { section: 'Quick start', first: 'npm test', by: HERE },
  { section: 'Installing as a package', first: 'npm install mapper-service', by: HERE },
  { section: 'Installing as a package', first: '$ curl -s localhost:3333/health', by: HERE },
  { section: 'The language in one screen', first: '$id: citation', by: HERE },
  { section: 'Generated clients', first: 'npx -p typescript', by: 'openapi-client.test.ts' },
  { section: 'Generated clients', first: "import { client } from './mapper/client.gen.js'", by: 'openapi-client.test.ts' },
  { section: 'Generated clients', first: "import createClient from 'openapi-fetch'", by: 'openapi-client.test.ts' },
  { section: 'Generated clients', first: "import type { components, operations } from './mapper.js'", by: 'openapi-client.test.ts' },
  { section: 'The options object', first: '{', by: HERE },
  { section: 'Limits and budgets', first: '{"code":"BudgetExceeded"', by: HERE },
  { section: 'Limits and budgets', first: '$ curl -s -X POST localhost:3333/map --data-binary @bomb.json', by: HERE },
  { section: 'Deployment postures, ready to paste', first: '# Registered mappings only', by: HERE },
  { section: 'Batches', first: "curl -sN -X POST 'localhost:3333/map/stream?mapping=greet'", by: HERE },
  { section: 'Batches', first: 'mapper-service map citation --ndjson records.ndjson', by: 'readme-cli.test.ts' },
  { section: 'Metrics', first: "OPTIONS='{\"metrics\":{\"path\":\"/internal/metrics\"}}' npx mapper-service", by: HERE },
  { section: 'Metrics', first: '# Prometheus', by: HERE },
  { section: 'Tracing', first: 'OTEL_EXPORTER_OTLP_ENDPOINT=', by: HERE },
  { section: 'Tracing', first: 'request ', by: HERE },
  { section: 'Hot reload', first: '{"level":30', by: HERE },
  { section: 'Hot reload', first: 'MAPPINGS=./mappings', by: 'readme-cli.test.ts' },
  { section: 'Hot reload', first: "import mapperService, { loadMappings, Reloader } from 'mapper-service'", by: 'readme-cli.test.ts' },
  { section: 'Managed mappings', first: '$ curl -s -X PUT localhost:3333/mappings/orders', by: HERE },
  { section: 'Rate limiting', first: 'OPTIONS=\'{"auth":{"jwksUri"', by: HERE },
  { section: 'Rate limiting', first: 'HTTP/1.1 429 Too Many Requests', by: HERE },
  { section: 'Deploying', first: 'docker build', by: HERE },
  { section: 'Deploying', first: 'export POSTGRES_PASSWORD', by: 'deploy.test.ts' },
  { section: 'Deploying', first: '$ curl -s -X PUT localhost:3334/', by: 'deploy.test.ts' },
  { section: 'Helm', first: 'helm install mapper deploy/helm -f my-values.yaml', by: 'deploy-helm.test.ts' },
  { section: 'Helm', first: '# store-values.yaml', by: 'deploy-helm.test.ts' },
  { section: 'Helm', first: '# my-values.yaml', by: 'deploy-helm.test.ts' },
  { section: 'Embedding as a Fastify plugin', first: "import Fastify from 'fastify'", by: 'readme-embedding.test.ts' },
  { section: 'JSON Schema (editor support)', first: '{', by: HERE },
  { section: 'Examples', first: '$id: citation', by: 'readme-cli.test.ts' },
  { section: 'Examples', first: 'FAIL maps/wrong.json', by: HERE },
  { section: 'Explain', first: 'curl -s localhost:3333/map', by: HERE },
  { section: 'Explain', first: '{', by: HERE },
  { section: 'Command line', first: 'mapper-service  ', by: 'readme-cli.test.ts' },
  { section: 'Command line', first: 'places.yaml: invalid', by: 'readme-cli.test.ts' },
  { section: 'Command line', first: 'mapper-service validate --strict', by: 'readme-cli.test.ts' },
  { section: 'Tests and benchmarks', first: 'mapper-service engine benchmark', by: HERE },
  { section: 'Tests and benchmarks', first: 'scenario ', by: HERE },
]

/** README.md's blocks, read and split once for the file: every `blockOf` did it again, two dozen times. */
let readmeBlocks: PlacedBlock[] | undefined
const blocksNow = (): PlacedBlock[] => (readmeBlocks ??= placedBlocks())

const claims = (place: Place, block: PlacedBlock): boolean => block.section === place.section && block.first.startsWith(place.first.trim()) && (place.first.endsWith(' ') ? block.first.length > place.first.length && block.code.split('\n')[0]!.trimStart().startsWith(place.first) : true)

t.test('every README block is run by a test, and every entry of the table names a block', async (t) => {
  const blocks = blocksNow()
  for (const block of blocks) {
    const owners = PLACES.filter((place) => claims(place, block))
    t.ok(owners.length > 0, `README.md line ${block.line} (${block.section}, ${block.lang || 'no language'}: ${block.first.slice(0, 60)}) is run by a test listed in PLACES`)
    const files = new Set(owners.map((place) => place.by))
    t.ok(files.size <= 1, `line ${block.line} is claimed by one file`)
  }
  for (const place of PLACES) {
    t.ok(blocks.some((block) => claims(place, block)), `PLACES "${place.section}" / "${place.first}" names a block README.md has`)
    const file = join(ROOT, 'test', place.by)
    t.ok(existsSync(file), `${place.by} exists`)
    // The file that runs a section's blocks reads them from the README by that section's title.
    if (existsSync(file)) t.ok(readFileSync(file, 'utf8').includes(JSON.stringify(place.section).slice(1, -1)), `${place.by} reads README section "${place.section}"`)
  }
})

// ---------------------------------------------------------------------------------------------
// Helpers: the blocks of a section, shell lines run as written, outputs compared.

/** The blocks of README section `section` (as listed under that heading only) whose first line starts with `first`. */
function blockOf(section: string, first: string): PlacedBlock {
  const found = blocksNow().filter((block) => block.section === section && block.first.startsWith(first))
  if (found.length !== 1) throw new Error(`README section "${section}" has ${found.length} blocks starting ${JSON.stringify(first)}`)
  return found[0]!
}

/** `expected` with `…` standing for any text, matched against the whole of `actual`. */
function wildcard(expected: string): RegExp {
  return new RegExp(`^${expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^\\n]*?')}$`)
}

/** The README's port, 3333, as the test's own. */
const onPort = (line: string, port: number): string => line.replaceAll('localhost:3333', `localhost:${port}`)

/**
 * Run a shell text through bash in `cwd`, bounded in time; resolves with its output and exit code.
 * Its standard input is /dev/null, not a pipe: node's pipes are socket pairs, and bash (as Debian
 * builds it) whose standard input is a socket takes itself for a remote shell and reads ~/.bashrc,
 * which a developer's machine may fill with anything (here pyenv's set-up, a fifth of a second of
 * CPU a line, and shims put first on PATH). No line reads bash's own input.
 */
function bash(script: string, cwd: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, timeout: 30000, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? cwd, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.once('error', (error) => resolve({ code: -1, stdout, stderr: `${stderr}${String(error)}` }))
    // A line killed at its bound has no exit code: -1, as a failure to start.
    child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })
}

/** A shell session: `$ command` lines, each followed by the output it prints. */
function session(code: string): Array<{ command: string; output: string }> {
  const steps: Array<{ command: string; output: string[] }> = []
  for (const line of code.replace(/\n$/, '').split('\n')) {
    if (line.startsWith('$ ')) steps.push({ command: line.slice(2), output: [] })
    else if (steps.length > 0) steps.at(-1)!.output.push(line)
    else throw new Error(`a session starts with "$ ": ${line}`)
  }
  return steps.map((step) => ({ command: step.command, output: step.output.join('\n') }))
}

const have = async (command: string): Promise<boolean> => (await bash(`command -v ${command}`, ROOT)).code === 0

/** The service the sessions talk to: the bundled mappings, explicit documents and explain on (isolation off: the answers are the same, the threads cost seconds). */
async function listening(t: Test, options: Record<string, unknown> = {}): Promise<{ app: FastifyInstance; port: number }> {
  const app = await buildServer({ mappings: await loadMappings(bundledMappingsPath()), options: { logging: { level: 'silent' }, host: '127.0.0.1', isolation: false, map: { explicit: true, explain: true }, ...options } })
  t.teardown(() => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  return { app, port: (app.server.address() as { port: number }).port }
}

/** A consumer's project with this package installed (compiled, as npm would lay it out) and its bin linked, for `npx mapper-service`. */
async function consumerProject(t: Test): Promise<string> {
  const project = tempTree(t)
  const installed = await packageLayout(project.path('node_modules/mapper-service'))
  mkdirSync(project.path('node_modules/.bin'), { recursive: true })
  const bin = join(installed, 'dist', 'bin', 'mapper-service.js')
  chmodSync(bin, 0o755)
  symlinkSync(bin, project.path('node_modules/.bin/mapper-service'))
  writeFileSync(project.path('package.json'), JSON.stringify({ name: 'consumer', private: true, dependencies: { 'mapper-service': '*' } }))
  return project.root
}

// ---------------------------------------------------------------------------------------------

t.test('Quick start: the commands name the scripts package.json has', async (t) => {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
  for (const block of blocksNow().filter((block) => block.section === 'Quick start')) {
    for (const line of block.code.split('\n')) {
      const command = line.replace(/#.*$/, '').trim()
      if (command === '') continue
      const run = /^npm (?:run )?([\w:-]+)$/.exec(command)
      t.ok(run, `"${command}" is an npm command`)
      if (run === null || run[1] === 'ci') continue
      // `npm start`, `npm test` and `npm run x` run package.json's scripts; startup-npm.test.ts runs
      // `npm start` and `npm run dev` themselves, CI runs test, lint and test:browser.
      t.ok(Object.hasOwn(scripts, run[1]!), `package.json has the script ${run[1]}`)
    }
  }
  // The dev preset's comment says what the script does: the same OPTIONS.
  const dev = blockOf('Quick start', 'npm run dev').code
  const said = /OPTIONS='([^']*)'/.exec(dev)?.[1]
  t.ok(said !== undefined && scripts.dev!.includes(said), `the dev script sets the options the README shows: ${scripts.dev}`)
})

t.test('Installing as a package: every optional package named is an optional peer dependency', async (t) => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; peerDependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional?: boolean }> }
  for (const line of blockOf('Installing as a package', 'npm install mapper-service').code.split('\n')) {
    const packages = /^npm install ((?:[@\w./-]+ ?)+?)\s*(?:#|$)/.exec(line.trim())?.[1]?.trim().split(/\s+/)
    if (packages === undefined) continue
    for (const name of packages) {
      if (name === manifest.name) continue
      t.ok(manifest.peerDependencies[name] !== undefined && manifest.peerDependenciesMeta[name]?.optional === true, `${name} is an optional peer dependency`)
    }
  }
})

/** The shell tests' one tool beyond bash: where it is missing they are skipped, saying so. */
const curl = { skip: (await have('curl')) ? false : 'curl is not installed (Debian: apt-get install curl)' }
// CI (.ci/run) installs it and sets MAPPER_REQUIRE_SYSTEM_SERVICES=1: there a missing curl fails.
if (curl.skip !== false && process.env.MAPPER_REQUIRE_SYSTEM_SERVICES === '1') t.fail(`MAPPER_REQUIRE_SYSTEM_SERVICES=1 and ${curl.skip}`)

// The sessions side by side: each waits on bash and curl processes far more than it works, and
// none changes what another reads (the service is read only; bomb.json is the one file written, read
// by its own test only).
t.test('A first session, and the other sessions against a listening service', { ...curl, jobs: 6 }, async (t) => {
  const { port } = await listening(t)
  const work = tempTree(t)

  t.test('Quick start: a first session', async (t) => {
    for (const step of session(blockOf('Installing as a package', '$ curl').code)) {
      const ran = await bash(onPort(step.command, port), work.root)
      t.equal(ran.code, 0, `${step.command}: ${ran.stderr}`)
      t.match(ran.stdout, wildcard(step.output), step.command)
    }
  })

  t.test('Limits and budgets: the 1.8 KB document whose 27 members each name the next one twice', async (t) => {
    // The document the prose describes: 27 members each naming the next twice, and the leaf they
    // end in. A compound document's entry is its last member: the chain is written from its leaf up.
    const id = (i: number): string => `mp${i}`
    const members: Record<string, unknown> = {}
    for (let i = 27; i >= 0; i--) members[id(i)] = { $id: id(i), mapping: i === 27 ? { '/value': '/value' } : { '/left': id(i + 1), '/right': id(i + 1) } }
    const bomb = JSON.stringify({ mapping: { mappings: members } })
    t.ok(bomb.length > 1750 && bomb.length < 1880, `about 1.8 KB: ${bomb.length} bytes`)
    work.write('bomb.json', bomb)
    const [step] = session(blockOf('Limits and budgets', '$ curl').code)
    const ran = await bash(onPort(step!.command, port), work.root)
    t.match(ran.stdout, wildcard(step!.output), step!.command)
  })

  t.test('Limits and budgets: the BudgetExceeded answer', async (t) => {
    // A document whose static expansion is small (each `each` counts once) and whose input makes
    // the evaluation enter more than the explicit fanOut budget of 100,000 levels at run time: two
    // rows of 50,001 cells, just past it (the body, a megabyte parsed by the service, is most of
    // this test's CPU, so no larger than it needs to be).
    const shown = blockOf('Limits and budgets', '{"code":"BudgetExceeded"').code.trim()
    const document = { mapping: { '/l4': { source: '/rows', each: { '/l3': { source: '/cells', each: { '/v': '/v' } } } } } }
    const input = { rows: Array.from({ length: 2 }, () => ({ cells: Array.from({ length: 50001 }, () => ({ v: 1 })) })) }
    const answer = await exchange(port, 'POST', '/map', { mapping: document, input })
    t.equal(answer.status, 422)
    t.match(answer.body, wildcard(shown), 'the answer as the README shows it')
  })

  t.test('Batches: a stream, its bad line answered in place', async (t) => {
    const code = blockOf('Batches', "curl -sN -X POST 'localhost:3333/map/stream").code
    // The command runs to its here-document's end (NDJSON); what follows is what it prints.
    const lines = code.replace(/\n$/, '').split('\n')
    const end = lines.indexOf('NDJSON')
    t.ok(end > 0, 'the here-document ends')
    const ran = await bash(onPort(lines.slice(0, end + 1).join('\n'), port), work.root)
    t.equal(ran.code, 0, ran.stderr)
    t.match(ran.stdout.replace(/\n$/, ''), wildcard(lines.slice(end + 1).join('\n')), 'the answers as the README shows them')
  })

  t.test('Explain: the request and the trace it answers', async (t) => {
    const ran = await bash(onPort(blockOf('Explain', 'curl -s localhost:3333/map').code, port), work.root)
    t.equal(ran.code, 0, ran.stderr)
    const shown = JSON.parse(stripJsonComments(blockOf('Explain', '{').code)) as unknown
    t.strictSame(JSON.parse(ran.stdout), shown, 'the answer is the one shown, member for member')
  })

  t.test('JSON Schema (editor support): the editor settings name the served schema', async (t) => {
    const settings = JSON.parse(stripJsonComments(blockOf('JSON Schema (editor support)', '{').code)) as { 'yaml.schemas': Record<string, string[]> }
    for (const url of Object.keys(settings['yaml.schemas']).filter((key) => key.startsWith('http'))) {
      const ran = await bash(`curl -s -o /dev/null -w '%{http_code} %{content_type}' ${onPort(url, port)}`, work.root)
      t.match(ran.stdout, /^200 application\/schema\+json(;|$)/, `${url} is served as a JSON Schema`)
    }
  })
})

t.test('Managed mappings: the session against a service with a directory store', curl, async (t) => {
  const { port } = await listening(t, { store: { url: `file://${tempTree(t).root}` } })
  const work = tempTree(t)
  for (const step of session(blockOf('Managed mappings', '$ curl').code)) {
    const ran = await bash(onPort(step.command, port), work.root)
    t.equal(ran.code, 0, `${step.command}: ${ran.stderr}`)
    t.match(ran.stdout, wildcard(step.output), step.command)
  }
})

t.test('The language in one screen: the document is valid and maps a record', async (t) => {
  const document = parseYaml(blockOf('The language in one screen', '$id: citation').code) as Record<string, unknown>
  const report = validate(document)
  t.same(report.errors, [], 'valid')
  const mapper = new Mapper({ mappings: [document] })
  const output = await mapper.map('citation', {
    title: 'On Mapping',
    ids: [{ idType: 'isbn', value: '1' }, { idType: 'doi', value: '10.1/x' }],
    issued: { year: '2020' },
    contributors: [{ surname: 'Lovelace', forename: 'Ada' }, { surname: 'Babbage' }],
  })
  t.same(output, { citation: { title: 'On Mapping', doi: '10.1/x', year: 2020, authors: [{ family: 'Lovelace', given: 'Ada' }, { family: 'Babbage', given: '' }], source: 'import' }, valid: true, errors: [] })
})

t.test('The options object: every option shown resolves, and every option is shown', async (t) => {
  const options = JSON.parse(stripJsonComments(blockOf('The options object', '{').code)) as Record<string, unknown>
  t.doesNotThrow(() => {
    // As start-up resolves it: resolveConfig, then the auth and rate-limit plugins what it hands them.
    const config = resolveConfig(options)
    if (config.auth !== null) resolveAuthOptions(config.auth)
    if (config.rateLimit !== false) resolveRateLimitOptions(config.rateLimit)
  }, 'the example resolves as it is')
  t.ok(options.auth !== undefined && options.rateLimit !== undefined, 'auth and rateLimit shown, so resolved by their plugins above')
  const documented = Object.keys(options)
  // Options shown only commented out (an alternative to the one shown) count as shown.
  const commented = [...blockOf('The options object', '{').code.matchAll(/^\s*\/\/\s*"(\w+)"\s*:/gm)].map((match) => match[1]!)
  for (const key of Object.keys((OptionsSchema as unknown as { properties: Record<string, unknown> }).properties)) {
    t.ok(documented.includes(key) || commented.includes(key), `option ${key} is in the example`)
  }
})

t.test('Deployment postures and the rate limit: each OPTIONS line, as the shell reads it, starts the service', async (t) => {
  const lines = [
    ...blockOf('Deployment postures, ready to paste', '# Registered mappings only').code.split('\n'),
    ...blockOf('Rate limiting', 'OPTIONS=').code.split('\n'),
  ].filter((line) => line.startsWith('OPTIONS='))
  t.ok(lines.length >= 4, 'the three postures and the rate limit')
  // The lines at once (a bash each, then a server built, made ready and closed), each passing in
  // the README's order: one after another they waited on each other's shell for nothing.
  const started = await Promise.all(
    lines.map(async (line) => {
      // The assignment alone (the rate-limit line goes on to start the command): what OPTIONS holds.
      const assignment = /^OPTIONS='[^']*'/.exec(line)![0]
      const ran = await bash(`${assignment}; printf '%s' "$OPTIONS"`, ROOT)
      const options = JSON.parse(ran.stdout) as Record<string, unknown>
      const app = await buildServer({ options: { ...options, logging: { level: 'silent' } } })
      await app.ready()
      await app.close()
      return ran.stdout
    })
  )
  for (const options of started) t.pass(`starts with ${options}`)
})

t.test('Rate limiting: the 429 answer, as shown', async (t) => {
  const line = blockOf('Rate limiting', 'OPTIONS=').code
  const { rateLimit } = JSON.parse(/^OPTIONS='([^']*)'/.exec(line)![1]!) as { rateLimit: { max: number } }
  // The line's rate limit, without its auth: issuer.example's keys cannot be fetched from a test,
  // and a request that fails authentication is not counted.
  const app = await buildServer({ options: { logging: { level: 'silent' }, rateLimit } })
  t.teardown(() => app.close())
  let answer = await app.inject({ method: 'GET', url: '/mappings' })
  for (let i = 1; i < rateLimit.max; i++) answer = await app.inject({ method: 'GET', url: '/mappings' })
  t.equal(answer.statusCode, 200, `the ${rateLimit.max}th request is served`)
  answer = await app.inject({ method: 'GET', url: '/mappings' })
  const [head, body] = blockOf('Rate limiting', 'HTTP/1.1 429').code.split('\n\n') as [string, string]
  const [status, ...headers] = head.split('\n')
  t.equal(`HTTP/1.1 ${answer.statusCode} ${answer.raw.res.statusMessage}`, status, 'the status line')
  for (const header of headers) {
    const [name, value] = header.split(': ') as [string, string]
    const actual = String(answer.headers[name])
    if (name === 'retry-after') t.ok(Number(actual) > 0 && Number(actual) <= 60, `retry-after: seconds left in the window (${actual})`)
    else if (name === 'x-request-id') t.match(actual, /^req_[0-9a-f]{16}$/, 'x-request-id: a generated id')
    else t.equal(actual, value, name)
  }
  const id = String(answer.headers['x-request-id'])
  t.equal(answer.body, body.trim().replaceAll('req_5f0c2a9e1b7d3c48', id), 'the body, its request id the answer\'s')
})

/**
 * A shell line started in the background in its own process group (npx, then node), killed with its
 * group at teardown. Without tap's process-info hooks (untracked): tap puts them in NODE_OPTIONS of
 * every process a test starts, so npx and the service it starts, node both, would each load them
 * (a second of start-up apiece), and neither is a process tap reports on.
 */
function background(t: Test, line: string, cwd: string, env: Record<string, string>): { output: () => string; exited: () => boolean } {
  const child = spawn(...untracked('bash', ['-c', line]), { cwd, detached: true, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? cwd, npm_config_update_notifier: 'false', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const closed = new Promise((resolve) => child.once('close', resolve))
  const timer = setTimeout(() => stop('SIGKILL'), 90000)
  function stop(signal: NodeJS.Signals): void {
    try {
      process.kill(-child.pid!, signal)
    } catch {}
  }
  t.teardown(async () => {
    clearTimeout(timer)
    stop('SIGTERM')
    const killer = setTimeout(() => stop('SIGKILL'), 10000)
    await closed
    clearTimeout(killer)
  })
  return { output: () => output, exited: () => child.exitCode !== null || child.signalCode !== null }
}

/** Until GET /health on `port` answers 200; fails with the output if the process ends first. */
async function healthy(started: { output: () => string; exited: () => boolean }, port: number): Promise<void> {
  await waitUntil(`GET /health on ${port}`, async () => (await exchange(port, 'GET', '/health').catch(() => undefined))?.status === 200, 60000, () => (started.exited() ? `it exited: ${started.output()}` : undefined))
}

// The two services at once, each on its own port, started by npx in the same project: a start-up
// (npx, then the service) is seconds, mostly spent waiting on the other's CPU or on a port to answer.
t.test('Metrics and Tracing: `npx mapper-service` in a project that installed it', { ...curl, jobs: 2 }, async (t) => {
  const project = await consumerProject(t)

  t.test('Metrics: the path moved, then the grep', async (t) => {
    const [serve, scrape, ...shown] = blockOf('Metrics', 'OPTIONS=').code.replace(/\n$/, '').split('\n') as [string, string, ...string[]]
    const port = await freePort()
    await healthy(background(t, serve, project, { PORT: String(port) }), port)
    // The traffic the counts shown come from: the registered echo, valid, and one explicit document
    // (off by default: refused before it is evaluated, so not counted) — the shown lines' form is what is compared.
    for (let i = 0; i < 12; i++) await exchange(port, 'POST', '/map', { mapping: 'echo', input: { i } })
    const ran = await bash(onPort(scrape, port), project)
    t.equal(ran.code, 0, ran.stderr)
    const printed = ran.stdout.trim().split('\n')
    const echo = shown.map((line) => line.replace(/^# /, '')).find((line) => line.includes('"echo"'))!
    t.ok(printed.includes(echo), `the echo line is printed as shown: ${printed.join(' | ')}`)
    for (const line of shown) t.match(line.replace(/^# /, ''), /^mapper_evaluations_total\{mapping="[^"]+",result="(valid|invalid)"\} \d+$/, `the shown line has the printed form: ${line}`)
  })

  t.test('Tracing: spans printed to stdout by the console exporter', async (t) => {
    const lines = blockOf('Tracing', 'OTEL_EXPORTER_OTLP_ENDPOINT=').code.replace(/\n$/, '').split('\n')
    // The first line exports to a collector this test cannot reach (only 127.0.0.1 may be): its
    // variables are the ones the service starts the SDK for, and the SDK reads (checked below).
    t.match(lines[0]!, /^OTEL_EXPORTER_OTLP_ENDPOINT=\S+ OTEL_SERVICE_NAME=\S+ npx mapper-service$/)
    t.match(readFileSync(join(ROOT, 'observability', 'telemetry.ts'), 'utf8'), /OTEL_EXPORTER_OTLP_ENDPOINT/, 'the service starts tracing for OTEL_EXPORTER_OTLP_ENDPOINT')
    const console = lines.find((line) => line.startsWith('OTEL_TRACES_EXPORTER=console'))!
    const port = await freePort()
    const started = background(t, console.replace(/\s+#.*$/, ''), project, { PORT: String(port) })
    await healthy(started, port)
    const answer = await exchange(port, 'POST', '/map', { mapping: 'greet', input: { message: 'hi' } })
    t.equal(answer.status, 200)
    await waitUntil('the span of the evaluation on stdout', () => started.output().includes("name: 'mapping.evaluate'"), 30000)
    // The tree shown beside it: every span and attribute it names is in what was printed.
    const tree = blockOf('Tracing', 'request ').code
    for (const name of ['mapping.evaluate', 'mapper.mapping', 'mapper.valid', 'mapper.errors']) {
      t.ok(tree.includes(name), `the tree names ${name}`)
      t.ok(started.output().includes(name), `${name} is printed`)
    }
  })
})

t.test('Hot reload: the log lines shown are the reloader\'s', async (t) => {
  const source = readFileSync(join(ROOT, 'service', 'reloader.ts'), 'utf8')
  for (const line of blockOf('Hot reload', '{"level":30').code.replace(/\n$/, '').split('\n')) {
    const message = /"msg":"([^"]*?)(?::|")/.exec(line)?.[1]
    t.ok(message !== undefined, `a log line with a message: ${line.slice(0, 60)}`)
    const fixed = message!.replace(/\d+/g, '${').split('${')[0]!
    t.ok(source.includes(fixed), `the reloader writes "${fixed}"`)
  }
})

t.test('Examples: the `test` command prints a failing example as shown', async (t) => {
  const shown = blockOf('Examples', 'FAIL maps/wrong.json').code.split('\n').map((line) => line.replace(/^ {2}/, '')).join('\n').trimEnd()
  const work = tempTree(t, {
    // The document the output is of: example 0, "a number", gets "1" for /a and nothing for /c.
    'maps/wrong.json': JSON.stringify({ $id: 'wrong', mapping: { '/a': '/a', '/c': '/c' }, examples: [{ description: 'a number', input: { a: '1' }, output: { a: 1, c: 2 } }, { input: { a: 1, c: 2 }, output: { a: 1, c: 2 } }] }),
    'maps/right.json': JSON.stringify({ $id: 'right', mapping: { '/a': '/a' }, examples: [{ input: { a: 1 }, output: { a: 1 } }] }),
  })
  // The command prints the paths as given: it runs in the folder that holds maps/ (this process's
  // working directory, for this test only; the file's tests run one at a time).
  const before = process.cwd()
  process.chdir(work.root)
  const ran = await runCli(['test', 'maps/wrong.json', 'maps/right.json']).finally(() => process.chdir(before))
  t.equal(ran.code, 1, 'exit 1 on a failing example')
  t.equal(ran.stdout.trimEnd(), shown, 'the output as the README shows it')
})

t.test('Deploying: the image tags are the package version; the compose file binds to loopback', async (t) => {
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
  const block = blockOf('Deploying', 'docker build').code
  const tags = [...block.split('\n')[0]!.matchAll(/-t mapper-service:(\S+)/g)].map((match) => match[1])
  t.same(tags, [version, version.split('.').slice(0, 2).join('.'), 'latest'], 'X.Y.Z, X.Y, latest of package.json\'s version')
  t.match(block, /-p 127\.0\.0\.1:3333:3333/, 'docker run publishes on loopback')
  t.ok(existsSync(join(ROOT, 'Dockerfile')) && existsSync(join(ROOT, 'docker-compose.yml')), 'the Dockerfile and the compose file it builds from')
  const compose = parseYaml(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { ports?: string[]; build?: unknown }> }
  const service = Object.values(compose.services)[0]!
  t.ok(service.build !== undefined, '`docker compose up --build` has something to build')
  // Compose's `${NAME:-default}`: the address when the variable is unset.
  const published = (service.ports ?? []).map((port) => String(port).replace(/\$\{\w+:-([^}]*)\}/g, '$1'))
  t.ok(published.length > 0 && published.every((port) => port.startsWith('127.0.0.1:')), `compose publishes on loopback only by default: ${service.ports}`)
})

t.test('Metrics: the Prometheus job scrapes the default path and port', async (t) => {
  const config = parseYaml(blockOf('Metrics', '# Prometheus').code) as { scrape_configs: Array<{ metrics_path: string; static_configs: Array<{ targets: string[] }> }> }
  const job = config.scrape_configs[0]!
  t.equal(job.metrics_path, resolveConfig({}).metrics && (resolveConfig({}).metrics as { path: string }).path, 'metrics_path is the default path')
  t.ok(job.static_configs[0]!.targets.every((target) => target.endsWith(':3333')), 'the default port')
})

t.test('Tests and benchmarks: the outputs shown have the columns the benchmarks print', async (t) => {
  const engine = readFileSync(join(ROOT, 'bench', 'engine.ts'), 'utf8')
  const http = readFileSync(join(ROOT, 'bench', 'http.ts'), 'utf8')
  const first = blockOf('Tests and benchmarks', 'mapper-service engine benchmark').code
  t.ok(engine.includes('mapper-service engine benchmark'), 'bench/engine.ts prints the title shown')
  for (const column of ['engine ops/s', 'jsonata ops/s', 'hand-written ops/s']) {
    t.ok(first.includes(column), `shown: ${column}`)
    t.ok(engine.includes(column), `printed: ${column}`)
  }
  for (const block of blocksNow().filter((block) => block.section === 'Tests and benchmarks' && block.first.startsWith('scenario '))) {
    for (const line of block.code.split('\n').filter((line) => line.includes('÷'))) {
      const label = line.split(':')[0]!.trim()
      t.ok(http.includes(label), `bench/http.ts prints "${label}"`)
    }
  }
})
