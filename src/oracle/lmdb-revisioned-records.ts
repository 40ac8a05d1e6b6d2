// Both threads: the LMDB implementation of RevisionedRecords for the oracle's plain record families
// (preferences, credits). The revision is kept inside the stored object as `_rev` so records written before
// revisions existed read as revision 0 and keep their shape. Each check and write is one LMDB transaction:
// serialised with every other writer of the environment, whatever thread it runs on.
import type { Database } from 'lmdb';
import { RevisionConflictError, type Revisioned, type RevisionedRecords } from './revisions.js';

type Stored<V> = V & { _rev?: number };

export function lmdbRevisionedRecords<K, V extends object>(db: Database<Stored<V>, string>, keyOf: (key: K) => string, what: string): RevisionedRecords<K, V> {
  const read = (key: string): Revisioned<V> | undefined => {
    const stored = db.get(key);
    if (stored === undefined) return undefined;
    const { _rev = 0, ...value } = stored;
    return { value: value as V, revision: _rev };
  };
  const write = (key: string, value: V, expected: number | undefined): Promise<number> =>
    db.transaction(() => {
      const current = read(key);
      if (current?.revision !== expected) throw new RevisionConflictError(what);
      const revision = (expected ?? 0) + 1;
      db.put(key, { ...value, _rev: revision });
      return revision;
    });
  return {
    get: async (key) => read(keyOf(key)),
    create: (key, value) => write(keyOf(key), value, undefined),
    update: (key, value, revision) => write(keyOf(key), value, revision),
  };
}
