// The project as TypeScript sees it, built once per test process: test/typecheck.test.ts checks it
// and test/package-types.test.ts emits the shipped files' declarations from it, then compiles a
// consumer against them. Both run in the group `types` (test/groups/index.ts); parsing the project
// and node_modules' declarations, then checking every file, is most of their time, and the
// declarations need a checked program anyway (emit checks each file it writes, unless --noCheck).
// Run alone, either file builds it for itself.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, sep } from 'node:path'
import ts from 'typescript'
import { ROOT } from './startup-support.js'

/**
 * The declaration files of this tree's node_modules (@types/node, fastify, typebox, TypeScript's
 * lib files…), parsed and bound once for every program of the process: each program resolves its
 * links to the same real paths, and parses them alike where its target, module format and module
 * resolution are the same (the key holds the first two; every program here uses NodeNext), so a
 * consumer's compiler meets the very same files without parsing them again. A program's own files
 * and emitted declarations are never shared.
 */
const libraries = new Map<string, ts.SourceFile>()
const MODULES = join(ROOT, 'node_modules') + sep

export function sharingHost(options: ts.CompilerOptions): ts.CompilerHost {
  const host = ts.createCompilerHost(options)
  const read = host.getSourceFile.bind(host)
  host.getSourceFile = (fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile) => {
    if (!fileName.startsWith(MODULES) || !/\.d\.[cm]?ts$/.test(fileName)) return read(fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile)
    const parsing = typeof languageVersionOrOptions === 'object' ? languageVersionOrOptions : { languageVersion: languageVersionOrOptions }
    const key = `${fileName}\0${parsing.languageVersion}\0${parsing.impliedNodeFormat}`
    let file = libraries.get(key)
    if (file === undefined) {
      file = read(fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile)
      if (file !== undefined) libraries.set(key, file)
    }
    return file
  }
  return host
}

function parseConfig(name: string, overrides: ts.CompilerOptions): ts.ParsedCommandLine {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, name), overrides, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
    },
  })
  if (parsed === undefined) throw new Error(`${name} does not parse`)
  return parsed
}

export interface Project {
  /** tsconfig.json as `tsc -p tsconfig.json` reads it. */
  readonly config: ts.ParsedCommandLine
  /** Every source, test and benchmark file, under tsconfig.json's options. */
  readonly program: ts.Program
  /** The files `npm run build` compiles (tsconfig.build.json's), as absolute paths. */
  readonly shipped: ReadonlySet<string>
}

let project: Project | undefined

/**
 * tsconfig.json's program. Its options are `npm run typecheck`'s (which adds --noEmit) with emit
 * left on and source maps off, the build's: the diagnostics are the same, and the declarations it
 * emits for the shipped files are the build's (tsconfig.build.json extends tsconfig.json and
 * changes only `include` and those two options; a file's declarations depend on its own text and
 * the types it names, not on which other files are in the program).
 */
export function typescriptProject(): Project {
  if (project !== undefined) return project
  const config = parseConfig('tsconfig.json', { noEmit: false, sourceMap: false })
  const build = parseConfig('tsconfig.build.json', {})
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options, projectReferences: config.projectReferences, host: sharingHost(config.options) })
  project = { config, program, shipped: new Set(build.fileNames.map((name) => join(name))) }
  return project
}

/**
 * The shipped files' declarations, written under `outDir` as `npm run build` lays out dist/ (its
 * rootDir is the project's root). Returns how many files were written.
 */
export function emitDeclarations(outDir: string): number {
  const { program, shipped } = typescriptProject()
  const dist = join(ROOT, 'dist') + sep
  let written = 0
  for (const file of program.getSourceFiles()) {
    if (!shipped.has(join(file.fileName))) continue
    const result = program.emit(file, (name, text) => {
      if (!name.startsWith(dist)) throw new Error(`a declaration outside dist/: ${name}`)
      const path = join(outDir, name.slice(dist.length))
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, text)
      written++
    }, undefined, true)
    if (result.emitSkipped) throw new Error(`the declarations of ${file.fileName} were not emitted`)
  }
  return written
}
