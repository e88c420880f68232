// An unknown option fails the start naming itself and, for a misspelling (one edit away, two for a
// long name), the option it was likely meant to be, at any depth and inside the object choice of a
// union (`isolation: false | {…}`); a far-off name gets no suggestion. Through resolveConfig and
// the plugin form (buildServer); startup-failures.test.ts sees the same line from OPTIONS and
// OPTIONS_FILE through the real entry point.
import t from 'tap'
import { ConfigError, resolveConfig } from '../config/resolve.js'
import type { Options } from '../config/options-schema.js'
import { buildServer } from '../server.js'

/** The message resolveConfig refuses `options` with. */
function refusal(options: unknown): string {
  try {
    resolveConfig(options)
  } catch (error) {
    if (error instanceof ConfigError) return error.message
    throw error
  }
  throw new Error(`accepted: ${JSON.stringify(options)}`)
}

t.test('a one-letter misspelling is named with the option meant, at any depth', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ playgroud: true }, 'options.playgroud: not an option (did you mean options.playground?)'], // a deletion
    [{ playgrounds: true }, 'options.playgrounds: not an option (did you mean options.playground?)'], // an insertion
    [{ hots: '127.0.0.1' }, 'options.hots: not an option (did you mean options.host?)'], // a transposition
    [{ maxbodybytes: 5 }, 'options.maxbodybytes: not an option (did you mean options.maxBodyBytes?)'], // case alone
    [{ map: { explict: true } }, 'options.map.explict: not an option (did you mean options.map.explicit?)'],
    [{ map: { explicit: { cacheByte: 1 } } }, 'options.map.explicit.cacheByte: not an option (did you mean options.map.explicit.cacheBytes?)'],
    [{ auth: { secrte: 'x'.repeat(40) } }, 'options.auth.secrte: not an option (did you mean options.auth.secret?)'],
    [{ underPresure: false }, 'options.underPresure: not an option (did you mean options.underPressure?)'],
    // A union of false and an object: TypeBox says only that no choice fits; the key is found.
    [{ isolation: { thread: 2 } }, 'options.isolation.thread: not an option (did you mean options.isolation.threads?)'],
    [{ rateLimit: { maxx: 10 } }, 'options.rateLimit.maxx: not an option (did you mean options.rateLimit.max?)'],
  ]
  for (const [options, message] of cases) t.equal(refusal(options), message, JSON.stringify(options))
})

t.test('a far-off name is refused without a suggestion; other mistakes keep their messages', async (t) => {
  t.equal(refusal({ wibble: true }), 'options.wibble: not an option')
  t.equal(refusal({ map: { explanation: true } }), 'options.map.explanation: not an option')
  t.equal(refusal({ isolation: { workers: 2 } }), 'options.isolation.workers: not an option')
  t.equal(refusal({ logging: { format: 'jsno' } }), 'options.logging.format: must be one of "json", "pretty"', 'a wrong value is not an unknown option')
  t.equal(refusal({ playground: 'yes' }), 'options.playground: Expected boolean')
  // A claims object takes any claim name: none of its keys is an unknown option.
  t.match(refusal({ map: { claims: { rol: 'admin' } } }), /needs options\.auth/)
})

t.test('the plugin form (buildServer) refuses a misspelt option with the suggestion', async (t) => {
  // TypeScript refuses the key too; a JavaScript host or options read from a file meets the check.
  // @ts-expect-error a misspelt option
  const options: Options = { playgroud: true }
  await t.rejects(buildServer({ options, mappings: [] }), { name: 'ConfigError', message: 'options.playgroud: not an option (did you mean options.playground?)' })
})
