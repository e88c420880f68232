// Lint and format with neostandard, the style the Fastify organisation uses: standard's rules, with
// typescript-eslint for the .ts files and @stylistic for formatting. One deliberate difference:
// named functions and methods take no space before their parameter list, as the code always had,
// and `void` may stand as a statement.
// `npm run lint` checks the whole tree; `npm run lint:fix` applies every fixable rule.
import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.tap/**'],
  }),
  {
    rules: {
      '@stylistic/space-before-function-paren': ['error', { anonymous: 'always', named: 'never', asyncArrow: 'always' }],
      // `void promise;` marks a promise deliberately not awaited (whose rejection is handled where it is made).
      'no-void': ['error', { allowAsStatement: true }],
    },
  },
]
