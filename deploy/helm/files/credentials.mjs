// The init container of the chart's pods when credentials are configured (redis.url, auth.secret
// or existingSecret): writes the options the service reads (OPTIONS_FILE) from the chart's
// options.json (a ConfigMap, no credentials in it) and the keys of the Secret — `redis-url` becomes
// options.rateLimit.redis (rate limiting on, the options' max and timeWindow kept), `auth-secret`
// options.auth.secret — so that no credential is ever in a ConfigMap. The output goes to a
// memory-backed emptyDir, readable by the service's user only.
//   node credentials.mjs <options.json> <directory of the Secret's keys> <output file>
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A key of the Secret as text, without a final line break (a file made with an editor has one); undefined when absent or empty. */
function credential(directory, key) {
  const path = join(directory, key)
  if (!existsSync(path)) return undefined
  const text = readFileSync(path, 'utf8').replace(/\r?\n$/, '')
  return text === '' ? undefined : text
}

function main([optionsFile, directory, output]) {
  if (output === undefined) throw new Error('usage: node credentials.mjs <options.json> <secret directory> <output file>')
  let options
  try {
    options = JSON.parse(readFileSync(optionsFile, 'utf8'))
  } catch (error) {
    throw new Error(`${optionsFile}: ${error.message}`)
  }
  if (!isObject(options)) throw new Error(`${optionsFile} must hold an object`)
  const applied = []
  const redis = credential(directory, 'redis-url')
  if (redis !== undefined) {
    options.rateLimit = { ...(isObject(options.rateLimit) ? options.rateLimit : {}), redis }
    applied.push('redis-url as rateLimit.redis')
  }
  const secret = credential(directory, 'auth-secret')
  if (secret !== undefined) {
    options.auth = { ...(isObject(options.auth) ? options.auth : {}), secret }
    applied.push('auth-secret as auth.secret')
  }
  writeFileSync(output, JSON.stringify(options), { mode: 0o600 })
  console.log(`${output}: the options of ${optionsFile}${applied.length === 0 ? `; no redis-url nor auth-secret in ${directory}` : `, with ${applied.join(' and ')}`}`)
}

try {
  main(process.argv.slice(2))
} catch (error) {
  // One line, which `kubectl logs <pod> -c options` shows.
  console.error(`options: ${error.message}`)
  process.exitCode = 1
}
