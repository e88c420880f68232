// Watching a MAPPINGS source for changes (options.reload.watch). Each directory the source reads is
// watched on its own, not recursively: the top one sees files added, replaced or removed and a
// ConfigMap's `..data` link swapped (kubelet renames `..data_tmp` over it); each subdirectory the
// loader walks into sees its own files. Hidden directories are never walked, so a ConfigMap's
// `..<timestamp>` snapshots are not watched: the swap in the top directory stands for them.
import { watch, type FSWatcher } from 'node:fs'
import { mappingDirectories } from './mappings.js'

export interface MappingsWatch {
  /** Follow the directories as they are now: after a reload some may be new and some gone. */
  rearm(): Promise<void>
  close(): void
}

/** Errors that mean the directory went away between the listing and the watch. */
const GONE = new Set(['ENOENT', 'ENOTDIR'])

/**
 * Calls `onChange` once changes under `path` have been quiet for `debounceMs`. A directory that
 * cannot be watched for another reason (the system's limit of watches reached, no permission) is
 * reported once through `warn`: changes there then need SIGHUP.
 */
export function watchMappings(path: string, onChange: () => void, debounceMs: number, warn: (message: string) => void): MappingsWatch {
  const watchers = new Map<string, FSWatcher>()
  const reported = new Set<string>()
  let timer: NodeJS.Timeout | undefined
  let closed = false
  const changed = (): void => {
    clearTimeout(timer)
    if (!closed) timer = setTimeout(onChange, debounceMs)
  }
  return {
    async rearm() {
      let directories: string[]
      try {
        directories = await mappingDirectories(path)
      } catch {
        // The source is gone for now: the reload that follows says so; SIGHUP can bring it back.
        directories = []
      }
      if (closed) return
      for (const [directory, watcher] of watchers) {
        if (directories.includes(directory)) continue
        watcher.close()
        watchers.delete(directory)
      }
      for (const directory of directories) {
        if (watchers.has(directory)) continue
        try {
          const watcher = watch(directory, { persistent: false }, changed)
          // A directory removed under its watcher (an old snapshot, a deleted folder) ends it.
          watcher.on('error', () => {
            watcher.close()
            watchers.delete(directory)
            changed()
          })
          watchers.set(directory, watcher)
        } catch (error) {
          // Removed between the listing and the watch: its removal was seen in its parent.
          const code = (error as NodeJS.ErrnoException).code ?? ''
          if (GONE.has(code) || reported.has(directory)) continue
          reported.add(directory)
          warn(`reload.watch cannot watch ${directory} (${(error as Error).message}): changes there are reloaded by SIGHUP only`)
        }
      }
    },
    close() {
      closed = true
      clearTimeout(timer)
      for (const watcher of watchers.values()) watcher.close()
      watchers.clear()
    },
  }
}
