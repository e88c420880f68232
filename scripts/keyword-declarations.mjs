// After the declarations are built (npm run build): every keyword module adds its operand's type to
// `KeywordOperands` (engine/descriptor.ts) with a `declare module` block, so a keyword is one module
// and one entry in engine/keywords/index.ts. TypeScript's declaration output drops an import whose
// binding the declarations do not name, and the catalogue's declarations name none of its modules:
// a consumer's program would then never read their blocks. This keeps each of the catalogue's
// imports in its declarations as a side-effect import (`import './finalize/as.js';`).
// `node scripts/keyword-declarations.mjs [dist]`: the declarations under `dist` (default: ./dist).
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const catalogue = join(root, 'engine', 'keywords', 'index.ts')
// A tree without the engine's sources (a copy of the project made to test its packing) has no
// catalogue to keep; in this repository it is there, and every declaration it needs must be.
if (!existsSync(catalogue)) process.exit(0)
const source = readFileSync(catalogue, 'utf8')
const declarations = join(resolve(process.argv[2] ?? join(root, 'dist')), 'engine', 'keywords', 'index.d.ts')
const text = readFileSync(declarations, 'utf8')
const modules = [...source.matchAll(/^import \w+ from '(\.\/[\w-]+\/[\w-]+\.js)'$/gm)].map((match) => match[1])
if (modules.length === 0) throw new Error('keyword-declarations: no keyword module imports found in engine/keywords/index.ts')
const missing = modules.filter((path) => !text.includes(`import '${path}';`))
if (missing.length > 0) writeFileSync(declarations, `${missing.map((path) => `import '${path}';`).join('\n')}\n${text}`)
