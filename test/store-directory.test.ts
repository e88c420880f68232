// The directory store (service/store/directory.ts) on its own: versions written whole or not at
// all, a process killed with SIGKILL in the middle of its writes leaves only complete versions
// (and the temporary files it left are removed at the next open), the state and history read
// back after a restart, pruning, a change that throws leaves nothing, writes one at a time.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { DirectoryStore, sha256 } from '../service/store/directory.js'
import { LOADER, ROOT, tempTree, untracked } from './startup-support.js'

const open = async (dir: string, keepVersions = 20): Promise<DirectoryStore> => {
  const store = new DirectoryStore(pathToFileURL(dir), { keepVersions })
  await store.open()
  return store
}

/** The text the writer below stores as version `version` of `id`: large enough that a write takes a while. */
const textOf = (id: string, version: number): string => JSON.stringify({ $id: id, description: `version ${version}`, mapping: { '/filler': { constant: 'x'.repeat(256 * 1024) } } })

t.test('versions, history, pruning and a restart', async (t) => {
  const dir = tempTree(t).root
  const store = await open(dir, 3)
  t.strictSame((await store.read()).documents.size, 0, 'empty at first')
  for (let i = 1; i <= 5; i++) await store.write((tx) => tx.put('a', `{"$id":"a","n":${i}}`, 'alice'))
  const { revision } = await store.write((tx) => tx.put('odd/id ü', '{"$id":"odd/id ü"}', null))
  t.equal(revision, 6, 'one revision per write')
  t.strictSame((await store.versions('a')).map((v) => v.version), [5, 4, 3], 'three versions kept, newest first')
  t.equal((await store.version('a', 4))?.text, '{"$id":"a","n":4}')
  t.equal(await store.version('a', 1), undefined, 'a pruned version is gone')
  await store.write((tx) => tx.delete('a', 'bob'))
  t.match(await store.versions('a'), [{ version: 6, deleted: true, digest: null, subject: 'bob' }, { version: 5, deleted: false, digest: sha256('{"$id":"a","n":5}'), subject: 'alice' }])
  await t.rejects(store.write(async (tx) => {
    await tx.put('b', '{"$id":"b"}', null)
    throw new Error('changed my mind')
  }), /changed my mind/, 'the change\'s own error')
  t.equal(await store.version('b', 1), undefined, 'a change that throws leaves nothing')
  await store.close()
  const again = await open(dir, 3)
  const state = await again.read()
  t.strictSame([...state.documents.keys()], ['odd/id ü'], 'after a restart: what is current, the deleted one not')
  t.equal(state.documents.get('odd/id ü')!.text, '{"$id":"odd/id ü"}')
  const next = await again.write((tx) => tx.put('a', '{"$id":"a"}', null))
  t.equal(next.result.version, 7, 'numbering goes on after a restart')
  const long = 'ü'.repeat(120)
  await again.write((tx) => tx.put(long, `{"$id":"${long}"}`, null))
  t.equal((await again.versions(long)).length, 1, 'an id too long for a file name is stored by its digest')
  await again.close()
})

t.test('writes are taken one at a time, each seeing the last', async (t) => {
  const store = await open(tempTree(t).root)
  const seen = await Promise.all(Array.from({ length: 10 }, (_, i) => store.write(async (tx) => {
    const size = tx.state.documents.size
    await tx.put(`m${i}`, '{}', null)
    return size
  })))
  t.strictSame(seen.map((s) => s.result), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
  await store.close()
})

t.test('SIGKILL in the middle of writes leaves only whole versions', async (t) => {
  const dir = tempTree(t).root
  // A process writing versions of three ids as fast as it can, saying each one it finished.
  const script = `
    const { DirectoryStore } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'service/store/directory.ts')).href)})
    const textOf = ${textOf.toString()}
    const store = new DirectoryStore(${JSON.stringify(pathToFileURL(dir).href)}, { keepVersions: 4 })
    await store.open()
    for (let n = 1; ; n++) {
      const id = 'm' + (n % 3)
      const { result } = await store.write((tx) => tx.put(id, textOf(id, (tx.state.documents.get(id)?.version ?? 0) + 1), null))
      process.stdout.write(id + ' ' + result.version + '\\n')
    }`
  let killedAfter = 0
  for (let round = 0; round < 3; round++) {
    const child = spawn(...untracked(process.execPath, ['--import', LOADER, '--input-type=module', '-e', script]), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let errors = ''
    child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()))
    // Killed after a different number of writes each round, whatever it is doing then.
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString()
        if (out.split('\n').length > 8 + round * 5) {
          child.kill('SIGKILL')
          resolve()
        }
      })
      child.on('exit', () => reject(new Error(`the writer ended by itself: ${errors}`)))
      setTimeout(() => reject(new Error(`the writer wrote too little in 30 s: ${out} ${errors}`)), 30000).unref()
    })
    await once(child, 'exit')
    killedAfter += out.split('\n').length - 1
    const store = await open(dir, 4)
    const state = await store.read()
    t.equal(state.documents.size, 3, `round ${round + 1}: every id is there`)
    for (const [id, stored] of state.documents) {
      t.equal(stored.text, textOf(id, stored.version), `round ${round + 1}: ${id} version ${stored.version} is whole`)
      for (const info of await store.versions(id)) t.equal((await store.version(id, info.version))?.text, textOf(id, info.version), `${id} version ${info.version} is whole`)
    }
    for (const name of readdirSync(dir)) t.strictSame(readdirSync(join(dir, name)).filter((file) => file.endsWith('.tmp')), [], 'no temporary file is left after an open')
    await store.close()
  }
  t.ok(killedAfter >= 24, `${killedAfter} writes finished across the rounds`)
})
