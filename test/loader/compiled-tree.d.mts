// Types of compiled-tree.mjs, for the TypeScript tests that use it (test/proc-compiled.ts).
export declare const ROOT: string
export declare const ESBUILD_VERSION: string
export declare function transformOptions(sourcemap: boolean): Record<string, unknown>
export declare function isShipped(relative: string): boolean
export declare function shippedSources(): Map<string, string>
export declare function compiledTree(
  name: string,
  options?: {
    salt?: string
    compile?: (path: string, text: string) => Promise<string>
    finish?: (folder: string) => Promise<void>
  }
): Promise<string>
