#!/usr/bin/env node
// The mapper-service command. With no arguments it serves, configured by the environment
// (PORT, MAPPINGS, EXTENSIONS, OPTIONS / OPTIONS_FILE); a configuration that cannot start prints
// one line on stderr and exits 1. `validate` and `map` are in bin/commands.ts; `map --ndjson`
// streams, so it gets standard input and output as streams (and whether stderr is a terminal).
import { once } from 'node:events'
import { enableLinearRegExp } from '../engine/index.js'
import { runCommand } from './commands.js'

// This process is the service's own: patterns run on V8's linear-time engine (engine/linear-regexp.ts).
enableLinearRegExp()

const readStdin = async (): Promise<string> => {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

const code = await runCommand(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  stdin: readStdin,
  env: process.env,
  stdinStream: () => process.stdin,
  write: (text) => process.stdout.write(text),
  drain: async () => {
    await once(process.stdout, 'drain')
  },
  errIsTerminal: process.stderr.isTTY === true,
})
if (code !== undefined) {
  process.exitCode = code
} else {
  // The server is loaded only to serve: the commands need none of it (Fastify and every HTTP
  // module: half a command's start-up).
  const { startFromEnvironment, startupFailureLine } = await import('../server.js')
  try {
    await startFromEnvironment(process.env)
  } catch (error) {
    process.stderr.write(startupFailureLine(error))
    process.exit(1)
  }
}
