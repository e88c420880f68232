// V8's linear-time RegExp engine is the host's explicit choice (engine/linear-regexp.ts, issue 32):
// importing the engine changes no V8 switch; until the host turns the engine on, a pattern is
// refused with LinearEngineUnavailable (never run on the backtracking engine, never blamed on the
// document); enableLinearRegExp() turns it on and patterns run; the service turns it on itself.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { LOADER, untracked } from './startup-support.js'

const run = promisify(execFile)

// Run in a child without the switch (the test loader turns it on unless told not to).
const PROGRAM = `
const engine = await import(${JSON.stringify(new URL('../engine/index.ts', import.meta.url).href)})
const facts = {}
const flagOn = () => { try { new RegExp('', 'l'); return true } catch { return false } }
facts.afterImport = flagOn()
const mapper = new engine.Mapper({}, {})
const document = { mapping: { '/ok': { source: '/s', pattern: '^a+$' } } }
try { await mapper.map(document, { s: 'aaa' }); facts.before = 'ran' } catch (error) { facts.before = { name: error.name, message: error.message, document: error instanceof engine.DocumentError } }
try { facts.validateBefore = (await mapper.validate(document)).valid } catch (error) { facts.validateBefore = error.name }
facts.enabled = engine.enableLinearRegExp()
facts.after = await mapper.map(document, { s: 'aaa' })
facts.mismatch = await mapper.map(document, { s: 'b' }).then(() => 'ran', (error) => error.name)
facts.nonLinear = (await mapper.validate({ mapping: { '/x': { source: '/s', pattern: '(a)\\\\1' } } })).errors.map((e) => e.rule)
facts.again = engine.enableLinearRegExp()
console.log(JSON.stringify(facts))
`

t.test('without the switch a pattern is refused as the host\'s error; enableLinearRegExp() turns the engine on', async (t) => {
  const [command, args] = untracked(process.execPath, ['--import', LOADER, '--input-type=module', '--eval', PROGRAM])
  const { stdout } = await run(command, args, { env: { ...process.env, MAPPER_LINEAR_REGEXP: 'off' }, timeout: 60_000 })
  const facts = JSON.parse(stdout) as Record<string, unknown>
  t.equal(facts.afterImport, false, 'importing the engine leaves V8\'s switches alone')
  t.match(facts.before, { name: 'LinearEngineUnavailable', message: /enableLinearRegExp\(\)/, document: false }, 'a pattern before the switch: the host\'s error, naming the call that fixes it')
  t.equal(facts.validateBefore, 'LinearEngineUnavailable', 'validation does not report the host\'s setup as a document error either')
  t.equal(facts.enabled, true, 'enableLinearRegExp() answers that the engine is on')
  t.match(facts.after, { ok: 'aaa' }, 'after it, the pattern runs')
  t.not(facts.mismatch, 'LinearEngineUnavailable', 'a value the pattern refuses is judged by the pattern')
  t.ok((facts.nonLinear as string[]).includes('KW-pattern-1'), 'a backreference is still refused as not linear')
  t.equal(facts.again, true, 'a second call changes nothing')
})

// The service, started in a process where nothing turned the switch on, turns it on itself.
const SERVICE = `
const { buildServer } = await import(${JSON.stringify(new URL('../server.ts', import.meta.url).href)})
const flagOn = () => { try { new RegExp('', 'l'); return true } catch { return false } }
const before = flagOn()
const app = await buildServer({ mappings: [{ $id: 'digits', mapping: { '/ok': { source: '/s', pattern: '^[0-9]+$' } } }], options: { logging: { level: 'silent' }, isolation: false } })
const answer = await app.inject({ method: 'POST', url: '/map', payload: { mapping: 'digits', input: { s: '123' } } })
await app.close()
console.log(JSON.stringify({ before, after: flagOn(), status: answer.statusCode, body: answer.json() }))
`

t.test('the service turns the linear engine on for its own process', async (t) => {
  const [command, args] = untracked(process.execPath, ['--import', LOADER, '--input-type=module', '--eval', SERVICE])
  const { stdout } = await run(command, args, { env: { ...process.env, MAPPER_LINEAR_REGEXP: 'off' }, timeout: 60_000 })
  const facts = JSON.parse(stdout) as Record<string, unknown>
  t.equal(facts.before, false, 'nothing turned it on before the service was built')
  t.equal(facts.after, true, 'building the service turned it on')
  t.match(facts, { status: 200, body: { ok: '123' } }, 'a registered mapping with a pattern answers')
})
