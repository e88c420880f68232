// Lint and format with neostandard, the style the Fastify organisation uses: standard's rules, with
// typescript-eslint for the .ts files and @stylistic for formatting. One deliberate difference:
// named functions and methods take no space before their parameter list, as the code always had,
// and `void` may stand as a statement.
// `npm run lint` checks the whole tree; `npm run lint:fix` applies every fixable rule.
import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.tap/**', 'playground/build/**'],
  }),
  {
    rules: {
      '@stylistic/space-before-function-paren': ['error', { anonymous: 'always', named: 'never', asyncArrow: 'always' }],
      // `void promise;` marks a promise deliberately not awaited (whose rejection is handled where it is made).
      'no-void': ['error', { allowAsStatement: true }],
    },
  },
  {
    // Shipped code spreads no array into an argument list: `push(...items)`, `Math.max(...values)`
    // and `new Set(...)` put every element on the stack, and an array a caller sized (an example's
    // expected output, a request's input) overflows it; a loop, `concat` or `reduce` does not. The
    // rule has no exceptions, small fixed arrays included; `f.apply(this, list)` is the same spread.
    // Tests and benchmarks may spread.
    ignores: ['test/**', 'bench/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'CallExpression > SpreadElement', message: 'No spread arguments in shipped code: an unbounded array overflows the stack (push(...x), Math.max(...x)). Use a loop, concat or reduce.' },
        { selector: 'NewExpression > SpreadElement', message: 'No spread arguments in shipped code: an unbounded array overflows the stack. Pass the array, or build it with a loop.' },
        { selector: "CallExpression[callee.property.name='apply']", message: 'No apply in shipped code: it spreads its array argument onto the stack as a spread argument does. Call the function, or use a loop.' },
      ],
    },
  },
]
