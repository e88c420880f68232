#!/usr/bin/env node
// The mapper-service command. With no arguments it serves, configured by the environment
// (PORT, MAPPINGS, EXTENSIONS, OPTIONS / OPTIONS_FILE); a configuration that cannot start prints
// one line on stderr and exits 1.
import { isStartupError, startFromEnvironment } from '../server.js'

try {
  await startFromEnvironment(process.env)
} catch (error) {
  if (isStartupError(error)) {
    process.stderr.write(`mapper-service: ${(error as Error).message}\n`)
  } else {
    process.stderr.write(`mapper-service: could not start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  }
  process.exit(1)
}
